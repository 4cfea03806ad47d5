/* guard_testing.c — instruments for the crash guard's tests; contracts in wf_guard_testing.h. */
#define _GNU_SOURCE
#include "wf_guard_testing.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch/x86_64/wf_guard_test_code.h"
#include "wf_ucontext.h"
#include "wf_arch.h"

enum { WF_GUARD_TEST_MAX_THREADS = 64 };
enum { RECORDED_EXIT = 42, RECORDED_PLAIN_EXIT = 43 };

/* ---- functions that fault in a known way ---------------------------------------------------- */

extern void safefetch_continuation(void);

static int resume_safefetch(int signo, siginfo_t *info, void *ucontext) {
    if ((signo != SIGSEGV && signo != SIGBUS) ||
        wf_uc_pc(ucontext) != (uintptr_t)wf_guard_test_safefetch)
        return 0;
    wf_uc_set_pc(ucontext, (uintptr_t)safefetch_continuation);
    return 1;
}

void wf_guard_test_use_safefetch_responder(int on) {
    wf_guard_set_first_responder(on ? resume_safefetch : NULL);
}

/* ---- small guarded functions ---------------------------------------------------------------- */

intptr_t wf_guard_test_identity(void *arg) { return (intptr_t)arg; }

intptr_t wf_guard_test_depth(void *unused) { return wf_guard_depth(); }

static uint64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

intptr_t wf_guard_test_spin(void *limit_ns) {
    uint64_t start = monotonic_ns();
    while (monotonic_ns() - start < (uint64_t)(uintptr_t)limit_ns) continue;
    return 0;
}

/* nanosleep as one `syscall` instruction here, not in the C library: a hang signal lands in
   this code, where the guard would unwind a wall-time hang (guard_unsafe_code.c). */
static long raw_nanosleep(struct timespec *request, struct timespec *left) {
    return wf_arch_syscall3(SYS_nanosleep, (long)request, (long)left, 0);
}

intptr_t wf_guard_test_sleep(void *ns) {
    struct timespec left = {(time_t)((uintptr_t)ns / 1000000000ull),
                            (long)((uintptr_t)ns % 1000000000ull)};
    while (raw_nanosleep(&left, &left) != 0) continue; /* a signal came: sleep the rest */
    return 0;
}

intptr_t wf_guard_test_alloc_spin(void *limit_ns) {
    uint64_t start = monotonic_ns(), rounds = 0;
    while (monotonic_ns() - start < (uint64_t)(uintptr_t)limit_ns) {
        /* past the thread cache and the fast bins: each call takes the arena's lock */
        void *volatile p = malloc(100 * 1024);
        free(p);
        rounds++;
    }
    return (intptr_t)rounds;
}

intptr_t wf_guard_test_progress_then_read(void *addr) {
    wf_guard_progress(3, 0x7000, 0x7100, 0x7200);
    return wf_guard_test_read(addr);
}

intptr_t wf_guard_test_nested_read(void *addr) {
    intptr_t value;
    wf_fault fault;
    if (wf_guard_call(wf_guard_test_read, addr, &value, &fault) == 0) return -1;
    return (intptr_t)fault.addr;
}

/* Through a pointer so that the compiler can neither inline it nor see what happens to the
   array it is given: the array stays address-taken and the ASan interceptor runs. */
static void *(*volatile memset_fn)(void *, int, size_t) = memset;

intptr_t wf_guard_test_redzones_then_read(void *addr) {
    char array[1024];
    memset_fn(array, 1, sizeof array);
    return wf_guard_test_read(addr) + array[0];
}

__attribute__((no_sanitize("address"))) intptr_t wf_guard_test_fill_stack(void *unused) {
    char stack[16 * 1024];
    memset_fn(stack, 0x5a, sizeof stack);
    return stack[0] - 0x5a;
}

intptr_t wf_guard_test_block_then_read(void *addr) {
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);
    return wf_guard_test_read(addr);
}

/* ---- stack overflow ------------------------------------------------------------------------- */

static volatile uintptr_t recursion_limit = UINTPTR_MAX; /* never reached; keeps a base case */

static intptr_t recurse(void *depth) {
    volatile char frame_padding[512];
    frame_padding[0] = (char)(uintptr_t)depth;
    if ((uintptr_t)depth >= recursion_limit) return 0;
    return recurse((char *)depth + 1) + frame_padding[0];
}

typedef struct overflow_run {
    wf_fault *fault;
    int status;
} overflow_run;

static void *overflow_thread(void *run_pointer) {
    overflow_run *run = run_pointer;
    intptr_t value;
    run->status = wf_guard_call(recurse, NULL, &value, run->fault);
    return NULL;
}

int wf_guard_test_overflow_in_thread(size_t stack_bytes, wf_fault *fault) {
    overflow_run run = {.fault = fault, .status = -1};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, stack_bytes);
    pthread_t thread;
    int err = pthread_create(&thread, &attr, overflow_thread, &run);
    pthread_attr_destroy(&attr);
    if (err != 0) return -1;
    pthread_join(thread, NULL);
    return run.status;
}

int wf_guard_test_has_altstack(void) {
    stack_t current;
    return sigaltstack(NULL, &current) == 0 && !(current.ss_flags & SS_DISABLE);
}

