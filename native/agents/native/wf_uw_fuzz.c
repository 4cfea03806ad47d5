/* The native fuzz hot path: one input -> its chain -> capture at the bottom -> perturbed
 * copy walked inside the guard -> verdict. One C call per input.
 *
 *   wf_uw_fuzz_one
 *     wf_uw_chain_run (root)             <- expected last frame, the walk stops here
 *       wf_uw_chain_<path[0]> ... <path[depth-1]>
 *         bottom: capture uc                <- expected first frame
 *           walk_case: copy, perturb, walk  (below the captured sp: never walked)
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "wf_uw_input.h"
#include "wf_uw_perturb.h"
#include "wf_uw_snap.h"
#include "wf_uw_walk.h"
#include "wf_ucontext.h"

typedef struct fuzz_state {
    const wf_uw_case *cs;
    wf_uw_result *out;
} fuzz_state;

void wf_uw_set_walk_budget_ns(uint64_t ns) { wf_guard_set_budget_ns(ns); }

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

WF_UW_GENERATED("wf_uw_chain_root_code")
uintptr_t wf_uw_chain_run(wf_uw_chain *c) {
    volatile uintptr_t keep = c->depth;
    uintptr_t r = wf_uw_chain_fns[c->path[0]](c, 0);
    return r + keep;
}

static void set_expected(const wf_uw_case *cs, wf_uw_result *out) {
    uint32_t n = 0;
    out->expected[n++] = WF_UW_ID_BOTTOM;
    for (unsigned level = cs->depth; level-- > 0;) out->expected[n++] = cs->path[level];
    out->expected[n++] = WF_UW_ID_ROOT;
    out->expected_count = n;
}

static void save_regs(uintptr_t *dst, const ucontext_t *uc) {
    dst[0] = wf_uc_pc(uc);
    dst[1] = wf_uc_sp(uc);
    dst[2] = wf_uc_fp(uc);
}

/* A frame-pointer walk cannot see a chain function without a frame record, nor (rbp still
   holding the caller's record, or reused as a general register) judge what comes after it. */
static int beyond_limit(const wf_uw_case *cs) {
    if (!wf_unwinder_needs_frame_pointers()) return 0;
    for (unsigned level = 0; level < cs->depth; level++)
        if (!wf_uw_chain_ranges[cs->path[level]].frame_pointer) return 1;
    return 0;
}

static int verdict(wf_uw_result *out, const wf_uw_walk *walk) {
    if (out->known_limit) return WF_UW_OK;
    if (walk->stop == WF_UW_STOP_FAULT) return WF_UW_FAULT;
    if (walk->stop == WF_UW_STOP_HANG || walk->stop == WF_UW_STOP_CYCLE) return WF_UW_HANG;
    if (out->perturbations != 0) return WF_UW_OK;
    int32_t walked[WF_UW_MAX_FRAMES];
    for (uint32_t i = 0; i < walk->frames; i++) walked[i] = walk->frame[i].id;
    out->invalid = wf_uw_classify(walked, walk->frames, out->expected, out->expected_count,
                                  walk->stop == WF_UW_STOP_CYCLE, &out->first_diff);
    return out->invalid == WF_UW_VALID ? WF_UW_OK : WF_UW_INVALID;
}

/* The lowest of walk_case's locals a perturbed register may point into: the snapshot of a
   finding starts there at the latest. */
static uintptr_t lowest_local(const void *a, const void *b, const void *c) {
    uintptr_t low = (uintptr_t)a;
    if ((uintptr_t)b < low) low = (uintptr_t)b;
    if ((uintptr_t)c < low) low = (uintptr_t)c;
    return low;
}

