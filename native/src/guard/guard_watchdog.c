/* guard_watchdog.c — turns a hang inside a guarded call into a WF_FAULT_HANG fault.
 *
 * The guarded call itself pays no syscall and reads no clock: it only numbers itself in its
 * thread's slot (guard_internal.h). One watchdog thread per process polls the slots every
 * budget/8; a slot whose active call number stayed the same while its thread used a whole
 * budget of CPU time gets the hang signal through tgkill, and the handler in guard.c unwinds
 * that call. CPU time, not wall time: on a machine whose cores are all busy a thread waits for
 * a CPU far longer than its walk takes, and a wall-time budget there turned correct walks into
 * hangs. A call that blocks (in the C library, where an unwind would not be safe anyway:
 * guard_unsafe_code.c) is no hang here; the process-level timeouts end it (libFuzzer's
 * -timeout, the supervisors' stall checks).
 * The first poll can see a call up to one period late and the check runs once a period, so a
 * spinning call is interrupted after between budget and budget + 2 periods (1.25 × budget) of
 * its CPU time, plus scheduling delay.
 */
#define _GNU_SOURCE
#include "wf_guard.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "guard_internal.h"

enum { WF_WATCHDOG_MAX_THREADS = 1024 }; /* threads that may hold a budget at once */
enum { WF_WATCHDOG_POLLS_PER_BUDGET = 8 };
#define WF_WATCHDOG_MIN_POLL_NS 50000ull     /* finer polling takes CPU from the watched */
#define WF_WATCHDOG_MAX_POLL_NS 100000000ull /* 100 ms */
#define NS_PER_S 1000000000ull

/* The watchdog thread's code is left out of the fuzzers' coverage: how often it polls, and
   whether a poll lands inside a call, follow the machine's load, not the input, and libFuzzer
   would take those edges for coverage an input reached. */
#if defined(__clang__)
#define WATCHDOG_THREAD __attribute__((no_sanitize("coverage")))
#else
#define WATCHDOG_THREAD
#endif

static wf_watch_slot slots[WF_WATCHDOG_MAX_THREADS];
static pthread_mutex_t watchdog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watchdog_wake;
static int watchdog_running;   /* under watchdog_lock */
static pthread_key_t slot_key; /* its destructor frees a thread's slot */
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

/* What the watchdog saw in a slot: the active call, when it first saw it, and the thread's
   CPU time then. */
typedef struct observation {
    uint64_t seq;
    uint64_t since_ns;
    uint64_t since_cpu_ns;
} observation;

WATCHDOG_THREAD static uint64_t clock_ns(clockid_t clock) {
    struct timespec now;
    if (clock_gettime(clock, &now) != 0) return 0;
    return (uint64_t)now.tv_sec * NS_PER_S + (uint64_t)now.tv_nsec;
}

WATCHDOG_THREAD static uint64_t monotonic_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

static void init_wake_condition(void) {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&watchdog_wake, &attr);
    pthread_condattr_destroy(&attr);
}

/* ---- slots ---------------------------------------------------------------------------------- */

static void release_slot(void *slot_pointer) {
    wf_watch_slot *slot = slot_pointer;
    __atomic_store_n(&slot->budget_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->active_seq, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->tid, 0, __ATOMIC_RELEASE);
    wf_guard_watch_slot = NULL;
}

static wf_watch_slot *claim_slot(void) {
    pid_t self = gettid();
    for (int i = 0; i < WF_WATCHDOG_MAX_THREADS; i++) {
        pid_t free_tid = 0;
        if (__atomic_compare_exchange_n(&slots[i].tid, &free_tid, self, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED)) {
            if (pthread_getcpuclockid(pthread_self(), &slots[i].cpu_clock) != 0)
                slots[i].cpu_clock = CLOCK_MONOTONIC; /* no CPU clock: wall time it is */
            pthread_setspecific(slot_key, &slots[i]);
            return &slots[i];
        }
    }
    return NULL;
}

/* fork() leaves the child with one thread and no watchdog: free the other threads' slots, take
   over ours under the new tid, and let the next wf_guard_set_budget_ns start a watchdog. */
static void after_fork_in_child(void) {
    pthread_mutex_init(&watchdog_lock, NULL);
    init_wake_condition();
    watchdog_running = 0;
    for (int i = 0; i < WF_WATCHDOG_MAX_THREADS; i++)
        if (&slots[i] != wf_guard_watch_slot) slots[i].tid = 0;
    if (wf_guard_watch_slot != NULL) {
        wf_guard_watch_slot->tid = gettid();
        if (pthread_getcpuclockid(pthread_self(), &wf_guard_watch_slot->cpu_clock) != 0)
            wf_guard_watch_slot->cpu_clock = CLOCK_MONOTONIC;
    }
}

