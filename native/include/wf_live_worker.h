/* wf_live_worker.h — internal: a live stress run's workers, their per-thread sampling buffers
 * and the checks of one sample (live_run.c, live_sampler.c, live_check.c). Not cffi-visible.
 *
 * Everything a signal handler touches is preallocated here, per worker: the shadow snapshot,
 * the walk buffer, the statistics, the kept examples and the interval/latency arrays.
 */
#ifndef WALKFUZZ_WF_LIVE_WORKER_H
#define WALKFUZZ_WF_LIVE_WORKER_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "asgst.h"
#include "wf_guard.h"
#include "wf_live.h"
#include "wf_live_capture.h"
#include "wf_live_pace.h"
#include "wf_live_vm.h"
#include "wf_walker.h"

/* Frames kept per walk; more = a cycle (overflow). Above WF_WALK_MAX_DEPTH: a walk that stops
   at the depth limit is kept whole, and so is a walker's that walks a few frames too far. */
#define WF_LIVE_WALK_MAX (WF_WALK_MAX_DEPTH + 256)
#define WF_LIVE_END_OVERFLOW 1               /* wf_live_walk.end when the buffer filled up */
#define WF_LIVE_STACK_SIZE (4 * 1024 * 1024) /* the recursive workload touches about 520 KiB */
#define WF_LIVE_CAPTURE_RING 8     /* captures a worker holds until the drain takes them */
#define WF_LIVE_CAPTURES_PER_KEY 4 /* captures per signature key and worker */
/* Captures per signature key and worker of a stack deeper than WF_LIVE_CAPTURE_STACK, each
   into one of the worker's WF_LIVE_DEEP_BUFFERS deep buffers: one, so the buffers stay free for
   rarer keys (the keys that fail past the depth limit come together: extra and wrong-result,
   at compiled and at native frames). */
#define WF_LIVE_DEEP_CAPTURES_PER_KEY 1
#define WF_LIVE_DEEP_BUFFERS 4
#define WF_LIVE_SIGNATURE_KEYS 32 /* signature keys counted per worker; more: capture_dropped */

enum wf_live_phase { WF_LIVE_STARTING, WF_LIVE_BASELINE, WF_LIVE_SAMPLING, WF_LIVE_STOPPING };

/* Thread-mode handshake states (futex word). */
enum wf_live_handshake { WF_LIVE_HS_IDLE, WF_LIVE_HS_READY, WF_LIVE_HS_DONE, WF_LIVE_HS_CANCELLED };

/* The shadow stack as a handler copied it; after wf_live_expect (and wf_live_expect_depth)
   the trace expected of the walk, ending with `end`. Its frames live with its owner: a
   worker's hold WF_LIVE_SHADOW_MAX, a queue slot's WF_LIVE_QUEUED_SHADOW_MAX. */
struct wf_live_snapshot {
    uint32_t depth;
    int32_t end;  /* ASGST_NO_FRAME, or ASGST_WF_DEPTH_LIMIT: the frames past it are cut */
    uint32_t cap; /* frames[] holds this many */
    struct wf_live_shadow *frames; /* outermost first */
};

/* Frames a queue slot's snapshot holds: the workloads queue mode runs stay under it (the
   recursive one, the only deeper, is refused there), and 64 slots a worker stay small. */
#define WF_LIVE_QUEUED_SHADOW_MAX 480

/* A thread as a capture saw it: registers, VM thread record, and its stack from `base` up. */
struct wf_live_regs {
    uint64_t pc, sp, fp;
    uint32_t state, flags;
    uint64_t anchor_sp, anchor_fp, anchor_pc;
    uint64_t stack_lo, stack_hi; /* the live stack */
    uint64_t base;               /* address of stack[0] */
    uint32_t bytes;              /* copied: [base, base + bytes) */
    uint32_t dropped;            /* bytes between base + bytes and the worker's C base left out
                                    by the bound (the stack above the C base: the worker's) */
};

