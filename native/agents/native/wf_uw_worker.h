/* Stress workload: threads running generated work functions (internal; not cffi-visible).
 *
 * A worker's root loops calling a random work function at depth 1; each work function spins
 * a while, then calls 0..2 random work functions (itself included: recursion) one level deeper,
 * up to max_depth. Expected fan-out is one, so the depth wanders up and down. Every entry and
 * exit is on the worker's shadow stack.
 */
#ifndef WF_UW_WORKER_H
#define WF_UW_WORKER_H

#include <stdint.h>

#include "wf_uw_chain.h"
#include "wf_arch.h"
#include "wf_uw_shadow.h"

typedef struct wf_uw_worker wf_uw_worker;
typedef uintptr_t wf_uw_work_fn(wf_uw_worker *w, unsigned depth);

struct wf_uw_worker {
    wf_uw_shadow shadow;
    uint64_t rng;
    uint32_t spin;      /* loop iterations per spin */
    uint32_t max_depth; /* deepest call level (< WF_UW_SHADOW_MAX) */
    volatile int stop;
    uint64_t work_units; /* spins run, for the slowdown figure */
};

extern wf_uw_work_fn *const volatile wf_uw_work_fns[WF_UW_WORK_FUNCTIONS];
extern const wf_uw_range wf_uw_work_ranges[WF_UW_WORK_FUNCTIONS];

static inline uint64_t wf_uw_worker_next(wf_uw_worker *w) {
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

/* A loop for samples to land in; wf_arch_opaque keeps it from being folded away. */
static inline uintptr_t wf_uw_work_spin(wf_uw_worker *w, unsigned depth) {
    uintptr_t acc = depth;
    for (uint32_t i = 0; i < w->spin; i++) {
        acc = acc * 6364136223846793005u + i;
        wf_arch_opaque(&acc);
    }
    w->work_units++;
    return acc;
}

/* How many calls a work function makes at `depth`: 0..2, none at the deepest level. */
static inline unsigned wf_uw_work_fanout(wf_uw_worker *w, unsigned depth) {
    return depth >= w->max_depth ? 0 : (unsigned)(wf_uw_worker_next(w) % 3);
}

static inline unsigned wf_uw_work_pick(wf_uw_worker *w) {
    return (unsigned)(wf_uw_worker_next(w) % WF_UW_WORK_FUNCTIONS);
}

/* The worker thread's outermost function (its own section: where a walk is complete). */
uintptr_t wf_uw_worker_root(wf_uw_worker *w);

#endif
