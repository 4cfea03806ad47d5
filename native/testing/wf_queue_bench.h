/* wf_queue_bench.h — cost of the safepoint queue on the mapped case: ASGST_Enqueue called directly,
 * an element processed at a safepoint by a handler walking all its frames, and the direct walk of
 * the same stack (ASGST_RunWithIterator) for the ratio. Enqueue from a real signal handler is
 * measured by wf_queue_stress_run (TSC windows, with their own overhead) and wf_queue_signal_cost
 * (CPU time per signal, no clock in the handler). */
#ifndef WALKFUZZ_WF_QUEUE_BENCH_H
#define WALKFUZZ_WF_QUEUE_BENCH_H

#include <stdint.h>

/* cffi:begin */
typedef struct wf_queue_bench_result {
    double enqueue_ns;     /* per ASGST_Enqueue that stored an element */
    double process_ns;     /* per element at a safepoint, the handler walking every frame */
    double direct_walk_ns; /* per ASGST_RunWithIterator walking every frame of the context */
    uint32_t frames;       /* frames one walk gives */
    int32_t error;         /* 0, or the Enqueue / walk code that made the bench impossible */
} wf_queue_bench_result;

/* Bench on the mapped case, enqueueing context (pc, sp, fp), polling at the same frame:
   `rounds` rounds of `elements` elements. Not signal-safe. */
int wf_queue_bench(uint64_t pc, uint64_t sp, uint64_t fp, uint32_t elements, uint32_t rounds,
                   wf_queue_bench_result *out);
/* cffi:end */

#endif /* WALKFUZZ_WF_QUEUE_BENCH_H */
