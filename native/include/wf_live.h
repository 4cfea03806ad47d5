/* wf_live.h — live stress of a walker on the live simulated VM (wf_live_vm.h): worker threads
 * run generated Java code, a sampler stops them every interval, the walker walks, and each
 * trace is checked against the thread's shadow stack. One run per process (it owns the fixed
 * VM address space and SIGPROF); walkfuzz runs it in a child process (fuzz/targets/minivm/stress/).
 *
 * Modes:
 *   SIGNAL  per-thread POSIX timers (timer_create, SIGEV_THREAD_ID, CLOCK_MONOTONIC); the
 *           SIGPROF handler walks its own thread: ASGST_RunWithIterator(uc, WALK_SAME_THREAD)
 *   THREAD  a sampler thread tgkills each worker in turn; the worker's handler marks itself
 *           SUSPENDED and waits on a futex while the sampler walks it with
 *           ASGST_RunWithIterator(its ucontext, 0)
 *   QUEUE   the handler enqueues (ASGST_Enqueue) and requests a safepoint; the walk happens at
 *           the worker's next poll. Needs ASGST_REGISTER_QUEUE in ASGST_Capabilities().
 *
 * Every walk runs inside wf_guard_call. Handlers use preallocated per-thread buffers only: no
 * malloc, no locks, no stdio; errno is saved and restored; TLS is initial-exec.
 * Checks and invalid-trace classes: docs/stress.md.
 */
#ifndef WALKFUZZ_WF_LIVE_H
#define WALKFUZZ_WF_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "wf_case_expected.h"

/* cffi:begin */
#define WF_LIVE_MODE_SIGNAL 1
#define WF_LIVE_MODE_THREAD 2
#define WF_LIVE_MODE_QUEUE 3

/* Where signal and queue mode's signals come from (thread mode has its own sampler thread). */
#define WF_LIVE_SOURCE_TIMERS 0  /* a POSIX timer per worker */
#define WF_LIVE_SOURCE_SAMPLER 1 /* one thread tgkills every worker (live_ticker.c) */

#define WF_LIVE_WORKLOAD_MIXED 0
#define WF_LIVE_WORKLOAD_INTERPRETED 1
#define WF_LIVE_WORKLOAD_COMPILED 2
#define WF_LIVE_WORKLOAD_NATIVE 3
#define WF_LIVE_WORKLOAD_DEEP 4
#define WF_LIVE_WORKLOAD_CALLS 5
#define WF_LIVE_WORKLOAD_RECURSIVE 6

#define WF_LIVE_MAX_WORKERS 16
#define WF_LIVE_ERROR_SLOTS 32

/* Queue mode: accounting events a worker keeps, the last of them copied at the first
   miscount (wf_live_stats.queue_events). */
#define WF_LIVE_QUEUE_EVENTS 16
#define WF_LIVE_QUEUE_EVENT_FIELDS 12
#define WF_LIVE_QUEUE_EVENT_ENQUEUE                                                          \
    1                                   /* a handler's Enqueue, counted (and compared unless \
                                           the worker was looking around a safepoint) */
#define WF_LIVE_QUEUE_EVENT_BEFORE 2    /* the worker's look before a safepoint */
#define WF_LIVE_QUEUE_EVENT_SAFEPOINT 3 /* the walker's safepoint call returned */
#define WF_LIVE_QUEUE_EVENT_AFTER 4     /* the worker's look after it */

/* Invalid-trace classes (index into wf_live_stats.invalid). */
#define WF_LIVE_CLS_MISSING 0
#define WF_LIVE_CLS_EXTRA 1
#define WF_LIVE_CLS_WRONG_METHOD 2
#define WF_LIVE_CLS_WRONG_BCI 3
#define WF_LIVE_CLS_WRONG_TYPE 4
#define WF_LIVE_CLS_TRUNCATED 5
#define WF_LIVE_CLS_CYCLE 6
#define WF_LIVE_CLS_CONTRACT 7
#define WF_LIVE_CLS_WRONG_RESULT 8 /* every expected frame, then an error instead of the end */
#define WF_LIVE_CLASSES 9

typedef struct wf_live_config {
    int mode;     /* WF_LIVE_MODE_* */
    int threads;  /* workers, 1 .. WF_LIVE_MAX_WORKERS */
    int workload; /* WF_LIVE_WORKLOAD_* */
    uint64_t seed;
    uint64_t interval_ns;     /* sampling interval per worker */
    uint64_t duration_ns;     /* sampled phase (the cap, when max_walks is set) */
    uint64_t baseline_ns;     /* unsampled phase before it (0: none) */
    uint64_t walk_budget_ns;  /* watchdog budget of one walk (0: none) */
    uint32_t safepoint_every; /* request a safepoint every n-th sample (0: never) */
    uint32_t record_cap;      /* interval/latency values kept per worker */
    uint32_t capture;         /* 1: capture failed samples for wf_live_drain (wf_live_capture.h) */
    uint32_t stop_on_first;   /* 1: end the sampled phase at the first failed sample */
    uint64_t max_walks;       /* end the sampled phase once this many walks were judged
                                 (0: run the whole duration) */
    uint32_t source;          /* WF_LIVE_SOURCE_*: signal and queue mode's signals */
} wf_live_config;

