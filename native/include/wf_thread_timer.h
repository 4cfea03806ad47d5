/* wf_thread_timer.h — a POSIX interval timer that signals one thread (CLOCK_MONOTONIC,
 * SIGEV_THREAD_ID): the sampling clock of the live stress (live_sampler.c) and of the queue's
 * signal stress and benchmarks (queue_stress.c, queue_signal_cost.c). Not cffi-visible. */
#ifndef WALKFUZZ_WF_THREAD_TIMER_H
#define WALKFUZZ_WF_THREAD_TIMER_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Create *timer sending signo to thread tid every interval_ns, the first one interval from
   now, and start it. 0, or -errno of the failed step (nothing is left created). Not
   signal-safe. */
int wf_thread_timer_start(pid_t tid, int signo, uint64_t interval_ns, timer_t *timer);

#endif /* WALKFUZZ_WF_THREAD_TIMER_H */
