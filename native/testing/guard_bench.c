/* guard_bench.c — timing loops for the crash guard; contracts in wf_guard_bench.h. */
#define _GNU_SOURCE
#include "wf_guard_bench.h"

#include <time.h>

#include "wf_guard.h"
#include "wf_guard_testing.h"

#define WATCHED_BUDGET_NS 10000000000ull /* 10 s: watched, never interrupted */

/* Read through a volatile pointer so that no loop can inline or hoist the call away; every
   loop stores each result in the same volatile sink. */
static wf_guarded_fn volatile trivial = wf_guard_test_identity;
static intptr_t volatile sink;

static uint64_t thread_cpu_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

uint64_t wf_guard_bench_unguarded_ns(uint64_t calls) {
    uint64_t start = thread_cpu_ns();
    for (uint64_t i = 0; i < calls; i++) sink = trivial((void *)(uintptr_t)i);
    return thread_cpu_ns() - start;
}

static uint64_t guarded_loop_ns(uint64_t calls, int masked) {
    wf_fault fault;
    uint64_t start = thread_cpu_ns();
    for (uint64_t i = 0; i < calls; i++) {
        intptr_t result;
        if (masked) wf_guard_call_masked(trivial, (void *)(uintptr_t)i, &result, &fault);
        else wf_guard_call(trivial, (void *)(uintptr_t)i, &result, &fault);
        sink = result;
    }
    return thread_cpu_ns() - start;
}

uint64_t wf_guard_bench_guarded_ns(uint64_t calls) { return guarded_loop_ns(calls, 0); }

uint64_t wf_guard_bench_masked_ns(uint64_t calls) { return guarded_loop_ns(calls, 1); }

uint64_t wf_guard_bench_watched_ns(uint64_t calls) {
    uint64_t previous_budget = wf_guard_budget_ns();
    if (wf_guard_set_budget_ns(WATCHED_BUDGET_NS) != 0) return 0;
    uint64_t elapsed = guarded_loop_ns(calls, 0);
    wf_guard_set_budget_ns(previous_budget);
    return elapsed;
}

uint64_t wf_guard_bench_fault_ns(uint64_t faults) {
    uint64_t start = thread_cpu_ns();
    for (uint64_t i = 0; i < faults; i++) {
        intptr_t result;
        wf_fault fault;
        if (wf_guard_call(wf_guard_test_read, NULL, &result, &fault) != 1) return 0;
    }
    return thread_cpu_ns() - start;
}
