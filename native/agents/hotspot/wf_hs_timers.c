/* Per-thread POSIX timers: CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGPROF to one thread.
 * Thread CPU-time clocks tick at the kernel's HZ (milliseconds) and cannot sample at 100 us
 * (DESIGN.md, facts), so the interval is wall time; rates are reported per CPU-second.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <time.h>

#include "wf_hs.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

static void set_interval(struct itimerspec *its, uint64_t interval_ns) {
    its->it_interval.tv_sec = (time_t)(interval_ns / 1000000000ull);
    its->it_interval.tv_nsec = (long)(interval_ns % 1000000000ull);
    its->it_value = its->it_interval;
}

int wf_hs_timer_start(wf_hs_thread *t, uint64_t interval_ns) {
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_notify_thread_id = t->tid;
    if (timer_create(CLOCK_MONOTONIC, &sev, &t->timer) != 0) return -1;
    struct itimerspec its;
    set_interval(&its, interval_ns);
    if (timer_settime(t->timer, 0, &its, NULL) != 0) {
        timer_delete(t->timer);
        return -1;
    }
    t->has_timer = 1;
    return 0;
}

void wf_hs_timer_stop(wf_hs_thread *t) {
    if (__atomic_exchange_n(&t->has_timer, 0, __ATOMIC_ACQ_REL)) timer_delete(t->timer);
}

void wf_hs_timer_pause(wf_hs_thread *t) {
    struct itimerspec off;
    memset(&off, 0, sizeof off);
    if (__atomic_load_n(&t->has_timer, __ATOMIC_ACQUIRE)) timer_settime(t->timer, 0, &off, NULL);
}

void wf_hs_timer_resume(wf_hs_thread *t) {
    struct itimerspec its;
    set_interval(&its, wf_hs_cfg.interval_ns);
    if (__atomic_load_n(&t->has_timer, __ATOMIC_ACQUIRE)) timer_settime(t->timer, 0, &its, NULL);
}

uint64_t wf_hs_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int wf_hs_log2_bucket(uint64_t us) {
    int b = 0;
    while (us && b < WF_HS_HIST_BUCKETS - 1) {
        us >>= 1;
        b++;
    }
    return b;
}
