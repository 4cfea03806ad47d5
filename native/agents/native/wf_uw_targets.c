/* Perturbation targets: guard-paged memory with patterns, a parked thread's stack, the
 * signal trampoline. Built once; a fuzz input only reads addresses from here.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "wf_uw_chain.h"
#include "wf_uw_targets.h"
#include "wf_unwinder.h"
#include "wf_ucontext.h"

#define HEAP_SIZE (64 * 1024)
#define OTHER_STACK_DEPTH 4

static wf_uw_targets targets;
static pthread_once_t targets_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t other_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t other_ready = PTHREAD_COND_INITIALIZER;

/* The bytes of __restore_rt on x86-64: mov $0xf,%rax; syscall. */
static const unsigned char SIGRETURN_CODE[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00,
                                               0x00, 0x00, 0x0f, 0x05};

/* `size` RW bytes followed by a PROT_NONE page; 0 on failure. */
static uintptr_t map_with_guard(size_t size) {
    size_t page = targets.page_size;
    char *p = mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 0;
    mprotect(p + size, page, PROT_NONE);
    return (uintptr_t)p;
}

/* Pattern i: 0 zeros, 1 pointers climbing to the edge, 2 return-address-like code pointers,
   3 all ones. */
static void fill_pattern(uintptr_t *words, size_t n, int pattern) {
    for (size_t i = 0; i < n; i++) {
        const wf_uw_range *fn = &wf_uw_chain_ranges[i % WF_UW_CHAIN_FUNCTIONS];
        switch (pattern) {
        case 0: words[i] = 0; break;
        case 1: words[i] = (uintptr_t)&words[i < n - 2 ? i + 2 : i]; break;
        case 2: words[i] = fn->start + (fn->end - fn->start) / 2; break;
        default: words[i] = ~(uintptr_t)0; break;
        }
    }
}

/* Heap words: pointers into the heap (forward), into code, small numbers, zeros. */
static void fill_heap(uintptr_t *words, size_t n) {
    for (size_t i = 0; i < n; i++) {
        size_t j = (i * 2654435761u) % n;
        switch (i % 4) {
        case 0: words[i] = (uintptr_t)&words[j]; break;
        case 1: words[i] = wf_uw_chain_ranges[j % WF_UW_CHAIN_FUNCTIONS].start + (j % 64); break;
        case 2: words[i] = j; break;
        default: words[i] = 0; break;
        }
    }
}

static void noop_handler(int sig) { (void)sig; }

/* glibc puts its restorer in every sigaction it makes: install one briefly to read it. */
static uintptr_t find_restore_rt(void) {
    struct sigaction mine, old, readback;
    memset(&mine, 0, sizeof mine);
    mine.sa_handler = noop_handler;
    sigemptyset(&mine.sa_mask);
    if (sigaction(SIGURG, &mine, &old) != 0) return 0;
    sigaction(SIGURG, &old, &readback);
    uintptr_t code = (uintptr_t)readback.sa_restorer;
    if (code == 0 || memcmp((const void *)code, SIGRETURN_CODE, sizeof SIGRETURN_CODE) != 0)
        return 0;
    return code;
}

static uintptr_t park_bottom(wf_uw_chain *c) {
    (void)c;
    ucontext_t uc;
    getcontext(&uc);
    pthread_mutex_lock(&other_lock);
    targets.other_sp = wf_uc_sp(&uc);
    targets.other_fp = wf_uc_fp(&uc);
    targets.other_pc = wf_uc_pc(&uc);
    pthread_cond_broadcast(&other_ready);
    for (;;) pthread_cond_wait(&other_ready, &other_lock); /* parked for the process's life */
    return 0;
}

static void *other_thread(void *arg) {
    (void)arg;
    wf_uw_chain c = {.depth = OTHER_STACK_DEPTH, .path = {1, 2, 7, 12}, .bottom = park_bottom};
    wf_uw_chain_run(&c);
    return NULL;
}

/* A parked thread with all signals blocked (so no process signal lands there). */
static void start_other_thread(void) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&thread, &attr, other_thread, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) return;
    pthread_mutex_lock(&other_lock);
    while (targets.other_sp == 0) pthread_cond_wait(&other_ready, &other_lock);
    pthread_mutex_unlock(&other_lock);
}

static void init_targets(void) {
    targets.page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < WF_UW_EDGE_PAGES; i++) {
        targets.edge_page[i] = map_with_guard(targets.page_size);
        if (targets.edge_page[i] != 0)
            fill_pattern((uintptr_t *)targets.edge_page[i], targets.page_size / 8, i);
    }
    targets.heap = map_with_guard(HEAP_SIZE);
    targets.heap_size = targets.heap != 0 ? HEAP_SIZE : 0;
    if (targets.heap != 0) fill_heap((uintptr_t *)targets.heap, HEAP_SIZE / 8);
    targets.restore_rt = find_restore_rt();
    targets.libc_code = (uintptr_t)&getcontext;
    targets.unwind_code = wf_unwinder_code();
    start_other_thread();
}

const wf_uw_targets *wf_uw_targets_get(void) {
    pthread_once(&targets_once, init_targets);
    return &targets;
}

static __thread uintptr_t stack_lo, stack_hi;

void wf_uw_this_stack(uintptr_t *lo, uintptr_t *hi) {
    if (stack_hi == 0) {
        pthread_attr_t attr;
        void *addr = NULL;
        size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            pthread_attr_getstack(&attr, &addr, &size);
            pthread_attr_destroy(&attr);
        }
        stack_lo = (uintptr_t)addr;
        stack_hi = (uintptr_t)addr + size;
    }
    *lo = stack_lo;
    *hi = stack_hi;
}

uintptr_t wf_uw_signal_trampoline(void) { return wf_uw_targets_get()->restore_rt; }
