/* The agent's run configuration and its table of workload threads: what every other file of
 * the agent reads, defined here so that each of them depends on this file and not on the
 * one that fills them (wf_hs_agent.c parses the options into wf_hs_cfg and attaches the threads).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wf_hs.h"

wf_hs_config wf_hs_cfg;
jvmtiEnv *wf_hs_jvmti;
JavaVM *wf_hs_vm;
wf_hs_thread wf_hs_threads[WF_HS_MAX_THREADS];

static __attribute__((tls_model("initial-exec"))) __thread wf_hs_thread *tls_self;
static int thread_high_water;
static pthread_mutex_t thread_lock = PTHREAD_MUTEX_INITIALIZER;

wf_hs_thread *wf_hs_self(void) { return tls_self; }

int wf_hs_thread_count(void) { return __atomic_load_n(&thread_high_water, __ATOMIC_ACQUIRE); }

/* ---- thread table --------------------------------------------------------------------------- */

static void stack_bounds(uintptr_t *lo, uintptr_t *hi) {
    pthread_attr_t attr;
    void *addr = NULL;
    size_t size = 0;
    *lo = *hi = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            *lo = (uintptr_t)addr;
            *hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
}

static intptr_t nothing(void *arg) {
    (void)arg;
    return 0;
}

/* The guard prepares a thread (handlers, alternate stack) on its first guarded call; do that
 * here, in a JVMTI callback, rather than in the first SIGPROF handler. */
static void prepare_guard(void) {
    intptr_t result;
    wf_fault fault;
    wf_guard_call(nothing, NULL, &result, &fault);
    if (wf_hs_cfg.budget_ns) wf_guard_set_budget_ns(wf_hs_cfg.budget_ns);
}

wf_hs_thread *wf_hs_thread_attach(JNIEnv *env, jthread thread) {
    pthread_mutex_lock(&thread_lock);
    wf_hs_thread *t = NULL;
    for (int i = 0; i < WF_HS_MAX_THREADS; i++) {
        if (!wf_hs_threads[i].live && !wf_hs_threads[i].tid) {
            t = &wf_hs_threads[i];
            t->index = i;
            if (i + 1 > thread_high_water)
                __atomic_store_n(&thread_high_water, i + 1, __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&thread_lock);
    if (!t) return NULL;
    t->tid = (pid_t)syscall(SYS_gettid);
    t->env = env;
    t->ref = (*env)->NewGlobalRef(env, thread);
    t->running_num = WF_HS_NO_RUNNING;
    t->rng = wf_hs_cfg.seed * 0x9E3779B97F4A7C15ull + (uint64_t)t->tid * 0xBF58476D1CE4E5B9ull + 1;
    stack_bounds(&t->stack_lo, &t->stack_hi);
    if (wf_hs_cfg.mode != WF_HS_MODE_CONTROL) prepare_guard();
    __atomic_store_n(&t->live, 1, __ATOMIC_RELEASE);
    tls_self = t; /* last: a signal sees either no slot or a complete one */
    return t;
}

void wf_hs_thread_detach(void) {
    wf_hs_thread *t = tls_self;
    if (!t) return;
    tls_self = NULL;
    struct timespec ts;
    clockid_t cid;
    if (pthread_getcpuclockid(pthread_self(), &cid) == 0 && clock_gettime(cid, &ts) == 0)
        t->cpu_ns_at_exit = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    __atomic_store_n(&t->live, 0, __ATOMIC_RELEASE);
    /* The slot keeps tid != 0 so its counters stay in the summary; it is never reused. */
}