struct wf_live_stack_capture {
    struct wf_live_regs r;
    uint32_t deep; /* k > 0: the copy is in the worker's deep buffer k - 1
                      (wf_live_worker.deep_stack), which this capture holds until the drain
                      laid it out; 0: in stack[] */
    uint8_t stack[WF_LIVE_CAPTURE_STACK];
};

/* Where and when a sample was taken, and the trace expected of it (the shadow stack copied
   then, after wf_live_expect). */
struct wf_live_sample_info {
    uint64_t pc, sp, fp, t0;
    uint32_t window; /* wf_live_window_kind of pc */
    uint32_t state;  /* the VM thread's state */
    uint32_t source; /* wf_expected_source: which walk of the sample is judged */
    const struct wf_live_snapshot *snap;
    const struct wf_live_stack_capture *signal; /* queue: the thread at the signal (NULL:
                                                   capture it now, it is still there) */
};

/* One failed sample, captured for the drain (wf_live_capture.h). */
struct wf_live_capture {
    int32_t cls; /* WF_LIVE_CLS_*, -1 fault, -2 hang */
    int32_t first_diff;
    uint32_t window, source;
    uint64_t t_ns; /* the sample's time (CLOCK_MONOTONIC) */
    int32_t run_result, end, state_after;
    uint32_t walked_count; /* frames walked; walked[] has the first WF_LIVE_WALK_MAX */
    uint32_t expected_count;
    int32_t expected_end;
    int faulted;
    wf_fault fault;
    uint64_t poll_sp, poll_fp, poll_pc; /* ELEMENT: the safepoint's frame */
    wf_live_frame walked[WF_LIVE_WALK_MAX];
    wf_live_frame expected[WF_LIVE_SHADOW_MAX];
    struct wf_live_stack_capture signal;
    struct wf_live_stack_capture safepoint; /* ELEMENT: the thread at the safepoint */
};

/* Failed samples counted per signature key: the class, the shape's last frame kind and, for a
   fault, its pc (the Python side turns a key into a finding signature). */
struct wf_live_sigkey {
    int32_t cls;
    uint32_t tail; /* wf_shape_kind, 0 for an empty walk */
    uint64_t fault_pc;
    volatile uint64_t count, first_ns, last_ns;
    uint32_t captured;
};

/* What one walk returned. */
struct wf_live_walk {
    int32_t run_result;  /* RunWithIterator's return */
    int32_t end;         /* NextFrame's end code, or WF_LIVE_END_OVERFLOW */
    int32_t state_after; /* ASGST_State after the end */
    uint32_t count;
    ASGST_Frame frames[WF_LIVE_WALK_MAX];
};

enum wf_live_outcome { WF_LIVE_EXACT, WF_LIVE_INVALID };

struct wf_live_verdict {
    int outcome;    /* wf_live_outcome */
    int cls;        /* WF_LIVE_CLS_* when invalid */
    int first_diff; /* first differing frame (innermost = 0), -1 if none */
};

/* Queue mode: the queue's accounting as asgst.h's queue block defines it, kept by the worker
   next to its own calls (live_queue_accounting.c); every GetQueueSizeInfo must agree. The
   model is the walker's figures at one look (the base) and the call counts that look
   included: the figures now are the base plus what the calls since did. */
struct wf_live_queue_model {
    int32_t size, capacity, attempts; /* the base: the walker's figures at the last look ... */
    uint32_t base_calls, base_taken, base_faults; /* ... and the counts below then */
    int32_t pending;                   /* the capacity a ResizeQueue asked for; -1: none */
    volatile uint32_t calls;           /* Enqueue calls so far (handlers only write these) */
    volatile uint32_t taken;           /* ... that returned ASGST_JAVA_TRACE */
    volatile uint32_t faults;          /* ... that faulted: the walker's figures are unknown */
    volatile uint32_t in_safepoint;    /* the worker looks around a safepoint: handlers count,
                                          they do not compare */
    uint32_t start_calls, start_taken; /* the counts at the look before the running safepoint */
    uint32_t safepoints;
    int32_t last_result; /* the walker's last safepoint call returned this */
    uint32_t event_next; /* events[event_next % WF_LIVE_QUEUE_EVENTS] is next */
    int64_t events[WF_LIVE_QUEUE_EVENTS][WF_LIVE_QUEUE_EVENT_FIELDS];
};