static void setup_process(void) {
    init_wake_condition();
    pthread_key_create(&slot_key, release_slot);
    pthread_atfork(NULL, NULL, after_fork_in_child);
}

/* ---- the watchdog thread -------------------------------------------------------------------- */

WATCHDOG_THREAD static void interrupt(wf_watch_slot *slot, pid_t tid, uint64_t seq) {
    __atomic_store_n(&slot->kill_seq, seq, __ATOMIC_RELEASE);
    syscall(SYS_tgkill, getpid(), tid, wf_guard_hang_signal());
}

/* One look at one slot; returns its budget if it is watched, else 0. */
WATCHDOG_THREAD static uint64_t check_slot(wf_watch_slot *slot, observation *seen, uint64_t now) {
    pid_t tid = __atomic_load_n(&slot->tid, __ATOMIC_ACQUIRE);
    uint64_t budget = __atomic_load_n(&slot->budget_ns, __ATOMIC_RELAXED);
    if (tid == 0 || budget == 0) return 0;
    uint64_t seq = __atomic_load_n(&slot->active_seq, __ATOMIC_ACQUIRE);
    if (seq != seen->seq) {
        seen->seq = seq;
        seen->since_ns = now;
        seen->since_cpu_ns = seq != 0 ? clock_ns(slot->cpu_clock) : 0;
        return budget;
    }
    /* A call's CPU time never exceeds its wall time: read the CPU clock (a syscall) only
       once a whole budget of wall time has passed. */
    if (seq == 0 || now - seen->since_ns < budget ||
        __atomic_load_n(&slot->kill_seq, __ATOMIC_RELAXED) == seq)
        return budget;
    if (clock_ns(slot->cpu_clock) - seen->since_cpu_ns >= budget) interrupt(slot, tid, seq);
    return budget;
}

/* Poll every slot; return the next poll period, or 0 when no thread is watched. */
WATCHDOG_THREAD static uint64_t poll_slots(observation *seen) {
    uint64_t now = monotonic_ns(), smallest_budget = 0;
    for (int i = 0; i < WF_WATCHDOG_MAX_THREADS; i++) {
        uint64_t budget = check_slot(&slots[i], &seen[i], now);
        if (budget != 0 && (smallest_budget == 0 || budget < smallest_budget))
            smallest_budget = budget;
    }
    if (smallest_budget == 0) return 0;
    uint64_t period = smallest_budget / WF_WATCHDOG_POLLS_PER_BUDGET;
    if (period < WF_WATCHDOG_MIN_POLL_NS) period = WF_WATCHDOG_MIN_POLL_NS;
    if (period > WF_WATCHDOG_MAX_POLL_NS) period = WF_WATCHDOG_MAX_POLL_NS;
    return period;
}

WATCHDOG_THREAD static void *watchdog_main(void *unused) {
    static observation seen[WF_WATCHDOG_MAX_THREADS];
    pthread_mutex_lock(&watchdog_lock);
    for (;;) {
        uint64_t period = poll_slots(seen);
        if (period == 0) {
            pthread_cond_wait(&watchdog_wake, &watchdog_lock);
            continue;
        }
        uint64_t deadline = monotonic_ns() + period;
        struct timespec until = {.tv_sec = (time_t)(deadline / NS_PER_S),
                                 .tv_nsec = (long)(deadline % NS_PER_S)};
        pthread_cond_timedwait(&watchdog_wake, &watchdog_lock, &until);
    }
    return NULL;
}

/* Started with every signal blocked, so that no process-directed signal (SIGPROF from a
   sampler, SIGINT) is ever delivered to the watchdog. Called under watchdog_lock. */
static int start_watchdog(void) {
    wf_guard_install_hang_handler();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    int err = pthread_create(&thread, NULL, watchdog_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err != 0) return -1;
    pthread_detach(thread);
    watchdog_running = 1;
    return 0;
}

/* ---- API ------------------------------------------------------------------------------------ */

int wf_guard_set_budget_ns(uint64_t budget_ns) {
    pthread_once(&setup_once, setup_process);
    wf_watch_slot *slot = wf_guard_watch_slot;
    if (slot == NULL) {
        if (budget_ns == 0) return 0;
        slot = claim_slot();
        if (slot == NULL) return -1;
        wf_guard_watch_slot = slot;
    }
    pthread_mutex_lock(&watchdog_lock);
    int status = watchdog_running ? 0 : start_watchdog();
    __atomic_store_n(&slot->budget_ns, status == 0 ? budget_ns : 0, __ATOMIC_RELEASE);
    pthread_cond_signal(&watchdog_wake);
    pthread_mutex_unlock(&watchdog_lock);
    return status;
}

uint64_t wf_guard_budget_ns(void) {
    wf_watch_slot *slot = wf_guard_watch_slot;
    return slot == NULL ? 0 : __atomic_load_n(&slot->budget_ns, __ATOMIC_RELAXED);
}
