/* wf_queue_walk.h — internal: what the safepoint queue (native/walkers/reference/ref_queue.c) needs
 * from the reference walker (ref_walker.c): its iterator, started at an element, and its blob
 * lookup. Not part of the ASGST API and not cffi-visible.
 *
 * A queue element is a physical frame recorded in a signal handler, with the word holding its
 * return address (wf_ref_return_slot), which tells at the safepoint whether the frame is
 * still there; the walk then resumes there. Two things differ from
 * ASGST_RunWithIteratorFromFrame:
 *  - an interpreted frame's bcp slot moves on after the signal (the thread kept running to
 *    its poll), so the element carries the method and bcp seen at enqueue time and the first
 *    frame reports those instead of its slots (the same validity checks apply to them);
 *  - the thread is at its own safepoint, so no thread-state checks apply; and an element whose
 *    frame is gone gets an iterator that only ever returns that error.
 */
#ifndef WALKFUZZ_WF_QUEUE_WALK_H
#define WALKFUZZ_WF_QUEUE_WALK_H

#include <stdint.h>

#include "asgst.h"
#include "wf_vm.h"

typedef struct wf_walk_start {
    uintptr_t sp, fp, pc; /* the first physical frame */
    uintptr_t top_method; /* != 0: first frame, if interpreted, uses this method handle ... */
    uintptr_t top_bcp;    /* ... and this bcp instead of its [fp-8] and [fp-16] slots */
    int32_t error;        /* != 0: the iterator is born ended with this code (sticky) */
} wf_walk_start;

/* The blob holding pc, or NULL: the walker's own segment map lookup (wf_vm.h). The VM must
   be mapped. Async-signal-safe. */
const struct wf_vm_blob *wf_ref_find_blob(uintptr_t pc);
/* Address of the return-address word of the iterator's current physical frame (the one the
   last NextFrame emitted), 0 before the first. Unchecked: read it with the stack bounds.
   Async-signal-safe. */
uintptr_t wf_ref_return_slot(const ASGST_Iterator *it);
/* Create an iterator at start on thread t, call fun(iterator, arg). Async-signal-safe. */
void wf_ref_run_at(const struct wf_vm_thread *t, const wf_walk_start *start, int32_t options,
                   ASGST_IteratorHandler fun, void *arg);

#endif /* WALKFUZZ_WF_QUEUE_WALK_H */