struct wf_live_worker {
    struct wf_live_thread jt; /* r15 while it runs Java code */
    struct wf_vm_thread *vm;
    int index;
    pid_t tid;
    pthread_t pthread;
    clockid_t cpu_clock;
    timer_t timer;
    int has_timer;
    void *stack;               /* mmap'ed: guard page + WF_LIVE_STACK_SIZE */
    volatile int start_failed; /* queue mode: RegisterQueue returned NULL */
    volatile uint64_t iterations;
    uint64_t last_sample_ns;
    wf_live_pace pace;          /* of its timer, or of the ticker's signals (signal, queue mode) */
    volatile uint64_t answered; /* signal, queue mode: handlers done while sampling (the
                                   ticker sends the next signal once the last is answered) */
    uint64_t samples;
    wf_live_stats st;
    uint32_t *intervals, *latencies, *waits; /* waits: queue mode only */
    uint64_t interval_count, latency_count, wait_count;
    struct wf_live_snapshot snap;
    struct wf_live_shadow snap_frames[WF_LIVE_SHADOW_MAX]; /* snap's */
    struct wf_live_walk walk;
    struct wf_live_capture *ring; /* WF_LIVE_CAPTURE_RING entries: the handler fills, the drain
                                     empties (single producer, single consumer) */
    uint64_t c_base;              /* the worker loop's frame: above it, C frames and TLS that
                                     stay as they are while the worker runs Java code */
    uint8_t *c_top;               /* [c_base, stack_hi) copied once, when the worker started */
    uint32_t c_top_bytes;
    /* WF_LIVE_DEEP_STACK bytes each: captures of stacks deeper than WF_LIVE_CAPTURE_STACK
       (recursive workload only); a ring entry holds deep_stack[k] while deep_busy[k] (the
       handler sets it, the drain clears it once it laid that entry out) */
    uint8_t *deep_stack[WF_LIVE_DEEP_BUFFERS];
    volatile uint32_t deep_busy[WF_LIVE_DEEP_BUFFERS];
    uint64_t capture_ticks; /* TSC ticks spent capturing (-> st.capture_ns at the end) */
    volatile uint32_t ring_head, ring_tail;
    volatile uint32_t capturing; /* a capture runs on this thread (a nested one drops) */
    volatile uint32_t key_count;
    struct wf_live_sigkey keys[WF_LIVE_SIGNATURE_KEYS];
    volatile uint32_t handshake;       /* thread mode: wf_live_handshake */
    volatile uint32_t worker_sleeping; /* thread mode: waits on `handshake` in the futex */
    int last_cpu; /* thread mode: the CPU its handler last ran on, -1 unknown */
    void *handshake_uc;
    ASGST_Queue *queue;            /* queue mode: this worker's safepoint queue */
    struct wf_live_queued *queued; /* run->queue_slots slots: what each element was at the
                                      signal */
    uint32_t queued_next;
    int32_t queue_current;              /* the slot whose element is being walked, -1 none */
    uint64_t poll_sp, poll_fp, poll_pc; /* the frame the running safepoint was given */
    struct wf_live_queue_model qm;      /* queue mode: what GetQueueSizeInfo must say */
};

