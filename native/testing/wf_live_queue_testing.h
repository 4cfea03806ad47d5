/* wf_live_queue_testing.h — queue mode's accounting (live_queue_accounting.c) single-stepped:
 * a worker's looks around its safepoints run with the trap flag set, and a simulated handler's
 * Enqueue lands at chosen instruction boundaries (live_queue_testing.c). Live stress meets a
 * given interleaving once in millions of signals; this meets every one in a second.
 */
#ifndef WF_LIVE_QUEUE_TESTING_H
#define WF_LIVE_QUEUE_TESTING_H

#include <stdint.h>

/* cffi:begin */
typedef struct wf_live_queue_stepped {
    uint64_t runs;              /* sequences run, one per injection pattern */
    uint64_t steps;             /* instruction boundaries of the sequence without injections */
    uint64_t injected;          /* simulated Enqueue calls, in all runs */
    uint64_t injected_looking;  /* ... of them while the worker looked around a safepoint */
    uint64_t taken;             /* ... that the simulated queue took */
    uint64_t checks;            /* comparisons the model made, in all runs */
    uint64_t miscounts;         /* ... that disagreed (0: the model is right everywhere) */
    int64_t first_miscount[16]; /* the first run's first miscount (wf_live_stats.queue_miscount) */
    uint64_t first_from, first_every; /* that run's injection pattern */
} wf_live_queue_stepped;

/* Run the worker's side of a safepoint (look before, the queue's safepoint, look after; one
   that asks for a resize) under single-stepping against a simulated queue that keeps the
   asgst.h accounting, once without injections and then once per pattern: a simulated Enqueue
   at every `every`-th boundary (every = 1 .. max_every) for `burst` of them, starting at each
   boundary in turn (`every` 1 is a worker starved by back-to-back signals: one instruction
   between two); stepping ends with the burst. After each run one more Enqueue and a look
   check the model. Not thread-safe, not signal-safe: it installs a SIGTRAP handler for its
   duration and borrows the live run's queue API (one live run per process: call it where
   none runs). 0, or -1 when single-stepping is not available (the sequence took no step). */
int wf_live_queue_stepped_check(uint32_t max_every, uint32_t burst, wf_live_queue_stepped *out);
/* cffi:end */

#endif /* WF_LIVE_QUEUE_TESTING_H */
