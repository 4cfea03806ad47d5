/* wf_thread_timer.h — a POSIX interval timer that signals one thread (CLOCK_MONOTONIC,
 * SIGEV_THREAD_ID): the sampling clock of the live stress (live_sampler.c) and of the queue's
 * signal stress and benchmarks (queue_stress.c, queue_signal_cost.c), and the installation of
 * the handler it drives. Not cffi-visible. */
#ifndef WALKFUZZ_WF_THREAD_TIMER_H
#define WALKFUZZ_WF_THREAD_TIMER_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Create *timer sending signo to thread tid every interval_ns, the first one interval from
   now, and start it. 0, or -errno of the failed step (nothing is left created). Not
   signal-safe. */
int wf_thread_timer_start(pid_t tid, int signo, uint64_t interval_ns, timer_t *timer);
/* (Re)start timer's period: the first signal first_ns from now, then one every interval_ns.
   0, or -errno. Async-signal-safe. */
int wf_thread_timer_restart(timer_t timer, uint64_t first_ns, uint64_t interval_ns);
/* Install handler for signo (SA_SIGINFO | SA_RESTART, nothing masked), the previous action
   into *old if old != NULL. 0, or -errno. Not signal-safe. */
int wf_sampling_handler_install(int signo, void (*handler)(int, siginfo_t *, void *),
                                struct sigaction *old);

#endif /* WALKFUZZ_WF_THREAD_TIMER_H */