/* Queue mode: a worker's queue holds what arrives at the run's interval in
   WF_LIVE_QUEUE_WAIT_NS (a worker's safepoint may come that late), at least
   WF_LIVE_QUEUE_CAPACITY and at most WF_LIVE_QUEUE_MAX_CAPACITY elements; it has twice as many
   slots (the sample behind one element; its index is the element's arg), since the elements
   Enqueued while a safepoint runs hold theirs until the next one. A slot is about 72 KiB (its
   stack capture): 512 slots, the most, are 37 MiB a worker. */
#define WF_LIVE_QUEUE_CAPACITY 32
#define WF_LIVE_QUEUE_MAX_CAPACITY 256
#define WF_LIVE_QUEUE_WAIT_NS 1000000ull
struct wf_live_queued {
    volatile uint32_t busy; /* enqueued, not processed yet */
    struct wf_live_sample_info at;
    struct wf_live_snapshot snap;
    struct wf_live_shadow frames[WF_LIVE_QUEUED_SHADOW_MAX]; /* snap's */
    struct wf_live_stack_capture signal; /* with capture on: the thread at the signal */
};

/* The queue API of the run's walker (the reference's, or a library's by dlsym). */
struct wf_live_queue_api {
    ASGST_Queue *(*register_queue)(void *env, int size, int options, ASGST_Handler fun, void *arg);
    int (*deregister_queue)(void *env, ASGST_Queue *queue);
    int (*enqueue)(ASGST_Queue *queue, void *ucontext, void *arg);
    int (*safepoint)(uintptr_t sp, uintptr_t fp, uintptr_t pc); /* wf_queue_safepoint */
    void (*resize)(ASGST_Queue *queue, int size);
    ASGST_QueueSizeInfo (*size_info)(ASGST_Queue *queue);
};

struct wf_live_run;

/* What the SIGPROF handler, a safepoint and the start of a sampled round do for the run's mode
   and signal source, chosen by live_run.c: the sampler (live_sampler.c) calls the modes
   (live_sampler_thread.c, live_queue.c) and the ticker (live_ticker.c) through these, and they
   call the sampler, so the calls go one way. */
struct wf_live_mode_hooks {
    /* the handler's whole work (thread mode: wait while the sampler thread walks), or NULL */
    void (*handler)(struct wf_live_worker *w, void *uc);
    /* the sample the handler takes in the sampled phase; NULL: walk here, on this thread */
    void (*sample)(struct wf_live_worker *w, void *uc, uint64_t t0);
    /* at a safepoint poll, or NULL */
    void (*safepoint)(struct wf_live_worker *w);
    /* start the signals of a sampled round (0, or -1 with err); NULL: a timer per worker */
    int (*start)(struct wf_live_run *run, char *err, size_t errlen);
};

/* The run (one per process). */
struct wf_live_run {
    wf_live_config cfg;
    const wf_walker *api;
    wf_walker loaded;
    volatile int phase;
    struct wf_live_vm vm;
    struct wf_live_method methods[WF_LIVE_MAX_METHODS];
    struct wf_live_worker *workers;
    int worker_count;
    pthread_t sampler;
    int has_sampler;
    volatile uint32_t doorbell;         /* thread mode: bumped by each worker that is READY */
    volatile uint32_t sampler_sleeping; /* thread mode: the sampler waits on `doorbell` */
    int sampler_cpu;                    /* thread mode: the CPU it last ran on, -1 unknown */
    struct wf_live_queue_api queue;     /* queue mode */
    int32_t queue_capacity;             /* queue mode: each worker's queue, sized for the rate */
    uint32_t queue_slots;               /* ... and its slots: twice as many */
    volatile int stop_requested;        /* end the phases now (stop_on_first, an interrupt) */
    uint64_t tsc0, ns0;                 /* TSC and CLOCK_MONOTONIC at the start: capture timing */
    struct wf_live_mode_hooks hooks;
};

/* The run in progress (live_current.c, with wf_live_now_ns: what every live file reads). */
extern struct wf_live_run wf_live_current_run;

