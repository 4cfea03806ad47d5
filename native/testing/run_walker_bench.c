/* run_walker_bench.c — timing loops of wf_walker_bench.h.
 *
 * Both loops are timed the same way: one untimed warm-up pass, then `batches` batches of
 * `reps` walks each, and the figure is the fastest batch (min-of-N: on a shared machine a
 * batch only ever gets slower, by preemption or cache pollution, never faster). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "wf_gen.h"
#include "wf_arch.h"
#include "wf_vm.h"
#include "wf_ucontext.h"
#include "wf_walker.h"
#include "wf_walker_bench.h"

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct count_job {
    const wf_walker *w;
    uint32_t frames, physical;
    uintptr_t methods; /* every frame's method, folded: consumed as a profiler records it */
} count_job;

/* The handler a profiler would pass: NextFrame through the walker table until it stops,
   each frame's method folded in as the floor folds each link's pc. Counts in locals, as a
   profiler's would be (kept in the job, the opaque call forces a store and reload of each
   per frame: handler cost, not walker cost). */
static void consume_frames(ASGST_Iterator *it, void *arg) {
    count_job *job = arg;
    int (*next_frame)(ASGST_Iterator *, ASGST_Frame *) = job->w->next_frame;
    uint32_t frames = 0;
    uintptr_t methods = 0;
    ASGST_Frame f;
    while (next_frame(it, &f) == 1) {
        frames++;
        methods ^= (uintptr_t)f.method;
    }
    job->frames = frames;
    job->methods = methods;
}

/* The untimed walk's handler: also counts the distinct sp values (physical frames seen). */
static void count_physical(ASGST_Iterator *it, void *arg) {
    count_job *job = arg;
    uintptr_t last_sp = 0;
    ASGST_Frame f;
    while (job->w->next_frame(it, &f) == 1) {
        job->frames++;
        job->physical += (uintptr_t)f.sp != last_sp;
        last_sp = (uintptr_t)f.sp;
    }
}

static void walk_once(const wf_walker *w, const wf_case *c, ucontext_t *uc,
                      ASGST_IteratorHandler handler, count_job *job) {
    *job = (count_job){.w = w};
    if (c->entry == WF_ENTRY_FROM_FRAME)
        w->run_with_iterator_from_frame((void *)c->sp, (void *)c->fp, (void *)c->pc,
                                        (int32_t)c->options, handler, job);
    else
        w->run_with_iterator(c->entry == WF_ENTRY_NULL_CONTEXT ? NULL : uc, (int32_t)c->options,
                             handler, job);
}

double wf_bench_walk_ns(const wf_walker *w, const wf_case *c, uint32_t reps, uint32_t batches,
                        uint32_t *frames, uint32_t *physical) {
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    wf_uc_set_frame(&uc, c->pc, c->sp, c->fp);
    count_job counted, job;
    walk_once(w, c, &uc, count_physical, &counted); /* warm-up: caches, TLB, predictors */
    uint64_t best = UINT64_MAX;
    for (uint32_t b = 0; b < batches; b++) {
        uint64_t t0 = now_ns();
        for (uint32_t i = 0; i < reps; i++) walk_once(w, c, &uc, consume_frames, &job);
        uint64_t t = now_ns() - t0;
        if (t < best) best = t;
    }
    *frames = counted.frames;
    *physical = counted.physical;
    return reps && batches ? (double)best / reps : 0.0;
}

/* The walk a minimal fp unwinder does: aligned, inside the stack, strictly growing, the
   return pc of each link read (folded into *pcs as a walker would record it). */
__attribute__((noinline)) static uint32_t fp_chain_walk(uintptr_t fp, uintptr_t lo, uintptr_t hi,
                                                        uintptr_t *pcs) {
    uint32_t n = 0;
    uintptr_t acc = 0;
    while (fp % 8 == 0 && fp >= lo && fp <= hi - 16) {
        const uintptr_t *link = (const uintptr_t *)fp;
        acc ^= link[1];
        uintptr_t next = link[0];
        n++;
        if (next <= fp) break;
        fp = next;
    }
    *pcs = acc;
    return n;
}

/* Time `reps` x `batches` walks of the chain starting at `start` (see the file comment). */
static double time_fp_chain(uintptr_t start, uintptr_t lo, uintptr_t hi, uint32_t reps,
                            uint32_t batches, uint32_t *frames) {
    volatile uintptr_t sink = 0; /* every walk's result is consumed ... */
    uintptr_t pcs;
    *frames = fp_chain_walk(start, lo, hi, &pcs); /* warm-up */
    uint64_t best = UINT64_MAX;
    for (uint32_t b = 0; b < batches; b++) {
        uint64_t t0 = now_ns();
        for (uint32_t i = 0; i < reps; i++) {
            wf_arch_compiler_barrier(); /* ... and the chain is re-read every time */
            sink = sink + fp_chain_walk(start, lo, hi, &pcs) + pcs;
        }
        uint64_t t = now_ns() - t0;
        if (t < best) best = t;
    }
    return reps && batches ? (double)best / reps : 0.0;
}

/*
 * The floor walks the same memory as the walker: the mapped case stack itself. For each
 * physical frame j the walker decodes (sps[j], top first), one fp link is written where a
 * frame-pointer frame j would keep its saved fp, the word below its caller's sp:
 *
 *     sps[j+1] - 8    return address of frame j (already there: caller.pc == [caller.sp - 8])
 *     sps[j+1] - 16   link -> sps[j+2] - 16 (0 after the last frame)
 *
 * so the chain touches the words the walker reads to find each sender. The stack is saved
 * before and restored after, so the case is unchanged.
 */
double wf_bench_fp_chain_ns(const uint64_t *sps, uint32_t n, uint32_t reps, uint32_t batches,
                            uint32_t *frames) {
    const struct wf_vm_thread *t = WF_VM->thread;
    *frames = 0;
    if (n == 0 || t == NULL) return 0.0;
    uintptr_t lo = t->stack_lo, hi = t->stack_hi;
    for (uint32_t j = 0; j < n; j++) { /* links 8-aligned, inside the stack, 16 bytes apart */
        uintptr_t node = (j + 1 < n ? sps[j + 1] : hi) - 16;
        if (sps[j] % 8 != 0 || node < lo || node > hi - 16 || (j > 0 && node < sps[j]))
            return 0.0; /* not frames of one walk: refuse rather than write off the stack */
    }
    uint8_t *saved = malloc(hi - lo);
    if (saved == NULL) return 0.0;
    memcpy(saved, (const void *)lo, hi - lo);
    uintptr_t node = 0; /* node of frame j+1, built bottom up */
    for (uint32_t j = n; j-- > 0;) {
        uintptr_t caller_sp = j + 1 < n ? sps[j + 1] : hi;
        *(uintptr_t *)(caller_sp - 16) = node;
        node = caller_sp - 16;
    }
    double ns = time_fp_chain(node, lo, hi, reps, batches, frames);
    memcpy((void *)lo, saved, hi - lo);
    free(saved);
    return ns;
}

double wf_bench_decode_ns(const uint8_t *data, size_t len, wf_case *c, uint32_t reps) {
    uint64_t t0 = now_ns();
    for (uint32_t i = 0; i < reps; i++) wf_case_decode(data, len, c, NULL);
    uint64_t t1 = now_ns();
    return reps ? (double)(t1 - t0) / reps : 0.0;
}
