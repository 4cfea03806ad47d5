/* queue_signal_cost.c — CPU time per signal with and without ASGST_Enqueue in the handler
 * (wf_queue_signal_cost.h). No clock is read inside the handler: the thread's CPU clock is
 * read around stretches of signals, between which the signal is blocked. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "asgst.h"
#include "wf_queue.h"
#include "wf_queue_signal_cost.h"
#include "wf_thread_timer.h"
#include "wf_ucontext.h"
#include "wf_walker.h"

#define COST_SIGNAL (SIGRTMIN + 6)

enum { VARIANT_EMPTY = 0, VARIANT_ENQUEUE = 1 };

typedef struct cost_run {
    const wf_queue_signal_cost_params *p;
    wf_queue_signal_cost_result *out;
    ucontext_t context; /* what variant 1 enqueues */
    ASGST_Queue *queue;
    volatile int variant;      /* read by the handler, set between stretches */
    volatile uint32_t handled; /* signals of the current stretch */
    volatile uint64_t enqueued, rejected;
    double added[WF_QUEUE_COST_MAX_STRETCHES]; /* per stretch pair: ns per signal, 1 - 0 */
} cost_run;

static __thread cost_run *current __attribute__((tls_model("initial-exec")));
/* The reference walker's table: its ASGST and wf_queue symbols are hidden in the core, so
   this extension calls them through it. Set before any queue exists. */
static const wf_walker *ref;

/* The two variants differ by the Enqueue call only. */
static void on_signal(int sig, siginfo_t *info, void *uc) {
    int saved = errno;
    cost_run *r = current;
    if (r != NULL) {
        if (r->variant == VARIANT_ENQUEUE) {
            if (ref->enqueue(r->queue, &r->context, NULL) == 1) r->enqueued++;
            else r->rejected++;
        }
        r->handled++;
    }
    errno = saved;
}

static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Take p->signals signals: wait for the timer's (the signal is blocked outside
   sigsuspend), or send them to this thread one by one, each handled before tgkill returns. */
static void take_stretch(cost_run *r, const sigset_t *unblocked) {
    if (r->p->source == WF_QUEUE_COST_TIMER) {
        while (r->handled < r->p->signals) sigsuspend(unblocked);
        return;
    }
    pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
    sigset_t blocked;
    pthread_sigmask(SIG_SETMASK, unblocked, &blocked);
    while (r->handled < r->p->signals) syscall(SYS_tgkill, pid, tid, COST_SIGNAL);
    pthread_sigmask(SIG_SETMASK, &blocked, NULL);
}

/* One stretch of variant v, its CPU time and signals added to v's totals; ns per signal. */
static double stretch(cost_run *r, int v, const sigset_t *unblocked) {
    r->variant = v;
    r->handled = 0;
    uint64_t t0 = thread_cpu_ns();
    take_stretch(r, unblocked);
    uint64_t took = thread_cpu_ns() - t0;
    r->out->cpu_ns[v] += took;
    r->out->signals[v] += r->handled;
    return (double)took / (double)r->handled;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the pairs' differences: a stretch that was preempted, or ran after another
   process had the core, moves the means but only one pair of the median. */
static double median_added(cost_run *r, uint32_t n) {
    qsort(r->added, n, sizeof r->added[0], by_value);
    return n % 2 ? r->added[n / 2] : (r->added[n / 2 - 1] + r->added[n / 2]) / 2;
}

static int drain(const cost_run *r) {
    const wf_queue_signal_cost_params *p = r->p;
    return ref->queue_safepoint(p->poll_sp, p->poll_fp, p->poll_pc);
}

/* The stretches, on a thread with COST_SIGNAL blocked and a queue registered. */
static void take_signals(cost_run *r) {
    sigset_t unblocked;
    pthread_sigmask(SIG_BLOCK, NULL, &unblocked);
    sigdelset(&unblocked, COST_SIGNAL);
    for (uint32_t i = 0; i < r->p->stretches; i++) {
        double empty = stretch(r, VARIANT_EMPTY, &unblocked);
        r->added[i] = stretch(r, VARIANT_ENQUEUE, &unblocked) - empty;
        int n = drain(r);
        if (n > 0) r->out->processed += (uint64_t)n;
    }
    r->out->added_median_ns = median_added(r, r->p->stretches);
}

/* The drains only empty the queue: what a walk costs is wf_queue_bench's business. */
static void on_element(ASGST_Iterator *it, void *queue_arg, void *arg) {}

static void *cost_thread(void *arg) {
    cost_run *r = arg;
    r->queue = ref->register_queue(NULL, (int)r->p->signals, 0, on_element, NULL);
    timer_t timer;
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, COST_SIGNAL);
    pthread_sigmask(SIG_BLOCK, &block, NULL);
    current = r;
    int timed = r->p->source == WF_QUEUE_COST_TIMER;
    if (r->queue == NULL) r->out->error = -ENOMEM;
    else if (timed)
        r->out->error = wf_thread_timer_start((pid_t)syscall(SYS_gettid), COST_SIGNAL,
                                              r->p->interval_ns, &timer);
    if (r->out->error == 0) {
        take_signals(r);
        if (timed) timer_delete(timer); /* a late signal stays pending, never handled */
    }
    current = NULL;
    if (r->queue != NULL) ref->deregister_queue(NULL, r->queue);
    return NULL;
}

static void make_context(ucontext_t *uc, const wf_queue_signal_cost_params *p) {
    memset(uc, 0, sizeof *uc);
    wf_uc_set_frame(uc, p->pc, p->sp, p->fp);
}

int wf_queue_signal_cost(const wf_queue_signal_cost_params *p, wf_queue_signal_cost_result *out) {
    static cost_run run;
    memset(out, 0, sizeof *out);
    if (p->source > WF_QUEUE_COST_SELF || p->stretches == 0 ||
        p->stretches > WF_QUEUE_COST_MAX_STRETCHES || p->signals == 0 ||
        p->signals > WF_QUEUE_MAX_CAPACITY ||
        (p->source == WF_QUEUE_COST_TIMER &&
         (p->interval_ns == 0 || p->interval_ns >= 1000000000u)))
        return out->error = -EINVAL;
    ref = wf_walker_reference();
    struct sigaction old;
    int installed = wf_sampling_handler_install(COST_SIGNAL, on_signal, &old);
    if (installed != 0) return out->error = installed;
    memset(&run, 0, sizeof run);
    run.p = p;
    run.out = out;
    make_context(&run.context, p);
    pthread_t thread;
    int rc = pthread_create(&thread, NULL, cost_thread, &run);
    if (rc == 0) pthread_join(thread, NULL);
    else out->error = -rc;
    out->enqueued = run.enqueued;
    out->rejected = run.rejected;
    sigaction(COST_SIGNAL, &old, NULL);
    return out->error;
}