/* Check one walk against the trace expected when it was taken (a snapshot after
   wf_live_expect): exact, or invalid with its class. Async-signal-safe. */
void wf_live_check(const struct wf_live_snapshot *expected, const struct wf_live_walk *walk,
                   struct wf_live_verdict *v);
/* Turn a shadow snapshot into the trace a correct walker gives for a sample whose pc lies in
   transition window `window` of ucontext uc (wf_live_vm.h: the shadow is one step off there).
   Async-signal-safe. */
void wf_live_expect(struct wf_live_snapshot *snap, uint32_t window, const void *uc);
/* The physical frames a walk of the recursive workload's expected trace s decodes, starting
   at start_pc; *kept: how many of s's frames lie within the first WF_WALK_MAX_DEPTH of them
   (live_depth.c). Async-signal-safe. */
uint32_t wf_live_physical_frames(const struct wf_live_snapshot *s, uintptr_t start_pc,
                                 uint32_t *kept);
/* Cut the recursive workload's expected trace s at the depth limit: a walker of a thread in
   `state`, interrupted at pc, decodes at most WF_WALK_MAX_DEPTH physical frames and ends with
   ASGST_WF_DEPTH_LIMIT if there are more. Async-signal-safe. */
void wf_live_expect_depth(struct wf_live_snapshot *s, uint32_t state,
                          const struct wf_vm_anchor *anchor, uintptr_t pc);

/* Copy the worker's shadow stack. Async-signal-safe. */
void wf_live_snapshot_take(const struct wf_live_thread *t, struct wf_live_snapshot *snap);

/* Count a failed sample (invalid class cls, -1 fault, -2 hang) under its signature key and
   capture it into the ring if there is room (live_capture.c). Async-signal-safe. */
void wf_live_capture_keep(struct wf_live_worker *w, const struct wf_live_sample_info *at, int cls,
                          int first_diff, const wf_fault *fault);
/* Count one capture of `ticks` TSC ticks in the worker's statistics. Async-signal-safe. */
void wf_live_capture_timed(struct wf_live_worker *w, uint64_t ticks);
/* Copy the thread's registers pc/sp/fp, VM record and stack from `from` up into d; the bytes
   count in the worker's statistics. Async-signal-safe. */
void wf_live_capture_stack(struct wf_live_worker *w, struct wf_live_stack_capture *d, uint64_t pc,
                           uint64_t sp, uint64_t fp, uint64_t from);
/* Write every page of [p, p + n) so that a handler writing there takes no page fault (a
   first touch costs microseconds on a virtual machine). Not signal-safe. */
void wf_live_prefault(void *p, size_t n);
/* Allocate a worker's capture ring (not in a handler). 0, or -1 out of memory. */
int wf_live_capture_init(struct wf_live_worker *w);
/* On the worker's thread, before it enters Java: copy its stack from `base` (its loop's frame)
   to the top once; captures copy only below it. Not signal-safe. */
void wf_live_capture_c_top(struct wf_live_worker *w, uint64_t base);

/* Walk `uc` with options inside the guard, check it, record statistics and an example.
   `t0` is the sample's start (ns). Async-signal-safe. */
void wf_live_sample(struct wf_live_worker *w, void *uc, int32_t options, uint64_t t0);
/* Judge w->walk (or the fault) against at->snap; statistics, example, latency since at->t0.
   Async-signal-safe. */
void wf_live_judge(struct wf_live_worker *w, const struct wf_live_sample_info *at,
                   const wf_fault *fault);
/* Fill `at` for a sample of ucontext uc and turn `snap`, the shadow copied for it, into the
   trace expected of the walk (wf_live_expect). Async-signal-safe. */
void wf_live_info(struct wf_live_sample_info *at, const struct wf_live_worker *w,
                  struct wf_live_snapshot *snap, const void *uc, uint64_t t0);
