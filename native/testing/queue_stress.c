/* queue_stress.c — ASGST_Enqueue from real per-thread timer signals (wf_queue_stress.h).
 * The signal handler does the least possible: Enqueue, two clock reads, counters in TLS.
 *
 * What the clock reads measure. The window between the two TSC reads holds the Enqueue and
 * also part of the reads themselves, and the first read after the kernel entered the
 * handler runs cold. So the handler alternates: even signals time the Enqueue, odd signals
 * time an empty window (the same two reads, nothing between) and then call Enqueue untimed.
 * Both windows open at the same point of the same handler in the same run, and every
 * signal enqueues, so the queue sees the same traffic; the empty windows are the timing
 * overhead to take off the Enqueue windows (wf_queue_stress.h, docs/queue.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <x86intrin.h>

#include "asgst.h"
#include "wf_queue.h"
#include "wf_queue_stress.h"
#include "wf_thread_timer.h"
#include "wf_ucontext.h"
#include "wf_walker.h"

#define STRESS_SIGNAL (SIGRTMIN + 5)
#define NESTED_SIGNAL (SIGRTMIN + 7) /* params.nested: the second timer's */

typedef struct worker {
    const wf_queue_stress_params *p;
    pthread_t thread;
    ucontext_t context; /* what every signal enqueues */
    ASGST_Queue *queue;
    uint64_t signals, enqueued, rejected; /* written by the handler (atomic: it nests) */
    uint64_t nested_signals;
    uint32_t depth; /* handler runs in progress on this thread */
    volatile uint64_t timed, enqueue_ns, hist[WF_QUEUE_STRESS_HIST];     /* Enqueue windows */
    volatile uint64_t empty, empty_ns, empty_hist[WF_QUEUE_STRESS_HIST]; /* empty windows */
    uint64_t safepoints, walked, wrong_walks;
    volatile uint64_t spin; /* the busy work between polls */
    wf_queue_counters counters;
    int error;
} worker;

static __thread worker *current __attribute__((tls_model("initial-exec")));
/* The reference walker's table: its ASGST and wf_queue symbols are hidden in the core, so
   this extension calls them through it. Set before any queue exists. */
static const wf_walker *ref;
static atomic_int stop;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO, async-signal-safe */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double ns_per_tick; /* TSC calibration, set before the workers start */

/* One timed window of `ticks` TSC ticks into a histogram and its sum. */
static void record(uint64_t ticks, volatile uint64_t *count, volatile uint64_t *sum_ns,
                   volatile uint64_t *hist) {
    uint64_t ns = (uint64_t)((double)ticks * ns_per_tick);
    uint64_t bucket = ns / WF_QUEUE_STRESS_HIST_NS;
    hist[bucket < WF_QUEUE_STRESS_HIST ? bucket : WF_QUEUE_STRESS_HIST - 1]++;
    *sum_ns += ns;
    ++*count;
}

static void count(uint64_t *counter) { __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED); }

/* One Enqueue; even signals time it with the TSC (a vDSO clock read costs about as much as
   the Enqueue being timed), odd ones time an empty window first (see the top). */
static int timed_enqueue(worker *w, uint64_t n) {
    void *arg = (void *)(uintptr_t)n;
    if (n % 2 == 0) {
        uint64_t t0 = __rdtsc();
        int rc = ref->enqueue(w->queue, &w->context, arg);
        record(__rdtsc() - t0, &w->timed, &w->enqueue_ns, w->hist);
        return rc;
    }
    uint64_t t0 = __rdtsc();
    uint64_t t1 = __rdtsc();
    record(t1 - t0, &w->empty, &w->empty_ns, w->empty_hist);
    return ref->enqueue(w->queue, &w->context, arg);
}

static void on_signal(int sig, siginfo_t *info, void *uc) {
    int saved = errno;
    worker *w = current;
    if (w != NULL && w->queue != NULL) {
        if (__atomic_fetch_add(&w->depth, 1, __ATOMIC_RELAXED) > 0) count(&w->nested_signals);
        uint64_t n = __atomic_fetch_add(&w->signals, 1, __ATOMIC_RELAXED);
        int rc = w->p->nested ? ref->enqueue(w->queue, &w->context, (void *)(uintptr_t)n)
                              : timed_enqueue(w, n);
        count(rc == 1 ? &w->enqueued : &w->rejected);
        __atomic_fetch_sub(&w->depth, 1, __ATOMIC_RELAXED);
    }
    errno = saved;
}

/* Queue handler at a safepoint: walk the element, check what the truth says it must give. */
static void on_element(ASGST_Iterator *it, void *queue_arg, void *arg) {
    worker *w = queue_arg;
    ASGST_Frame f;
    uint32_t n = 0;
    int rc;
    while ((rc = ref->next_frame(it, &f)) == 1) n++;
    w->walked++;
    if (rc != 0 || n != w->p->expect_frames) w->wrong_walks++;
}

/* The worker's timers: its own signal's, and with `nested` one more at 3/5 of its interval
   plus 1 ns, so that the two drift over each other instead of keeping in step. */
static int arm_timers(worker *w, timer_t timers[2]) {
    const wf_queue_stress_params *p = w->p;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    int rc = wf_thread_timer_start(tid, STRESS_SIGNAL, p->interval_ns, &timers[0]);
    if (rc != 0 || !p->nested) return rc;
    rc = wf_thread_timer_start(tid, NESTED_SIGNAL, p->interval_ns / 5 * 3 + 1, &timers[1]);
    if (rc != 0) timer_delete(timers[0]);
    return rc;
}

