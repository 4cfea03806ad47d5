/* The stress run: workload threads, a per-thread POSIX timer each (CLOCK_MONOTONIC,
 * SIGEV_THREAD_ID), the sampling handler installed for the run, stats summed at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wf_uw_sampler.h"
#include "wf_uw_targets.h"
#include "wf_uw_walk.h"

#define MAX_THREADS 64

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

WF_UW_GENERATED("wf_uw_worker_root_code")
uintptr_t wf_uw_worker_root(wf_uw_worker *w) {
    uintptr_t acc = 0;
    while (!w->stop) acc += wf_uw_work_fns[wf_uw_work_pick(w)](w, 1);
    return acc;
}

static intptr_t nothing(void *arg) {
    (void)arg;
    return 0;
}

/* The guard's first call on a thread sets up its alternate signal stack: do it here, not in
   the handler. */
static void warm_up_guard(void) {
    intptr_t result;
    wf_fault fault;
    wf_guard_call_masked(nothing, NULL, &result, &fault);
}

static int start_timer(wf_uw_sampler *s) {
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = s->cfg->signo;
    sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_MONOTONIC, &sev, &s->timer) != 0) return -1;
    struct itimerspec spec = {
        .it_interval = {(time_t)(s->cfg->interval_ns / 1000000000u),
                        (long)(s->cfg->interval_ns % 1000000000u)},
    };
    spec.it_value = spec.it_interval;
    s->armed = 1;
    if (timer_settime(s->timer, 0, &spec, NULL) != 0) {
        timer_delete(s->timer);
        return -1;
    }
    s->timed = 1;
    return 0;
}

static void *worker_main(void *arg) {
    wf_uw_sampler *s = arg;
    wf_uw_current_sampler = s;
    warm_up_guard();
    if (s->cfg->walk_budget_ns != 0) wf_guard_set_budget_ns(s->cfg->walk_budget_ns);
    if (s->cfg->interval_ns != 0) start_timer(s);
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    wf_uw_worker_root(&s->worker);
    if (s->timed) timer_delete(s->timer);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
    s->stats.cpu_ns = (uint64_t)(cpu1.tv_sec - cpu0.tv_sec) * 1000000000u +
                      (uint64_t)(cpu1.tv_nsec - cpu0.tv_nsec);
    s->stats.work_units = s->worker.work_units;
    wf_guard_set_budget_ns(0);
    wf_uw_current_sampler = NULL;
    return NULL;
}

#define WF_UW_STOP_CHECK_NS 10000000ull /* how often the sampled time looks for a stop */

static volatile sig_atomic_t stop_requested;

void wf_uw_stress_request_stop(void) { stop_requested = 1; }

