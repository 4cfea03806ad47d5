/* live_ticker.c — signal and queue mode's sampler-thread source (`--source sampler`): one thread
 * tgkills every worker each interval, and each worker's own SIGPROF handler walks (signal) or
 * enqueues (queue) as with its timer.
 *
 * Why a thread instead of per-thread timers: a timer's expiry reaches the running worker as a
 * timer interrupt on its own CPU, which on a virtual machine also re-arms the (emulated) local
 * timer; a signal sent from another CPU interrupts the worker once. The delivery limit
 * (bench_limit's "timers" and "sampler" rows) shows the difference: what one delivered signal
 * costs the worker's CPU.
 *
 *   ticker (own CPU)                          worker w
 *   tick: w answered the last signal and  -->  handler: walk / enqueue, pace_done,
 *         had its share since (gap >= len)?      answered++
 *         yes: tgkill(w)   no: skip this tick
 *
 * Pacing: a worker is sent a signal only once its handler answered the last one and it had as
 * much time of its own since as that handler took (wf_live_pace.h's rule for a starved
 * worker), so a handler that costs more than the interval leaves the workload half its time
 * instead of none, and a descheduled worker gets no burst of pending signals.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wf_live_worker.h"

#define TICKER_SPIN_NS 20000ull   /* spin through the last stretch before a tick, as thread mode */
#define TICKER_TIMER_SLACK_NS 1ul /* the default 50 µs would stretch a 10 µs tick 6x */

/* Whether worker w may be signalled now: it answered everything sent and is not starved. */
static int ready(const struct wf_live_worker *w, uint64_t sent, uint64_t now) {
    if (__atomic_load_n(&w->answered, __ATOMIC_ACQUIRE) != sent) return 0;
    uint64_t exit_ns = __atomic_load_n(&w->pace.exit_ns, __ATOMIC_RELAXED);
    uint64_t length_ns = __atomic_load_n(&w->pace.length_ns, __ATOMIC_RELAXED);
    return exit_ns == 0 || now - exit_ns >= length_ns;
}

static void sleep_until(uint64_t deadline) {
    struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static void *ticker_main(void *arg) {
    struct wf_live_run *run = arg;
    uint64_t sent[WF_LIVE_MAX_WORKERS];
    for (int i = 0; i < run->worker_count; i++)
        sent[i] = __atomic_load_n(&run->workers[i].answered, __ATOMIC_ACQUIRE);
    prctl(PR_SET_TIMERSLACK, TICKER_TIMER_SLACK_NS);
    pid_t pid = getpid();
    uint64_t interval = run->cfg.interval_ns, next = wf_live_now_ns();
    while (run->phase == WF_LIVE_SAMPLING) {
        uint64_t now = wf_live_now_ns();
        if (now < next) {
            if (next - now > TICKER_SPIN_NS) sleep_until(next - TICKER_SPIN_NS);
            else __builtin_ia32_pause();
            continue;
        }
        for (int i = 0; i < run->worker_count; i++) {
            struct wf_live_worker *w = &run->workers[i];
            if (ready(w, sent[i], now) && syscall(SYS_tgkill, pid, w->tid, SIGPROF) == 0) sent[i]++;
        }
        next += interval;
        if (next <= now) next = now + interval; /* behind: don't burst */
    }
    return NULL;
}

int wf_live_ticker_start(struct wf_live_run *run, char *err, size_t errlen) {
    if (pthread_create(&run->sampler, NULL, ticker_main, run) != 0) {
        snprintf(err, errlen, "cannot start the sampler thread");
        return -1;
    }
    run->has_sampler = 1;
    return 0;
}
