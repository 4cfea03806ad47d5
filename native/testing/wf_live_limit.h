/* wf_live_limit.h — what this machine can deliver: live stress's two ways of sampling with an
 * empty handler, so every live stress figure can be shown as a fraction of it.
 *
 * Workers spin on a fixed loop (no VM, no walk) and count the loop's rounds; SIGPROF's handler
 * only counts the signal. Two sources, as the live stress's modes sample (wf_live.h):
 *   WF_LIVE_LIMIT_TIMERS   one POSIX timer per worker (CLOCK_MONOTONIC, SIGEV_THREAD_ID):
 *                          signal and queue mode
 *   WF_LIVE_LIMIT_SAMPLER  one sampler thread tgkills every worker each interval, sleeping
 *                          between ticks and spinning through the last stretch before one:
 *                          thread mode (without the handshake, which is the mode's own cost)
 * With `paced`, a timers handler paces its timer as the live stress's does (wf_live_pace.h:
 * a starved or late worker's timer restarts, leaving the workload its own time), so the figure
 * is what a paced sampler can deliver; without, what the timers deliver at all.
 * Unsampled and sampled rounds alternate, as in a live run, so drift (frequency, other load)
 * weighs on both; per phase the workers' rounds, CPU time and wall time are summed. Samples
 * delivered per worker CPU-second and the rounds per CPU-second lost to delivery are the
 * limits the live stress's figures are measured against (bench/bench_limit.py).
 */
#ifndef WALKFUZZ_WF_LIVE_LIMIT_H
#define WALKFUZZ_WF_LIVE_LIMIT_H

#include <stdint.h>

/* cffi:begin */
#define WF_LIVE_LIMIT_TIMERS 0
#define WF_LIVE_LIMIT_SAMPLER 1
#define WF_LIVE_LIMIT_MAX_WORKERS 16

typedef struct wf_live_limit_params {
    uint32_t source;      /* WF_LIVE_LIMIT_TIMERS or WF_LIVE_LIMIT_SAMPLER */
    uint32_t workers;     /* 1..WF_LIVE_LIMIT_MAX_WORKERS */
    uint32_t rounds;      /* unsampled + sampled round pairs, >= 1 */
    uint32_t paced;       /* timers: 1 = pace them as the live stress does */
    uint64_t interval_ns; /* per worker, 1 us .. 1 s */
    uint64_t round_ns;    /* length of each phase of a round, > 0 (a phase also lasts until
                             every worker ran in it) */
} wf_live_limit_params;

typedef struct wf_live_limit_result {
    uint64_t requested; /* timers: interval periods of the sampled phases, per worker summed;
                           sampler: signals sent */
    uint64_t delivered; /* handler entries in the sampled phases */
    uint64_t overruns;  /* timers: periods that expired while their signal was pending */
    uint64_t loops_base, loops_run;     /* the workers' loop rounds per phase */
    uint64_t cpu_ns_base, cpu_ns_run;   /* the workers' CPU time per phase */
    uint64_t wall_ns_base, wall_ns_run; /* each phase's wall time, summed over the workers */
    uint64_t sampler_cpu_ns;            /* sampler: its thread's CPU time (timers: 0) */
    uint64_t paced_restarts;            /* paced timers: restarts of the pacing */
    int32_t error;                      /* 0, or -errno of a failed set-up step */
} wf_live_limit_result;

/* Run it (threads of its own; SIGPROF's action is restored after). 0, or -errno (also in
   out->error); -EINVAL for parameters out of range. Not signal-safe. */
int wf_live_limit(const wf_live_limit_params *p, wf_live_limit_result *out);
/* cffi:end */

#endif /* WALKFUZZ_WF_LIVE_LIMIT_H */
