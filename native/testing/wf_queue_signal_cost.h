/* wf_queue_signal_cost.h — what an ASGST_Enqueue adds to a signal, in thread CPU time, with
 * no clock inside the handler.
 *
 * One thread does nothing but take signals, from one of two sources:
 *   WF_QUEUE_COST_TIMER  its own POSIX timer (CLOCK_MONOTONIC, SIGEV_THREAD_ID); it sleeps in
 *                        sigsuspend between signals, so each one finds a cold core (caches,
 *                        TLB, predictors), and the wake-up's cost varies a lot under load;
 *   WF_QUEUE_COST_SELF   itself, tgkill in a loop: each signal is handled before tgkill
 *                        returns, the thread never sleeps; kernel entry and exit still
 *                        separate two handlers, but little else does.
 * All of its CPU time is then signal delivery, the handler and the way back. It takes them
 * in stretches of `signals` signals, alternating two variants of one handler:
 *
 *   variant 0 (empty)    count the signal
 *   variant 1 (enqueue)  count the signal, ASGST_Enqueue the mapped case's context
 *
 *   stretch:  |-- 0 --|-- 1 --|-- 0 --|-- 1 --| ...   CLOCK_THREAD_CPUTIME_ID read around
 *                              ^ safepoint           each stretch, with the signal blocked;
 *                                (drain, untimed)    the queue drains between stretches.
 *
 * cpu_ns[v] / signals[v] is the CPU cost of one signal with variant v's handler, and
 * the difference of the two is what Enqueue adds, cache misses and all, with no clock in the
 * window. Alternating stretches spreads drift (frequency, other load) over both variants;
 * the median over stretch pairs of the per-signal difference (added_median_ns) also resists
 * the stretches another process disturbed.
 * The queue holds `signals` elements, so no Enqueue of a stretch finds it full.
 */
#ifndef WALKFUZZ_WF_QUEUE_SIGNAL_COST_H
#define WALKFUZZ_WF_QUEUE_SIGNAL_COST_H

#include <stdint.h>

/* cffi:begin */
#define WF_QUEUE_COST_TIMER 0
#define WF_QUEUE_COST_SELF 1
#define WF_QUEUE_COST_MAX_STRETCHES 4096

typedef struct wf_queue_signal_cost_params {
    uint32_t source;      /* WF_QUEUE_COST_TIMER or WF_QUEUE_COST_SELF */
    uint32_t interval_ns; /* the timer's interval, < 1 s (TIMER only) */
    uint32_t stretches;   /* stretches per variant, 1..WF_QUEUE_COST_MAX_STRETCHES */
    uint32_t signals;     /* signals per stretch, 1..WF_QUEUE_MAX_CAPACITY (the capacity) */
    uint64_t pc, sp, fp;  /* the context every Enqueue enqueues */
    uint64_t poll_pc, poll_sp, poll_fp; /* the safepoint frame of the drains */
} wf_queue_signal_cost_params;

typedef struct wf_queue_signal_cost_result {
    uint64_t signals[2];    /* signals handled, per variant (0 empty, 1 enqueue) */
    uint64_t cpu_ns[2];     /* thread CPU time of that variant's stretches */
    uint64_t enqueued;      /* variant 1: Enqueue returned 1 */
    uint64_t rejected;      /* variant 1: Enqueue returned < 0 */
    uint64_t processed;     /* elements handed to the queue handler at the drains */
    double added_median_ns; /* median over stretch pairs of (ns per signal, 1 minus 0) */
    int32_t error;          /* 0, or -errno of a failed set-up step */
} wf_queue_signal_cost_result;

/* Run it on the mapped case in a thread of its own. 0, or -errno (also in out->error).
   Not signal-safe. */
int wf_queue_signal_cost(const wf_queue_signal_cost_params *p, wf_queue_signal_cost_result *out);
/* cffi:end */

#endif /* WALKFUZZ_WF_QUEUE_SIGNAL_COST_H */