static void disarm_timers(const worker *w, timer_t timers[2]) {
    timer_delete(timers[0]);
    if (w->p->nested) timer_delete(timers[1]);
}

static void poll_safepoint(worker *w) {
    const wf_queue_stress_params *p = w->p;
    if (ref->queue_safepoint(p->poll_sp, p->poll_fp, p->poll_pc) >= 0) w->safepoints++;
}

static void *work(void *arg) {
    worker *w = arg;
    const wf_queue_stress_params *p = w->p;
    timer_t timers[2];
    w->queue = ref->register_queue(NULL, (int)p->capacity, 0, on_element, w);
    if (w->queue == NULL) {
        w->error = -ENOMEM;
        return NULL;
    }
    current = w;
    w->error = arm_timers(w, timers);
    if (w->error == 0) {
        while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
            for (uint32_t i = 0; i < p->poll_every; i++) w->spin = w->spin + i;
            poll_safepoint(w);
        }
        disarm_timers(w, timers);
    }
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, STRESS_SIGNAL);
    sigaddset(&block, NESTED_SIGNAL);
    pthread_sigmask(SIG_BLOCK, &block, NULL); /* a late signal stays pending, uncounted */
    poll_safepoint(w);                        /* drain: everything enqueued gets walked */
    wf_walker_reference_queue_counters(w->queue, &w->counters);
    ref->deregister_queue(NULL, w->queue);
    w->queue = NULL;
    current = NULL;
    return NULL;
}

static void make_context(worker *w) {
    const wf_queue_stress_params *p = w->p;
    memset(&w->context, 0, sizeof w->context);
    wf_uc_set_frame(&w->context, p->pc, p->sp, p->fp);
}

static void add_up(const worker *w, wf_queue_stress_result *out) {
    out->signals += w->signals;
    out->nested_signals += w->nested_signals;
    out->enqueued += w->enqueued;
    out->rejected += w->rejected;
    out->timed += w->timed;
    out->enqueue_ns += w->enqueue_ns;
    out->empty += w->empty;
    out->empty_ns += w->empty_ns;
    for (int i = 0; i < WF_QUEUE_STRESS_HIST; i++) {
        out->enqueue_hist[i] += w->hist[i];
        out->empty_hist[i] += w->empty_hist[i];
    }
    out->attempts += w->counters.attempts;
    out->full += w->counters.full;
    out->other += w->counters.other;
    out->walk_failed += w->counters.walk_failed;
    out->processed += w->counters.processed;
    out->dropped += w->counters.dropped;
    out->safepoints += w->safepoints;
    out->walked += w->walked;
    out->wrong_walks += w->wrong_walks;
    if (out->error == 0) out->error = w->error;
}

static int start_workers(worker *ws, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        int rc = pthread_create(&ws[i].thread, NULL, work, &ws[i]);
        if (rc != 0) {
            atomic_store(&stop, 1);
            for (uint32_t j = 0; j < i; j++) pthread_join(ws[j].thread, NULL);
            return -rc;
        }
    }
    return 0;
}

/* ns per TSC tick, over a 20 ms sleep. */
static double calibrate_tsc(void) {
    uint64_t n0 = now_ns(), t0 = __rdtsc();
    struct timespec d = {0, 20000000};
    nanosleep(&d, NULL);
    return (double)(now_ns() - n0) / (double)(__rdtsc() - t0);
}

int wf_queue_stress_run(const wf_queue_stress_params *p, wf_queue_stress_result *out) {
    static worker ws[WF_QUEUE_STRESS_MAX_THREADS];
    memset(out, 0, sizeof *out);
    if (p->threads == 0 || p->threads > WF_QUEUE_STRESS_MAX_THREADS || p->interval_ns == 0 ||
        p->interval_ns >= 1000000000u)
        return out->error = -EINVAL;
    ref = wf_walker_reference();
    ns_per_tick = calibrate_tsc();
    struct sigaction old, old_nested;
    int installed = wf_sampling_handler_install(STRESS_SIGNAL, on_signal, &old);
    if (installed != 0) return out->error = installed;
    installed = wf_sampling_handler_install(NESTED_SIGNAL, on_signal, &old_nested);
    if (installed != 0) {
        sigaction(STRESS_SIGNAL, &old, NULL);
        return out->error = installed;
    }
    memset(ws, 0, sizeof ws);
    for (uint32_t i = 0; i < p->threads; i++) {
        ws[i].p = p;
        make_context(&ws[i]);
    }
    atomic_store(&stop, 0);
    uint64_t t0 = now_ns();
    int rc = start_workers(ws, p->threads);
    if (rc == 0) {
        struct timespec d = {p->duration_ms / 1000, (long)(p->duration_ms % 1000) * 1000000};
        nanosleep(&d, NULL);
        atomic_store(&stop, 1);
        for (uint32_t i = 0; i < p->threads; i++) pthread_join(ws[i].thread, NULL);
        for (uint32_t i = 0; i < p->threads; i++) add_up(&ws[i], out);
    }
    out->run_ns = now_ns() - t0;
    sigaction(STRESS_SIGNAL, &old, NULL);
    sigaction(NESTED_SIGNAL, &old_nested, NULL);
    if (rc != 0) out->error = rc;
    return out->error;
}
