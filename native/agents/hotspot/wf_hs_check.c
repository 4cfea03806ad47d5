/* The GetStackTrace oracle: a JVMTI agent thread that compares ASGCT traces taken in the
 * signal handler with JVMTI GetStackTrace for the same thread, on a subset: one thread a
 * period (check_every_ms), round robin.
 *
 * Each period the checker takes a sample of the next thread (it sends SIGPROF; the thread is
 * most likely running Java) and posts a want for that thread's next hold. The workload calls
 * the native Agent.hold() often; a hold returns at once unless its thread is the wanted one.
 * That one stays in native code, its stack frozen below the native frame, pauses its own
 * timer (samples of a frozen stack add nothing) and wakes the checker, which signals it
 * again for the held sample and calls GetStackTrace itself (the holder is in native code:
 * no handshake, nothing to wait for), then releases it. The one GetStackTrace judges two
 * traces:
 *   held    the held sample: equal frame by frame (method and bci; a native frame is -3 in
 *           ASGCT and -1 in JVMTI);
 *   bottom  the period's running sample: its stack has moved on since, the root frame's
 *           method must agree (the common bottom depth, bci included, is reported).
 * GetStackTrace of a thread running Java instead would be a handshake the checker spins
 * and yields on until the thread reaches a poll: most of the oracle's CPU on a busy machine.
 *
 *   want:  0 --(checker, once a period)--> index+1 of a thread --(that thread's hold)--> 0
 *   held:  0 free --(holder took the want)--> 1 waiting --(checker CAS)--> 2 claimed
 *          2 --(checker done)--> 3 released --(thread leaves hold)--> 0
 *          1 --(thread's deadline, CAS)--> 0          (nobody came)
 *
 * Nobody polls: the checker sleeps on a futex until the next period or a holder's wake-up,
 * and waits on the futex of a thread's word for the handler's trace or the release. A thread
 * polling every 50 us or 1 ms costs a timer interrupt and a context switch each time, which
 * on a virtual machine is tens of microseconds of CPU. The summary says how many holds were
 * offered (holds) and checked (held_checks).
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wf_hs.h"

#define HOLD_WAIT_NS 5000000ull    /* a held thread waits this long to be claimed */
#define SAMPLE_WAIT_NS 50000000ull /* the checker waits this long for the handler */
#define STOP_WAIT_NS 1000000000ull /* VMDeath waits this long for the checker's last check */
#define DETAIL_FRAMES 12           /* frames rendered in a disagreement's detail */

enum { HELD_FREE = 0, HELD_WAITING = 1, HELD_CLAIMED = 2, HELD_RELEASED = 3 };

static volatile int checker_running;
static volatile int want_held;    /* 1: the next hold() stays for a held check */
static volatile int wakeups;      /* futex word of the checker: bumped by holders and by stop */
static volatile int checker_done; /* 1 once checker_main returned, checker_cpu_ns set */
static uint64_t checker_cpu_ns;
static jvmtiFrameInfo gst_frames[WF_HS_MAX_DEPTH];

/* Sleep while *word == seen, at most ns (0: no limit); returns at once when it differs. */
static void futex_wait(volatile int *word, int seen, uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, ns ? &ts : NULL, NULL, 0);
}

/* Wake every sleeper on word. Async-signal-safe (one system call). */
static void futex_wake(volatile int *word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
}

/* Wait until *word == want or the deadline (CLOCK_MONOTONIC ns) passes; 1 if it came. */
static int wait_for(volatile int *word, int want, uint64_t deadline) {
    for (;;) {
        int seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
        if (seen == want) return 1;
        uint64_t now = wf_hs_now_ns();
        if (now >= deadline) return 0;
        futex_wait(word, seen, deadline == UINT64_MAX ? 0 : deadline - now);
    }
}

