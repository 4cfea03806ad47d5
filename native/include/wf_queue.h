/* wf_queue.h — the VM side of the safepoint queue API: what the simulated VM calls at a safepoint
 * poll and at thread exit, and counters for stress runs. The ASGST_* queue functions themselves are
 * declared in asgst.h; their rules, and the decisions this implementation takes, are in asgst.h's
 * queue block and docs/queue.md.
 *
 * How Enqueue stays async-signal-safe: every queue is a slot of a static pool (a handle stays
 * readable after DeregisterQueue, so a stale one is detected, not dereferenced into freed
 * memory) owning a ring of `capacity` slots malloc'ed by RegisterQueue or by the safepoint
 * that applies a resize — never by Enqueue. The ring has one writer at a time: the owner
 * thread's signal handler (Enqueue) or, while that thread runs its safepoint, the safepoint
 * (which makes Enqueue reject, so the two never interleave). Publication is "write the slot,
 * compiler fence, bump size"; no lock, no syscall, no allocation, initial-exec TLS only.
 */
#ifndef WALKFUZZ_WF_QUEUE_H
#define WALKFUZZ_WF_QUEUE_H

#include <stdint.h>

#include "asgst.h"

/* cffi:begin */
#define WF_QUEUE_MAX_QUEUES 1024    /* live queues per process */
#define WF_QUEUE_MAX_CAPACITY 65536 /* elements per queue */
/* Callers of an element whose words are checked at the safepoint (interpreted, stub, wrapper,
   entry). */
#define WF_QUEUE_MAX_CHECKED_CALLERS 4

typedef struct wf_queue_counters { /* cumulative since RegisterQueue, never reset */
    uint64_t attempts;             /* Enqueue calls on the live queue */
    uint64_t enqueued;             /* ... that returned 1 */
    uint64_t full;                 /* ... ASGST_ENQUEUE_FULL_QUEUE */
    uint64_t other;       /* ... ASGST_ENQUEUE_OTHER_ERROR (foreign thread, in a safepoint) */
    uint64_t walk_failed; /* ... a walk error or no top Java frame */
    uint64_t processed;   /* elements handed to the handler at safepoints */
    uint64_t gone;        /* ... of which the frame had left the stack */
    uint64_t dropped;     /* elements discarded by DeregisterQueue or thread exit */
    uint64_t safepoints;  /* safepoints that ran this queue */
} wf_queue_counters;

/* Run the calling thread's queues at a safepoint whose top Java frame is (sp, fp, pc) on the
   mapped VM thread (asgst.h queue block). Returns the elements processed, -1 if the thread
   is already inside a safepoint (nothing done). Not signal-safe: handlers may allocate. */
int wf_queue_safepoint(uintptr_t sp, uintptr_t fp, uintptr_t pc);
/* Thread exit: discard every queue of the calling thread (pending elements dropped, no
   handler called); RegisterQueue on it returns NULL until wf_queue_thread_reset. Returns the
   queues discarded, -1 inside a safepoint. Not signal-safe. */
int wf_queue_thread_exit(void);
/* Discard the calling thread's queues and forget its exit and any safepoint it is still in:
   the VM calls it between cases, outside its polls, so a safepoint it finds is one a fault
   (the guard's siglongjmp out of a handler or a walk) abandoned. Not signal-safe. */
void wf_queue_thread_reset(void);
/* Cumulative counters of a queue handle, live or deregistered (zeros if it is no handle).
   Async-signal-safe. */
void wf_queue_get_counters(ASGST_Queue *queue, wf_queue_counters *out);
/* cffi:end */

#endif /* WALKFUZZ_WF_QUEUE_H */
