/* live_thread_timer.c — a POSIX interval timer that signals one thread, and its handler's
   installation (wf_thread_timer.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "wf_thread_timer.h"

int wf_thread_timer_start(pid_t tid, int signo, uint64_t interval_ns, timer_t *timer) {
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = signo;
    sev._sigev_un._tid = tid; /* glibc names no field for it (sigev_notify_thread_id) */
    if (timer_create(CLOCK_MONOTONIC, &sev, timer) != 0) return -errno;
    int rc = wf_thread_timer_restart(*timer, interval_ns, interval_ns);
    if (rc != 0) timer_delete(*timer);
    return rc;
}

static struct timespec timespec_of(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    return ts;
}

int wf_thread_timer_restart(timer_t timer, uint64_t first_ns, uint64_t interval_ns) {
    struct itimerspec its = {.it_interval = timespec_of(interval_ns),
                             .it_value = timespec_of(first_ns)};
    return timer_settime(timer, 0, &its, NULL) == 0 ? 0 : -errno; /* async-signal-safe */
}

int wf_sampling_handler_install(int signo, void (*handler)(int, siginfo_t *, void *),
                                struct sigaction *old) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(signo, &sa, old) == 0 ? 0 : -errno;
}
