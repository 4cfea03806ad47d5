/* wf_walker_bench.h — timing loops for bench/bench_walker.py, in C so Python's call overhead
 * is not measured. Each returns nanoseconds per iteration (CLOCK_MONOTONIC). */
#ifndef WALKFUZZ_WF_WALKER_BENCH_H
#define WALKFUZZ_WF_WALKER_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "wf_case.h"
#include "wf_walker.h"

/* cffi:begin */
/* Walk the mapped case with walker w as a profiler would (RunWithIterator + a NextFrame loop
   through the table; unguarded, frames counted, not stored): a warm-up walk, then `batches`
   batches of `reps` walks; ns per walk of the fastest batch. *frames = frames per walk,
   *physical = distinct sp values among them (the decoded frames that report nothing, e.g.
   entry frames of a Java-only walk, are not visible through the API). */
double wf_bench_walk_ns(const struct wf_walker *w, const wf_case *c, uint32_t reps,
                        uint32_t batches, uint32_t *frames, uint32_t *physical);
/* The floor: a bare frame-pointer chain walk (aligned, inside the stack, growing) over the
   mapped case stack itself, one link per physical frame in `sps` (the sp of each frame the
   walker decodes, top first); timed like wf_bench_walk_ns. The stack is restored after.
   *frames = links walked (0 and 0.0 if sps cannot be frames of one walk of this stack). */
double wf_bench_fp_chain_ns(const uint64_t *sps, uint32_t n, uint32_t reps, uint32_t batches,
                            uint32_t *frames);
/* Decode + map `data` `reps` times. */
double wf_bench_decode_ns(const uint8_t *data, size_t len, wf_case *c, uint32_t reps);
/* cffi:end */

#endif /* WALKFUZZ_WF_WALKER_BENCH_H */