/* Below the bottom's frame: nothing here is part of the walked chain. */
__attribute__((noinline)) static void walk_case(fuzz_state *st, const ucontext_t *captured) {
    const wf_uw_case *cs = st->cs;
    wf_uw_result *out = st->out;
    ucontext_t uc, fake_frame;
    memcpy(&uc, captured, sizeof uc);
    wf_uw_perturb_env env = {
        .targets = wf_uw_targets_get(), .captured = captured, .fake_frame = &fake_frame};
    wf_uw_this_stack(&env.stack_lo, &env.stack_hi);
    for (unsigned i = 0; i < cs->count; i++)
        out->perturbations += wf_uw_perturb(&uc, &cs->perturbation[i], &env);
    save_regs(out->captured, captured);
    save_regs(out->walked_from, &uc);
    wf_uw_walk walk = {.uc = &uc,
                       .signal_frame = cs->signal_frame_flag,
                       .stop_id = WF_UW_ID_ROOT,
                       .frame = out->frame};
    uint64_t start = now_ns();
    wf_uw_walk_guarded(&walk, &out->fault);
    out->walk_ns = now_ns() - start;
    out->unw_steps = walk.steps;
    out->stop = walk.stop;
    out->unw_rc = walk.unw_rc;
    out->frames = walk.frames;
    out->known_limit = beyond_limit(cs);
    out->status = verdict(out, &walk);
    if (out->status != WF_UW_OK)
        wf_uw_snapshot_take(&uc, captured, lowest_local(&uc, &fake_frame, &walk), env.stack_lo,
                            env.stack_hi, cs, out);
}

WF_UW_GENERATED("wf_uw_bottom_code")
static uintptr_t fuzz_bottom(wf_uw_chain *c) {
    fuzz_state *st = c->arg;
    ucontext_t uc;
    if (st->cs->use_getcontext) getcontext(&uc);
    else wf_unwinder_capture()(&uc);
    walk_case(st, &uc);
    return wf_uc_sp(&uc);
}

static int run_case(const wf_uw_case *cs, wf_uw_result *out) {
    fuzz_state st = {.cs = cs, .out = out};
    memset(out, 0, offsetof(wf_uw_result, frame));
    memset(&out->fault, 0, sizeof out->fault);
    out->first_diff = -1;
    set_expected(cs, out);
    wf_uw_chain chain = {.depth = cs->depth, .bottom = fuzz_bottom, .arg = &st};
    memcpy(chain.path, cs->path, sizeof chain.path);
    wf_uw_chain_run(&chain);
    return out->status;
}

int wf_uw_fuzz_one(const uint8_t *data, size_t size, wf_uw_result *out) {
    wf_uw_case cs;
    wf_uw_decode(data, size, &cs);
    return run_case(&cs, out);
}

static void count(wf_uw_batch_stats *s, const wf_uw_case *cs, const wf_uw_result *r) {
    s->inputs++;
    s->walks++;
    s->unperturbed += r->perturbations == 0;
    s->frames += r->frames;
    s->unw_steps += r->unw_steps;
    s->walk_ns += r->walk_ns;
    s->faults += r->status == WF_UW_FAULT;
    s->hangs += r->status == WF_UW_HANG;
    s->invalid += r->status == WF_UW_INVALID;
    s->known_limit += r->known_limit != 0;
    s->stops[r->stop]++;
    if (r->status == WF_UW_INVALID) s->invalid_kinds[r->invalid]++;
    for (unsigned i = 0; i < cs->count; i++) s->kinds_used[cs->perturbation[i].kind]++;
}

uint64_t wf_uw_fuzz_batch(uint64_t seed, uint64_t first, uint64_t count_, uint8_t *current,
                          wf_uw_batch_stats *stats, wf_uw_result *finding) {
    wf_uw_result result;
    for (uint64_t i = 0; i < count_; i++) {
        uint8_t input[WF_UW_INPUT_SIZE];
        wf_uw_case cs;
        wf_uw_generate(seed, first + i, input);
        memcpy(current, input, sizeof input); /* on disk before it runs */
        wf_uw_decode(input, sizeof input, &cs);
        int status = run_case(&cs, &result);
        count(stats, &cs, &result);
        if (status != WF_UW_OK) {
            memcpy(finding, &result, sizeof result);
            return i + 1;
        }
    }
    return count_;
}