typedef struct wf_live_stats {
    uint64_t requested; /* periods of the interval in the sampled phase (every mode; thread
                           mode's sampler skips a worker that has not answered yet) */
    uint64_t delivered; /* handler entries while sampling */
    uint64_t walked;    /* walks that ran (guarded) */
    uint64_t exact;     /* trace == shadow stack */
    uint64_t invalid;   /* classified in `invalid` */
    uint64_t faults, hangs;
    uint64_t frames;              /* frames walked in total */
    uint64_t safepoints;          /* safepoint stub entries */
    uint64_t queue_rejected;      /* queue mode: enqueue refused (full, other) or no free slot */
    uint64_t queue_gone;          /* queue mode: element's frame gone by the safepoint */
    uint64_t queue_resizes;       /* queue mode: ASGST_ResizeQueue calls */
    uint64_t queue_checks;        /* queue mode: GetQueueSizeInfo compared with the model */
    uint64_t queue_miscounts;     /* ... and found different (size, capacity or attempts) */
    uint64_t queue_enqueued;      /* queue mode: Enqueue calls that took the sample */
    uint64_t queue_walked;        /* queue mode: elements handed to the worker at a safepoint */
    uint64_t queue_full;          /* queue mode: samples dropped for a full queue or no free
                                     slot (counted in queue_rejected too) */
    uint64_t paced;               /* signal, queue: timer restarts of the pacing (live_sampler.c) */
    uint64_t invalid_by_class[9]; /* WF_LIVE_CLASSES (cffi takes a number here) */
    uint64_t invalid_in_window;
    uint64_t window_samples[5]; /* samples per wf_live_window_kind (0: none) */
    uint64_t errors[32];        /* end codes: errors[-code], code in -30..0; [31] others */
    uint64_t iterations_base, iterations_run; /* root calls completed per phase */
    uint64_t cpu_ns_base, cpu_ns_run;         /* worker CPU time per phase */
    uint64_t wall_ns_base, wall_ns_run;
    uint64_t captured;         /* failed samples captured for the drain */
    uint64_t capture_dropped;  /* failed samples not captured: ring full or a capture running */
    uint64_t capture_copies;   /* stack copies (captures; queue mode: every enqueue as well) */
    uint64_t capture_ns;       /* time spent in them */
    uint64_t capture_bytes;    /* stack bytes they copied */
    uint64_t capture_hist[96]; /* copies by duration in TSC ticks (wf_live_result.ns_per_tick),
                                  4 buckets per power of two: wf_live_capture_bucket */
    /* Last two: not summed into a run's total, which keeps the first worker's that has one. */
    int64_t queue_miscount[16];   /* queue mode: the first miscount; [0] is where it was seen
                                     (0: none, 1 the handler's Enqueue, 2 before a safepoint,
                                     3 after it), then the walker's size, capacity, attempts,
                                     the model's size, capacity, attempts, pending capacity,
                                     the Enqueue calls since the look before the last safepoint
                                     and the taken ones among them, safepoints, calls, what
                                     the last safepoint call returned, and (reference walker,
                                     else -1) its own counts of safepoints, refused and full
                                     Enqueue calls */
    int64_t queue_events[16][12]; /* queue mode: the accounting events that led to the first
                                   miscount, oldest first (WF_LIVE_QUEUE_EVENTS of
                                   WF_LIVE_QUEUE_EVENT_FIELDS; cffi takes numbers here):
                                   kind (WF_LIVE_QUEUE_EVENT_*, 0: none), whether the worker
                                   was looking around a safepoint, the Enqueue's result or
                                   the safepoint call's (INT32_MIN: faulted; 0 for a look),
                                   the walker's size, capacity, attempts, the model's (the
                                   base plus the calls since), the Enqueue calls and the
                                   taken ones so far, TSC ticks from the event to the
                                   miscount */
} wf_live_stats;

typedef wf_expected_frame wf_live_frame; /* method index, bci, type, comp level */

typedef struct wf_live_result {
    wf_live_stats total;
    wf_live_stats per_worker[16];
    int workers;
    uint32_t method_count;
    uint64_t code_bytes;
    uint32_t blob_count, desc_count, window_count;
    uint64_t interval_count, latency_count; /* values in the arrays below */
    uint32_t *intervals_ns;                 /* achieved intervals between samples of one worker */
    uint32_t *latencies_ns;                 /* walk latency (handler entry to check done) */
    uint64_t wait_count;                    /* values in waits_ns */
    uint32_t *waits_ns; /* queue mode: signal to the element's walk at its safepoint */
    double ns_per_tick; /* TSC tick length measured over the run */
} wf_live_result;

/* A running live stress's counts so far, summed over its workers (racy reads of counters the
   workers keep writing: each is exact at some recent moment, not all at the same one). */
typedef struct wf_live_progress {
    uint64_t delivered, walked, exact, invalid, faults, hangs;
    int sampling; /* 1 in a sampled phase, 0 in an unsampled one or before the run */
} wf_live_progress;

/* Run a live stress: generate and map the VM, start the workers, baseline phase, sampled
   phase, stop. 0, or -1 with err set (one line naming the problem). Once per process.
   `walker` NULL = the in-core reference walker, else a library path (wf_walker_load). */
int wf_live_run(const wf_live_config *cfg, const char *walker, wf_live_result *out, char *err,
                size_t errlen);
/* The capture_hist bucket of `ticks`, and the upper edge (in ticks) of bucket b. */
uint32_t wf_live_capture_bucket(uint64_t ticks);
uint64_t wf_live_capture_bucket_end(uint32_t b);
/* Name of method i of the last run ("Class.method"), or NULL. */
const char *wf_live_method_name(uint32_t i);
/* Kind of method i: "interpreted", "compiled", "native"; NULL if none. */
const char *wf_live_method_kind(uint32_t i);
/* The counts so far of the live run going on (or the last one); safe to call from another
   thread while wf_live_run runs, as the drain does. */
void wf_live_progress_read(wf_live_progress *out);
/* cffi:end */

#endif /* WALKFUZZ_WF_LIVE_H */
