/* wf_guard_bench.h — timing loops for the crash guard, run once from bench/bench_guard.py so
 * that the per-call figures carry no Python overhead. Each returns the CPU time its whole loop
 * took on the calling thread (CLOCK_THREAD_CPUTIME_ID, user and kernel: a caught fault's signal
 * delivery included), in ns, so that other processes on a shared machine do not inflate it; the
 * caller divides by the count.
 */
#ifndef WF_GUARD_BENCH_H
#define WF_GUARD_BENCH_H

#include <stdint.h>

/* cffi:begin */
/* calls direct calls of a trivial function through a pointer: the baseline. */
uint64_t wf_guard_bench_unguarded_ns(uint64_t calls);

/* calls calls of the same function through wf_guard_call (no fault). */
uint64_t wf_guard_bench_guarded_ns(uint64_t calls);

/* Same, with this thread watched by the watchdog (a 10 s budget, restored afterwards). */
uint64_t wf_guard_bench_watched_ns(uint64_t calls);

/* calls calls through wf_guard_call_masked (sigsetjmp saving the mask: one syscall). */
uint64_t wf_guard_bench_masked_ns(uint64_t calls);

/* faults guarded reads of NULL, each one caught. Returns 0 if any was not caught. */
uint64_t wf_guard_bench_fault_ns(uint64_t faults);
/* cffi:end */

#endif /* WF_GUARD_BENCH_H */
