/* live_limit.c — the delivery limit of the live stress's sampling with an empty handler
 * (wf_live_limit.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wf_live_limit.h"
#include "wf_arch.h"
#include "wf_live_pace.h"
#include "wf_thread_timer.h"

#define LOOP_STEPS 256 /* multiply-adds per counted loop round: ~100 ns, far below an interval */
#define SAMPLER_SPIN_NS                                                   \
    20000ull /* the sampler spins through the last stretch before a tick, \
                as thread mode's does (live_sampler_thread.c) */
#define START_TIMEOUT_NS 5000000000ull

struct limit_worker {
    pthread_t thread;
    pid_t tid;
    clockid_t cpu_clock;
    timer_t timer;
    int has_timer;
    volatile int started;
    volatile uint64_t loops;
    volatile uint64_t delivered;
    volatile uint64_t overruns;
    volatile uint64_t restarts;
    wf_live_pace pace;
};

struct limit_run {
    const wf_live_limit_params *p;
    struct limit_worker workers[WF_LIVE_LIMIT_MAX_WORKERS];
    volatile int sampling, stopping;
    uint64_t sent; /* sampler: signals sent */
    pthread_t sampler;
    uint64_t sampler_cpu_ns;
};

static struct limit_run run;
/* volatile: the worker's loop calls nothing, so its stores would otherwise be dead to the compiler
   (the handler reads it in between) */
static __thread struct limit_worker *volatile current __attribute__((tls_model("initial-exec")));