void wf_hs_check_on_sample(wf_hs_thread *t, const wf_asgct_trace *trace) {
    int expected = WF_HS_PEEK_REQUESTED;
    if (!__atomic_compare_exchange_n(&t->peek, &expected, WF_HS_PEEK_WRITING, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
        return;
    int n = trace->num_frames;
    t->peek_num = n;
    for (int i = 0; i < n; i++) t->peek_frames[i] = trace->frames[i];
    __atomic_store_n(&t->peek, WF_HS_PEEK_SAMPLED, __ATOMIC_RELEASE);
    futex_wake(&t->peek);
}

void wf_hs_check_hold(wf_hs_thread *t) {
    if (!t || !__atomic_load_n(&checker_running, __ATOMIC_ACQUIRE)) return;
    t->holds++;
    int wanted = 1;
    if (!__atomic_compare_exchange_n(&want_held, &wanted, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return; /* no check wanted now: the workload goes on at once */
    wf_hs_timer_pause(t);
    __atomic_store_n(&t->held, HELD_WAITING, __ATOMIC_RELEASE);
    __atomic_fetch_add(&wakeups, 1, __ATOMIC_RELEASE);
    futex_wake(&wakeups);
    wait_for(&t->held, HELD_CLAIMED, wf_hs_now_ns() + HOLD_WAIT_NS);
    int waiting = HELD_WAITING;
    if (!__atomic_compare_exchange_n(&t->held, &waiting, HELD_FREE, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        wait_for(&t->held, HELD_RELEASED, UINT64_MAX); /* claimed: the checker releases it */
        __atomic_store_n(&t->held, HELD_FREE, __ATOMIC_RELEASE);
    }
    wf_hs_timer_resume(t);
}

/* Ask the thread for a sample now and wait for its trace; 1 when peek_* is filled. */
static int request_sample(wf_hs_thread *t) {
    __atomic_store_n(&t->peek, WF_HS_PEEK_REQUESTED, __ATOMIC_RELEASE);
    syscall(SYS_tgkill, getpid(), t->tid, SIGPROF);
    if (wait_for(&t->peek, WF_HS_PEEK_SAMPLED, wf_hs_now_ns() + SAMPLE_WAIT_NS)) return 1;
    int requested = WF_HS_PEEK_REQUESTED;
    if (__atomic_compare_exchange_n(&t->peek, &requested, WF_HS_PEEK_IDLE, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return 0;
    return wait_for(&t->peek, WF_HS_PEEK_SAMPLED, UINT64_MAX); /* the handler is writing */
}

static jint native_as_jvmti(jint lineno) { return lineno == -3 ? -1 : lineno; }

static int frame_equal(const wf_asgct_frame *a, const jvmtiFrameInfo *g) {
    return a->method_id == g->method && native_as_jvmti(a->lineno) == (jint)g->location;
}

static int common_bottom(const wf_asgct_frame *a, int na, const jvmtiFrameInfo *g, int ng) {
    int k = 0;
    while (k < na && k < ng && frame_equal(&a[na - 1 - k], &g[ng - 1 - k])) k++;
    return k;
}

static void method_text(jvmtiEnv *jvmti, jmethodID m, char *out, size_t cap) {
    char *name = NULL;
    jclass klass = NULL;
    char *ksig = NULL;
    if (m && (*jvmti)->GetMethodName(jvmti, m, &name, NULL, NULL) == JVMTI_ERROR_NONE &&
        (*jvmti)->GetMethodDeclaringClass(jvmti, m, &klass) == JVMTI_ERROR_NONE &&
        (*jvmti)->GetClassSignature(jvmti, klass, &ksig, NULL) == JVMTI_ERROR_NONE)
        snprintf(out, cap, "%s.%s", ksig, name);
    else snprintf(out, cap, "?%p", (void *)m);
    if (name) (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    if (ksig) (*jvmti)->Deallocate(jvmti, (unsigned char *)ksig);
}

/* "asgct: a@3 b@7 ... | gst: a@3 c@1 ..." (top first) for a disagreement's detail. */
static void describe(jvmtiEnv *jvmti, const wf_asgct_frame *a, int na, const jvmtiFrameInfo *g,
                     int ng, char *out, size_t cap) {
    size_t used = (size_t)snprintf(out, cap, "asgct:");
    char m[192];
    for (int i = 0; i < na && i < DETAIL_FRAMES && used < cap; i++) {
        method_text(jvmti, a[i].method_id, m, sizeof m);
        used += (size_t)snprintf(out + used, cap - used, " %s@%d", m, a[i].lineno);
    }
    if (used < cap) used += (size_t)snprintf(out + used, cap - used, " | gst:");
    for (int i = 0; i < ng && i < DETAIL_FRAMES && used < cap; i++) {
        method_text(jvmti, g[i].method, m, sizeof m);
        used += (size_t)snprintf(out + used, cap - used, " %s@%d", m, (int)g[i].location);
    }
}

/* Judge one ASGCT trace against the GetStackTrace frames and report it. held: the two must be
 * equal; bottom: the root frames' methods must. */
static void judge(jvmtiEnv *jvmti, int held, const wf_asgct_frame *a, int na, jint ng) {
    if (na <= 0) {
        wf_hs_out_check(held ? "held" : "bottom", -1, na, ng, 0, "asgct returned no frames");
        return;
    }
    int bottom = common_bottom(a, na, gst_frames, ng);
    int agree;
    if (held) {
        agree = na == ng && bottom == na;
    } else {
        /* The root frame's method: its bci moves on with the thread (another call site of
           the root, or the root's own code), so only a different method is a disagreement. */
        agree = ng > 0 && a[na - 1].method_id == gst_frames[ng - 1].method;
    }
    char detail[2048] = "";
    if (!agree) describe(jvmti, a, na, gst_frames, ng, detail, sizeof detail);
    wf_hs_out_check(held ? "held" : "bottom", agree, na, ng, bottom, detail);
}

/* The held thread's GetStackTrace (done by this thread: the holder is in native code, no
 * handshake to wait for) against its held sample and, when this period's running sample was
 * of the same thread, against that one's root frame. */
static void check_held(jvmtiEnv *jvmti, wf_hs_thread *t) {
    int waiting = HELD_WAITING;
    if (!__atomic_compare_exchange_n(&t->held, &waiting, HELD_CLAIMED, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return;
    futex_wake(&t->held);
    jint ng = 0;
    if (request_sample(t) && (*jvmti)->GetStackTrace(jvmti, t->ref, 0, WF_HS_MAX_DEPTH, gst_frames,
                                                     &ng) == JVMTI_ERROR_NONE) {
        judge(jvmti, 1, t->peek_frames, t->peek_num, ng);
        if (t->running_num != WF_HS_NO_RUNNING)
            judge(jvmti, 0, t->running_frames, t->running_num, ng);
    }
    t->running_num = WF_HS_NO_RUNNING;
    __atomic_store_n(&t->peek, WF_HS_PEEK_IDLE, __ATOMIC_RELEASE);
    __atomic_store_n(&t->held, HELD_RELEASED, __ATOMIC_RELEASE);
    futex_wake(&t->held);
}

/* A sample of t now (running Java, most likely), kept for t's next held check. */
static void sample_running(wf_hs_thread *t) {
    if (request_sample(t)) {
        for (int i = 0; i < t->peek_num; i++) t->running_frames[i] = t->peek_frames[i];
        t->running_num = t->peek_num;
    }
    __atomic_store_n(&t->peek, WF_HS_PEEK_IDLE, __ATOMIC_RELEASE);
}

/* Once a period: the next live thread's running sample, and a want for its next hold. */
static void JNICALL checker_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg) {
    (void)jni;
    (void)arg;
    const uint64_t period = (uint64_t)wf_hs_cfg.check_every_ms * 1000000ull;
    uint64_t next_period = wf_hs_now_ns();
    int cursor = 0;
    while (__atomic_load_n(&checker_running, __ATOMIC_ACQUIRE)) {
        int seen = __atomic_load_n(&wakeups, __ATOMIC_ACQUIRE);
        int n = wf_hs_thread_count();
        for (int i = 0; i < n; i++) {
            wf_hs_thread *t = &wf_hs_threads[i];
            if (__atomic_load_n(&t->live, __ATOMIC_ACQUIRE) &&
                __atomic_load_n(&t->held, __ATOMIC_ACQUIRE) == HELD_WAITING)
                check_held(jvmti, t);
        }
        if (n > 0 && wf_hs_now_ns() >= next_period) {
            wf_hs_thread *t = &wf_hs_threads[cursor++ % n];
            __atomic_store_n(&want_held, 0, __ATOMIC_RELEASE); /* last period's, if untaken */
            if (__atomic_load_n(&t->live, __ATOMIC_ACQUIRE)) {
                sample_running(t);
                __atomic_store_n(&want_held, t->index + 1, __ATOMIC_RELEASE);
            }
            next_period = wf_hs_now_ns() + period;
        }
        uint64_t now = wf_hs_now_ns();
        if (now < next_period) futex_wait(&wakeups, seen, next_period - now);
    }
    struct timespec cpu;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
        checker_cpu_ns = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
    __atomic_store_n(&checker_done, 1, __ATOMIC_RELEASE);
    futex_wake(&checker_done);
}

void wf_hs_check_start(JNIEnv *jni) {
    jclass thread_class = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID init = thread_class
                         ? (*jni)->GetMethodID(jni, thread_class, "<init>", "(Ljava/lang/String;)V")
                         : NULL;
    jstring name = (*jni)->NewStringUTF(jni, "walkfuzz-checker");
    jobject thread = init && name ? (*jni)->NewObject(jni, thread_class, init, name) : NULL;
    if (!thread) {
        wf_hs_out_line("{\"type\":\"warning\",\"message\":\"cannot create checker thread\"}");
        return;
    }
    __atomic_store_n(&checker_running, 1, __ATOMIC_RELEASE);
    if ((*wf_hs_jvmti)
            ->RunAgentThread(wf_hs_jvmti, thread, checker_main, NULL, JVMTI_THREAD_NORM_PRIORITY) !=
        JVMTI_ERROR_NONE) {
        __atomic_store_n(&checker_running, 0, __ATOMIC_RELEASE);
        wf_hs_out_line("{\"type\":\"warning\",\"message\":\"RunAgentThread failed\"}");
    }
}

double wf_hs_check_cpu_s(void) {
    return __atomic_load_n(&checker_done, __ATOMIC_ACQUIRE) ? (double)checker_cpu_ns / 1e9 : 0.0;
}

void wf_hs_check_stop(void) {
    if (!__atomic_exchange_n(&checker_running, 0, __ATOMIC_ACQ_REL)) return;
    __atomic_store_n(&want_held, 0, __ATOMIC_RELEASE);
    __atomic_fetch_add(&wakeups, 1, __ATOMIC_RELEASE);
    futex_wake(&wakeups);
    /* The summary comes next and carries the checker's CPU time: let it finish its check. */
    wait_for(&checker_done, 1, wf_hs_now_ns() + STOP_WAIT_NS);
}
