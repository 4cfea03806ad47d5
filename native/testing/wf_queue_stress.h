/* wf_queue_stress.h — ASGST_Enqueue inside real signal handlers.
 *
 * Each worker thread registers a queue, arms its own POSIX timer (CLOCK_MONOTONIC,
 * SIGEV_THREAD_ID, signal WF_QUEUE_STRESS_SIGNAL) and spins, polling a safepoint every
 * `poll_every` iterations. The handler enqueues the mapped case's context (the real
 * registers point at real code, not at the simulated VM) and counts what Enqueue returned.
 * At each safepoint the queue handler walks every element and checks its frame count. The
 * run proves, by counts, that nothing deadlocks and nothing is lost:
 *   signals == attempts == enqueued + rejected, enqueued == processed + dropped.
 *
 * With `nested`, a second timer's signal runs the same handler and may interrupt the first's
 * Enqueue: the counts above must still hold (an Enqueue nested in another is refused).
 *
 * Timing (TSC, in the handler): even signals time the Enqueue call, odd signals time an
 * empty window (the same two clock reads with nothing between) and then Enqueue untimed.
 * The empty windows are the measurement's own overhead, taken in the same handler and run:
 * Enqueue net of it is enqueue_ns / timed - empty_ns / empty (and likewise per quantile of
 * the two histograms). wf_queue_signal_cost.h gives a figure with no clock in the window.
 */
#ifndef WALKFUZZ_WF_QUEUE_STRESS_H
#define WALKFUZZ_WF_QUEUE_STRESS_H

#include <stdint.h>

/* cffi:begin */
#define WF_QUEUE_STRESS_MAX_THREADS 16
#define WF_QUEUE_STRESS_HIST 512 /* window histograms: bucket i = [2i, 2i+2) ns, last: more */
#define WF_QUEUE_STRESS_HIST_NS 2

typedef struct wf_queue_stress_params {
    uint32_t threads;     /* workers, 1..WF_QUEUE_STRESS_MAX_THREADS */
    uint32_t interval_ns; /* per-thread timer interval */
    uint32_t duration_ms;
    uint32_t capacity;      /* queue size */
    uint32_t poll_every;    /* spin iterations between safepoint polls */
    uint32_t expect_frames; /* frames each element's walk must give (ends with code 0) */
    uint32_t nested;        /* also a second timer, another signal, same handler: it can land
                               inside the first signal's Enqueue (untimed: every signal then
                               just enqueues) */
    uint64_t pc, sp, fp;    /* the context every signal enqueues */
    uint64_t poll_pc, poll_sp, poll_fp; /* the safepoint frame */
} wf_queue_stress_params;

typedef struct wf_queue_stress_result {
    uint64_t signals;        /* handler runs */
    uint64_t nested_signals; /* ... that interrupted another handler run of the same thread */
    uint64_t enqueued;       /* Enqueue returned 1 (counted in the handler) */
    uint64_t rejected;       /* Enqueue returned < 0 */
    uint64_t attempts, full, other, walk_failed, processed, dropped; /* queue counters */
    uint64_t safepoints;                                             /* polls that ran */
    uint64_t walked;            /* elements the queue handler walked */
    uint64_t wrong_walks;       /* ... whose frame count or end code was not the expected */
    uint64_t timed;             /* windows timed around an Enqueue (even signals) */
    uint64_t enqueue_ns;        /* ... their total, measured in the handler (TSC) */
    uint64_t enqueue_hist[512]; /* ... WF_QUEUE_STRESS_HIST buckets of single windows */
    uint64_t empty;             /* empty windows timed (odd signals): the timing overhead */
    uint64_t empty_ns;          /* ... their total */
    uint64_t empty_hist[512];   /* ... WF_QUEUE_STRESS_HIST buckets of single windows */
    uint64_t run_ns;            /* wall time of the workers */
    int32_t error;              /* 0, or -errno of a failed set-up step */
} wf_queue_stress_result;

/* Run the stress on the mapped case. 0, or -errno (also in out->error). Not signal-safe. */
int wf_queue_stress_run(const wf_queue_stress_params *p, wf_queue_stress_result *out);
/* cffi:end */

#endif /* WALKFUZZ_WF_QUEUE_STRESS_H */