/* ---- many faults ---------------------------------------------------------------------------- */

uint64_t wf_guard_test_fault_loop(uintptr_t addr, uint64_t count, uint64_t *wrong) {
    uint64_t faults = 0;
    *wrong = 0;
    for (uint64_t i = 0; i < count; i++) {
        intptr_t value;
        wf_fault fault = {0};
        int status = wf_guard_call(wf_guard_test_read, (void *)addr, &value, &fault);
        if (status == 1 && fault.signo == SIGSEGV && fault.addr == addr) faults++;
        else (*wrong)++;
    }
    return faults;
}

/* The threads wait for one start flag, so that their faults overlap; if a thread cannot be
   created the others are released with nothing to do. */
typedef struct concurrent_start {
    int go;      /* 1 = start faulting, 2 = give up */
    int waiting; /* threads spinning on go */
} concurrent_start;

typedef struct concurrent_run {
    wf_guard_test_thread *thread;
    uint64_t faults_each;
    concurrent_start *start;
} concurrent_run;

static void *faulting_thread(void *run_pointer) {
    concurrent_run *run = run_pointer;
    wf_guard_test_thread *self = run->thread;
    __atomic_add_fetch(&run->start->waiting, 1, __ATOMIC_ACQ_REL);
    int go;
    while ((go = __atomic_load_n(&run->start->go, __ATOMIC_ACQUIRE)) == 0) sched_yield();
    for (uint64_t i = 0; go == 1 && i < run->faults_each; i++) {
        intptr_t value;
        wf_fault fault = {0};
        int status = wf_guard_call(wf_guard_test_read, (void *)self->addr, &value, &fault);
        if (status == 1 && fault.signo == SIGSEGV && fault.addr == self->addr) self->faults++;
        else self->wrong++;
        self->last_addr = fault.addr;
    }
    return NULL;
}

int wf_guard_test_concurrent_faults(wf_guard_test_thread *threads, int count,
                                    uint64_t faults_each) {
    if (count < 1 || count > WF_GUARD_TEST_MAX_THREADS) return -1;
    pthread_t ids[WF_GUARD_TEST_MAX_THREADS];
    concurrent_run runs[WF_GUARD_TEST_MAX_THREADS];
    concurrent_start start = {0, 0};
    int started = 0;
    for (; started < count; started++) {
        threads[started].faults = threads[started].wrong = 0;
        runs[started] = (concurrent_run){&threads[started], faults_each, &start};
        if (pthread_create(&ids[started], NULL, faulting_thread, &runs[started]) != 0) break;
    }
    while (__atomic_load_n(&start.waiting, __ATOMIC_ACQUIRE) < started) sched_yield();
    __atomic_store_n(&start.go, started == count ? 1 : 2, __ATOMIC_RELEASE);
    for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
    return started == count ? 0 : -1;
}

/* ---- mappings ------------------------------------------------------------------------------- */

uintptr_t wf_guard_test_map(size_t len, int prot, int fd) {
    int flags = fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED;
    void *addr = mmap(NULL, len, prot, flags, fd, 0);
    return addr == MAP_FAILED ? 0 : (uintptr_t)addr;
}

int wf_guard_test_unmap(uintptr_t addr, size_t len) { return munmap((void *)addr, len); }

/* ---- a previous handler that records ------------------------------------------------------- */

/* Appends the decimal (base 10) or hex (base 16) digits of value; async-signal-safe. */
static size_t append_number(char *out, size_t at, uintmax_t value, unsigned base) {
    char digits[24];
    size_t n = 0;
    do {
        digits[n++] = "0123456789abcdef"[value % base];
        value /= base;
    } while (value != 0);
    while (n > 0) out[at++] = digits[--n];
    return at;
}

static size_t append_text(char *out, size_t at, const char *text) {
    size_t len = strlen(text);
    memcpy(out + at, text, len);
    return at + len;
}

static void record_siginfo_and_exit(int signo, siginfo_t *info, void *ucontext) {
    char line[128];
    size_t at = append_text(line, 0, "recorded signo=");
    at = append_number(line, at, (uintmax_t)signo, 10);
    int code = info->si_code;
    at = append_text(line, at, code < 0 ? " code=-" : " code=");
    at = append_number(line, at, (uintmax_t)(code < 0 ? -code : code), 10);
    at = append_text(line, at, " addr=0x");
    at = append_number(line, at, (uintptr_t)info->si_addr, 16);
    line[at++] = '\n';
    (void)!write(1, line, at);
    _exit(RECORDED_EXIT);
}

static void record_plain_and_exit(int signo) {
    char line[64];
    size_t at = append_text(line, 0, "recorded signo=");
    at = append_number(line, at, (uintmax_t)signo, 10);
    at = append_text(line, at, " plain\n");
    (void)!write(1, line, at);
    _exit(RECORDED_PLAIN_EXIT);
}

int wf_guard_test_install_recording_handler(int signo, int siginfo) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    sigemptyset(&action.sa_mask);
    if (siginfo) {
        action.sa_sigaction = record_siginfo_and_exit;
        action.sa_flags = SA_SIGINFO;
    } else {
        action.sa_handler = record_plain_and_exit;
    }
    return sigaction(signo, &action, NULL);
}