/* Sleep for ns, in slices of WF_UW_STOP_CHECK_NS, until a stop request; the ns slept. */
static uint64_t sleep_ns(uint64_t ns) {
    uint64_t start = wf_uw_now_ns(), end = start + ns;
    for (uint64_t now = start; now < end && !stop_requested; now = wf_uw_now_ns()) {
        uint64_t slice = end - now < WF_UW_STOP_CHECK_NS ? end - now : WF_UW_STOP_CHECK_NS;
        struct timespec ts = {(time_t)(slice / 1000000000ull), (long)(slice % 1000000000ull)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
    }
    return wf_uw_now_ns() - start;
}

static void add_signatures(wf_uw_stress_stats *sum, const wf_uw_stress_stats *t) {
    sum->signatures_lost += t->signatures_lost;
    for (uint32_t i = 0; i < t->signature_slots; i++) {
        const wf_uw_signature_count *c = &t->signature_counts[i];
        uint32_t j = 0;
        while (j < sum->signature_slots && (sum->signature_counts[j].invalid != c->invalid ||
                                            sum->signature_counts[j].id != c->id))
            j++;
        if (j == sum->signature_slots) {
            if (j >= WF_UW_SIGNATURE_SLOTS) {
                sum->signatures_lost += c->count;
                continue;
            }
            sum->signature_counts[sum->signature_slots++] = *c;
            continue;
        }
        wf_uw_signature_count *into = &sum->signature_counts[j];
        into->count += c->count;
        into->first_ns = c->first_ns < into->first_ns ? c->first_ns : into->first_ns;
        into->last_ns = c->last_ns > into->last_ns ? c->last_ns : into->last_ns;
    }
}

static void add_stats(wf_uw_stress_stats *sum, const wf_uw_stress_stats *t) {
    sum->delivered += t->delivered;
    sum->overruns += t->overruns;
    sum->walked += t->walked;
    sum->matched += t->matched;
    sum->tolerated += t->tolerated;
    sum->known_limit += t->known_limit;
    sum->faults += t->faults;
    sum->hangs += t->hangs;
    sum->frames += t->frames;
    sum->work_units += t->work_units;
    sum->cpu_ns += t->cpu_ns;
    for (int i = 0; i < WF_UW_INVALID_KINDS; i++) sum->invalid_kinds[i] += t->invalid_kinds[i];
    for (int i = 0; i < WF_UW_STOP_KINDS; i++) sum->stops[i] += t->stops[i];
    for (int i = 0; i < WF_UW_HIST_BUCKETS; i++) {
        sum->interval_hist[i] += t->interval_hist[i];
        sum->latency_hist[i] += t->latency_hist[i];
    }
    for (uint32_t i = 0; i < t->kept && sum->kept < WF_UW_KEPT_INVALID; i++)
        sum->kept_samples[sum->kept++] = t->kept_samples[i];
    add_signatures(sum, t);
}

/* The samplers of the run going on, for wf_uw_stress_progress on another thread; the lock
   keeps them from being freed while it reads. */
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;
static const wf_uw_sampler *progress_samplers;
static int progress_count;

static void publish(const wf_uw_sampler *samplers, int count) {
    pthread_mutex_lock(&progress_lock);
    progress_samplers = samplers;
    progress_count = count;
    pthread_mutex_unlock(&progress_lock);
}

void wf_uw_stress_progress(wf_uw_stress_stats *out) {
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&progress_lock);
    for (int i = 0; i < progress_count; i++) {
        const wf_uw_stress_stats *t = &progress_samplers[i].stats;
        out->delivered += __atomic_load_n(&t->delivered, __ATOMIC_RELAXED);
        out->walked += __atomic_load_n(&t->walked, __ATOMIC_RELAXED);
        out->matched += __atomic_load_n(&t->matched, __ATOMIC_RELAXED);
        out->tolerated += __atomic_load_n(&t->tolerated, __ATOMIC_RELAXED);
        out->known_limit += __atomic_load_n(&t->known_limit, __ATOMIC_RELAXED);
        out->faults += __atomic_load_n(&t->faults, __ATOMIC_RELAXED);
        out->hangs += __atomic_load_n(&t->hangs, __ATOMIC_RELAXED);
        for (int k = 0; k < WF_UW_INVALID_KINDS; k++)
            out->invalid_kinds[k] += __atomic_load_n(&t->invalid_kinds[k], __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&progress_lock);
}

static const char *check_config(const wf_uw_stress_config *cfg) {
    if (cfg->threads == 0 || cfg->threads > MAX_THREADS) return "threads must be 1..64";
    if (cfg->max_depth == 0 || cfg->max_depth >= WF_UW_SHADOW_MAX) return "max_depth must be 1..63";
    if (cfg->mode < WF_UW_FROM_UCONTEXT || cfg->mode > WF_UW_ALTERNATE) return "mode must be 0..2";
    if (cfg->interval_ns != 0 && (cfg->signo <= 0 || cfg->signo >= NSIG))
        return "signo is not a signal number";
    return NULL;
}

/* The first walk of the process initialises the unwinder (locks, caches), and the targets
   (where the signal trampoline is, which a walk from the handler looks for): not in a handler. */
static void warm_up_unwinder(void) {
    wf_uw_targets_get();
    wf_uw_frame frames[WF_UW_MAX_FRAMES];
    ucontext_t uc;
    getcontext(&uc);
    wf_uw_walk walk = {.uc = &uc, .stop_id = WF_UW_ID_ROOT, .frame = frames};
    wf_fault fault;
    wf_uw_walk_guarded(&walk, &fault);
}

static int start_workers(const wf_uw_stress_config *cfg, wf_uw_sampler *samplers,
                         wf_uw_stress_stats *stats) {
    for (uint32_t i = 0; i < cfg->threads; i++) {
        wf_uw_sampler *s = &samplers[i];
        s->cfg = cfg;
        s->worker.rng = (cfg->seed + i) * 0x9e3779b97f4a7c15u | 1;
        s->worker.spin = cfg->spin;
        s->worker.max_depth = cfg->max_depth;
        int rc = pthread_create(&s->thread, NULL, worker_main, s);
        if (rc != 0) {
            snprintf(stats->error, sizeof stats->error, "pthread_create: %s", strerror(rc));
            return (int)i;
        }
    }
    return (int)cfg->threads;
}

int wf_uw_stress_run(const wf_uw_stress_config *cfg, wf_uw_stress_stats *stats) {
    memset(stats, 0, sizeof *stats);
    const char *bad = check_config(cfg);
    if (bad != NULL) {
        snprintf(stats->error, sizeof stats->error, "%s", bad);
        return -1;
    }
    warm_up_guard();
    warm_up_unwinder();
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = wf_uw_on_sample;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (cfg->interval_ns != 0 && sigaction(cfg->signo, &sa, &old) != 0) {
        snprintf(stats->error, sizeof stats->error, "sigaction(%d): %s", cfg->signo,
                 strerror(errno));
        return -1;
    }
    wf_uw_sampler *samplers = calloc(cfg->threads, sizeof *samplers);
    if (samplers == NULL) {
        snprintf(stats->error, sizeof stats->error, "out of memory for %u samplers", cfg->threads);
        return -1;
    }
    uint64_t start = wf_uw_now_ns();
    int started = start_workers(cfg, samplers, stats);
    publish(samplers, started);
    uint64_t sampled_ns = started == (int)cfg->threads ? sleep_ns(cfg->duration_ns) : 0;
    /* Disarm first: at intervals near the walk time the handlers leave the workload no time to
       reach its root and see the stop flag. */
    static const struct itimerspec disarmed;
    for (int i = 0; i < started; i++) {
        samplers[i].armed = 0;
        if (samplers[i].timed) timer_settime(samplers[i].timer, 0, &disarmed, NULL);
        samplers[i].worker.stop = 1;
    }
    for (int i = 0; i < started; i++) {
        pthread_join(samplers[i].thread, NULL);
        add_stats(stats, &samplers[i].stats);
    }
    stats->elapsed_ns = wf_uw_now_ns() - start;
    if (cfg->interval_ns != 0) {
        sigaction(cfg->signo, &old, NULL);
        stats->requested = (uint64_t)started * (sampled_ns / cfg->interval_ns);
    }
    publish(NULL, 0);
    free(samplers);
    return started == (int)cfg->threads ? 0 : -1;
}