static uint64_t clock_ns(clockid_t clock) {
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* As the live stress's handler paces its timer (live_sampler.c), the handler itself taking no
   time: restart when wf_live_pace_next says so. */
static void pace(struct limit_worker *w, const siginfo_t *info) {
    uint64_t entered = now_ns();
    uint64_t first =
        wf_live_pace_next(&w->pace, entered, entered, info->si_overrun > 0, run.p->interval_ns);
    if (first != 0 && wf_thread_timer_restart(w->timer, first, run.p->interval_ns) == 0)
        w->restarts++;
    wf_live_pace_done(&w->pace, entered, now_ns());
}

/* The empty handler: count the signal, and the periods its timer lost while it was pending. */
static void on_sigprof(int signo, siginfo_t *info, void *uc) {
    (void)signo;
    (void)uc;
    int saved = errno;
    struct limit_worker *w = current;
    if (w != NULL && run.sampling) {
        w->delivered++;
        if (info->si_code == SI_TIMER && info->si_overrun > 0)
            w->overruns += (uint64_t)info->si_overrun;
        if (run.p->paced && w->has_timer && info->si_code == SI_TIMER) pace(w, info);
    }
    errno = saved;
}

static void *worker_main(void *arg) {
    struct limit_worker *w = arg;
    w->tid = (pid_t)syscall(SYS_gettid);
    pthread_getcpuclockid(pthread_self(), &w->cpu_clock);
    current = w;
    w->started = 1;
    uint64_t x = (uint64_t)w->tid;
    while (!run.stopping) {
        for (int i = 0; i < LOOP_STEPS; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        wf_arch_keep_value(x); /* the loop's work is not optimised away */
        w->loops++;
    }
    current = NULL;
    return NULL;
}

static void sleep_until(uint64_t deadline) {
    struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
}

static void *sampler_main(void *arg) {
    (void)arg;
    prctl(PR_SET_TIMERSLACK, 1ul); /* the default 50 us would stretch a 10 us tick 6x */
    pid_t pid = getpid();
    uint64_t interval = run.p->interval_ns, next = now_ns();
    while (run.sampling) {
        uint64_t now = now_ns();
        if (now >= next) {
            for (uint32_t i = 0; i < run.p->workers; i++)
                if (syscall(SYS_tgkill, pid, run.workers[i].tid, SIGPROF) == 0) run.sent++;
            next += interval;
            if (next <= now) next = now + interval; /* behind: don't burst */
            continue;
        }
        if (next - now > SAMPLER_SPIN_NS) sleep_until(next - SAMPLER_SPIN_NS);
        else __builtin_ia32_pause();
    }
    clockid_t cpu;
    if (pthread_getcpuclockid(pthread_self(), &cpu) == 0) run.sampler_cpu_ns += clock_ns(cpu);
    return NULL;
}

static int start_sampling(void) {
    run.sampling = 1;
    if (run.p->source == WF_LIVE_LIMIT_SAMPLER) {
        int rc = pthread_create(&run.sampler, NULL, sampler_main, NULL);
        return -rc;
    }
    for (uint32_t i = 0; i < run.p->workers; i++) {
        struct limit_worker *w = &run.workers[i];
        int rc = wf_thread_timer_start(w->tid, SIGPROF, run.p->interval_ns, &w->timer);
        if (rc != 0) return rc;
        w->pace = (wf_live_pace){0};
        w->has_timer = 1;
    }
    return 0;
}

static void stop_sampling(void) {
    if (run.p->source == WF_LIVE_LIMIT_SAMPLER && run.sampling) {
        run.sampling = 0;
        pthread_join(run.sampler, NULL);
    }
    for (uint32_t i = 0; i < run.p->workers; i++) {
        struct limit_worker *w = &run.workers[i];
        if (w->has_timer) timer_delete(w->timer);
        w->has_timer = 0;
    }
    run.sampling = 0;
}

/* Until every worker's loop moved past loops0 and, in a sampled phase (delivered0 not NULL), a
   signal reached it (or the start timeout): on a loaded machine a worker, or the sampler thread,
   may get no CPU in a short phase, which then measures nothing of it. */
static void await_progress(const uint64_t *loops0, const uint64_t *delivered0) {
    uint64_t deadline = now_ns() + START_TIMEOUT_NS;
    for (uint32_t i = 0; i < run.p->workers; i++) {
        const struct limit_worker *w = &run.workers[i];
        while ((w->loops == loops0[i] || (delivered0 && w->delivered == delivered0[i])) &&
               now_ns() < deadline)
            usleep(1000);
    }
}

/* One phase of round_ns (longer if a worker had not run or been signalled yet): the workers'
   loops and CPU time added to its phase's totals. */
static int phase(int sampled, wf_live_limit_result *out) {
    uint32_t n = run.p->workers;
    uint64_t loops0[WF_LIVE_LIMIT_MAX_WORKERS], cpu0[WF_LIVE_LIMIT_MAX_WORKERS];
    uint64_t delivered0[WF_LIVE_LIMIT_MAX_WORKERS];
    for (uint32_t i = 0; i < n; i++) {
        loops0[i] = run.workers[i].loops;
        delivered0[i] = run.workers[i].delivered;
        cpu0[i] = clock_ns(run.workers[i].cpu_clock);
    }
    uint64_t t0 = now_ns();
    int rc = sampled ? start_sampling() : 0;
    if (rc == 0) sleep_until(t0 + run.p->round_ns);
    if (rc == 0) await_progress(loops0, sampled ? delivered0 : NULL);
    if (sampled) stop_sampling();
    uint64_t wall = now_ns() - t0;
    for (uint32_t i = 0; i < n; i++) {
        const struct limit_worker *w = &run.workers[i];
        uint64_t loops = w->loops - loops0[i], cpu = clock_ns(w->cpu_clock) - cpu0[i];
        *(sampled ? &out->loops_run : &out->loops_base) += loops;
        *(sampled ? &out->cpu_ns_run : &out->cpu_ns_base) += cpu;
        *(sampled ? &out->wall_ns_run : &out->wall_ns_base) += wall;
        if (sampled && run.p->source == WF_LIVE_LIMIT_TIMERS)
            out->requested += wall / run.p->interval_ns;
    }
    return rc;
}

static int start_workers(uint32_t *started) {
    for (*started = 0; *started < run.p->workers; (*started)++) {
        int rc = pthread_create(&run.workers[*started].thread, NULL, worker_main,
                                &run.workers[*started]);
        if (rc != 0) return -rc;
    }
    uint64_t deadline = now_ns() + START_TIMEOUT_NS;
    for (uint32_t i = 0; i < run.p->workers; i++)
        while (!run.workers[i].started)
            if (now_ns() > deadline) return -ETIMEDOUT;
            else usleep(1000);
    return 0;
}

static int valid(const wf_live_limit_params *p) {
    return p->source <= WF_LIVE_LIMIT_SAMPLER && p->workers >= 1 &&
           p->workers <= WF_LIVE_LIMIT_MAX_WORKERS && p->rounds >= 1 && p->interval_ns >= 1000 &&
           p->interval_ns <= 1000000000ull && p->round_ns > 0 && p->paced <= 1 &&
           !(p->paced && p->source != WF_LIVE_LIMIT_TIMERS);
}

int wf_live_limit(const wf_live_limit_params *p, wf_live_limit_result *out) {
    memset(out, 0, sizeof *out);
    if (!valid(p)) return out->error = -EINVAL;
    memset(&run, 0, sizeof run);
    run.p = p;
    struct sigaction old;
    int rc = wf_sampling_handler_install(SIGPROF, on_sigprof, &old);
    if (rc != 0) return out->error = rc;
    uint32_t started;
    rc = start_workers(&started);
    for (uint32_t r = 0; rc == 0 && r < p->rounds; r++) {
        rc = phase(0, out);
        if (rc == 0) rc = phase(1, out);
    }
    run.stopping = 1;
    for (uint32_t i = 0; i < started; i++) pthread_join(run.workers[i].thread, NULL);
    for (uint32_t i = 0; i < p->workers; i++) {
        out->delivered += run.workers[i].delivered;
        out->overruns += run.workers[i].overruns;
        out->paced_restarts += run.workers[i].restarts;
    }
    if (p->source == WF_LIVE_LIMIT_SAMPLER) out->requested = run.sent;
    out->sampler_cpu_ns = run.sampler_cpu_ns;
    sigaction(SIGPROF, &old, NULL);
    return out->error = rc;
}