/* Empty a walk buffer; run_result as given. Async-signal-safe. */
void wf_live_walk_reset(struct wf_live_walk *walk, int32_t run_result);
/* Drain iterator `it` into `out` with the run's walker. Async-signal-safe. */
void wf_live_collect(ASGST_Iterator *it, struct wf_live_walk *out);
/* Keep one value of a worker's interval, latency or wait record (up to record_cap).
   Async-signal-safe. */
void wf_live_record(uint32_t *values, uint64_t *count, uint64_t ns);
/* Record one handler entry (interval since the previous one). Async-signal-safe. */
void wf_live_note_delivery(struct wf_live_worker *w, uint64_t t0);

/* Monotonic time in ns. Async-signal-safe. */
uint64_t wf_live_now_ns(void);
/* The TSC: what captures are timed with (two clock_gettime calls would cost more than most
   captures on a virtual machine). Async-signal-safe. */
static inline uint64_t wf_live_ticks(void) { return __builtin_ia32_rdtsc(); }

/* Make the calling thread the sampled worker w (NULL: none) for the SIGPROF handler. */
void wf_live_worker_bind(struct wf_live_worker *w);
/* Set up the crash guard on the calling thread (outside any handler) and its walk budget. */
void wf_live_guard_prepare(uint64_t budget_ns);

/* Install the SIGPROF handler; start sampling (timers or the sampler thread); stop it.
   Not signal-safe. */
int wf_live_sampler_install(char *err, size_t errlen);
int wf_live_sampler_start(struct wf_live_run *run, char *err, size_t errlen);
void wf_live_sampler_stop(struct wf_live_run *run);
/* Thread mode (live_sampler_thread.c): start the sampler thread (0, or -1 with err); a
   worker's handler waits while the sampler walks it. The latter is Async-signal-safe. */
int wf_live_sampler_thread_start(struct wf_live_run *run, char *err, size_t errlen);
/* Signal and queue mode with WF_LIVE_SOURCE_SAMPLER (live_ticker.c): start the thread that
   tgkills each worker every interval, paced by its handlers (0, or -1 with err). */
int wf_live_ticker_start(struct wf_live_run *run, char *err, size_t errlen);
void wf_live_wait_for_sampler(struct wf_live_worker *w, void *uc);
/* Queue mode (live_queue.c): bind the walker's queue API (0, or -1 with err naming what is
   missing); register / drop a worker's queue on its own thread; the handler's enqueue
   (Async-signal-safe); processing at a safepoint poll. */
int wf_live_queue_bind(struct wf_live_run *run, char *err, size_t errlen);
int wf_live_queue_register(struct wf_live_worker *w);
void wf_live_queue_deregister(struct wf_live_worker *w);
void wf_live_queue_sample(struct wf_live_worker *w, void *uc, uint64_t t0);
void wf_live_queue_safepoint(struct wf_live_worker *w);
/* Queue mode's accounting (live_queue_accounting.c): start the model at the registered
   capacity; count one Enqueue call and its result, in the handler that made it (faulted:
   the walker's figures are unknown until the next check); check the figures before a
   safepoint (and request a resize now and then) and after it; note the safepoint call's
   result between the two. The first two are Async-signal-safe. */
void wf_live_queue_model_start(struct wf_live_worker *w, int32_t capacity);
void wf_live_queue_count_enqueue(struct wf_live_worker *w, int faulted, intptr_t rc);
void wf_live_queue_check_before(struct wf_live_worker *w);
void wf_live_queue_check_after(struct wf_live_worker *w, int faulted);
/* The walker's safepoint call returned `processed` (faulted: it was unwound). */
void wf_live_queue_note_safepoint(struct wf_live_worker *w, int faulted, intptr_t processed);

/* The C function the safepoint stub calls. */
void wf_live_safepoint(struct wf_live_thread *t, const struct wf_live_method *unused);

#endif /* WALKFUZZ_WF_LIVE_WORKER_H */
