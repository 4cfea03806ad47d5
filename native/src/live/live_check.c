/* live_check.c — the live oracle: one walked trace against the trace expected at the same
 * instant. Layers: contract (every frame and code allowed by asgst.h), then truth.
 *
 * Expected trace E = the shadow stack innermost first, moved by the one step it is ahead of
 * or behind the machine when the sampled pc lies in a transition window (wf_live_expect;
 * wf_live_vm.h lists the windows, docs/stress.md says why each step is what any walker sees).
 * A frame matches when method, bci, type and comp_level are equal. The walk W is exact when
 * W == E and it ended with ASGST_NO_FRAME (or, with E empty, the thread is outside Java:
 * NO_TOP_JAVA_FRAME). Anything else is invalid: there is no tolerance.
 *
 * Classes of invalid traces, decided at the first differing frame i:
 *   cycle        the walk hit the depth limit, overflowed the buffer, or revisited a frame
 *   truncated    W is a proper prefix of E and the walk ended with an error
 *   missing      W is a proper prefix of E with a clean end, or W[i:] == E[i+1:]
 *   extra        E is a proper prefix of W, or W[i+1:] == E[i:]
 *   wrong-method / wrong-bci / wrong-type   the first difference is in that field
 *   wrong-result every expected frame, then an error where the walk should end
 *   contract     a frame or code the API does not allow (checked first)
 */
#define _GNU_SOURCE /* the register names of wf_ucontext.h */
#include <ucontext.h>

#include "wf_live_worker.h"
#include "wf_arch.h"
#include "wf_ucontext.h"

static int same(const ASGST_Frame *w, const struct wf_live_shadow *e) {
    return (uintptr_t)w->method == wf_vm_method_handle(e->method) && w->bci == e->bci &&
           w->type == (uint8_t)(e->type & 0xff) && w->comp_level == (int8_t)(e->type >> 8);
}

/* E[k] is the shadow record depth-1-k. */
static const struct wf_live_shadow *expected(const struct wf_live_snapshot *s, uint32_t k) {
    return &s->frames[s->depth - 1 - k];
}

/* W[wi ..] == E[ei ..] for n frames. */
static int run_matches(const struct wf_live_walk *w, uint32_t wi, const struct wf_live_snapshot *s,
                       uint32_t ei, uint32_t n) {
    if (wi + n > w->count || ei + n > s->depth) return 0;
    for (uint32_t k = 0; k < n; k++)
        if (!same(&w->frames[wi + k], expected(s, ei + k))) return 0;
    return 1;
}

static int documented_code(int32_t code) {
    return (code <= 0 && code >= ASGST_ENQUEUE_OTHER_ERROR) ||
           (code <= ASGST_WF_BAD_PC && code >= ASGST_WF_FRAME_GONE);
}

static int frame_allowed(const ASGST_Frame *f) {
    if (f->type < ASGST_FRAME_JAVA || f->type > ASGST_FRAME_NON_JAVA) return 0;
    if (f->type == ASGST_FRAME_NON_JAVA) return 0; /* never in a Java-only walk */
    const struct wf_vm_method *m = wf_vm_method_at((uintptr_t)f->method);
    if (m == NULL) return 0;
    if (f->bci < -1 || (f->bci >= 0 && (uint32_t)f->bci >= m->code_size)) return 0;
    return f->comp_level >= -1 && f->comp_level <= 4;
}

static int contract_ok(const struct wf_live_walk *w) {
    if (w->run_result < 0) return documented_code(w->run_result);
    if (w->run_result != ASGST_JAVA_TRACE) return 0;
    for (uint32_t k = 0; k < w->count; k++)
        if (!frame_allowed(&w->frames[k])) return 0;
    if (w->end == WF_LIVE_END_OVERFLOW) return 1;
    return documented_code(w->end) && w->state_after == w->end;
}

static int revisits(const struct wf_live_walk *w) {
    for (uint32_t k = 1; k < w->count; k++)
        if ((uintptr_t)w->frames[k].sp < (uintptr_t)w->frames[k - 1].sp) return 1;
    return 0;
}

static int walked_end(const struct wf_live_walk *w) {
    return w->run_result < 0 ? w->run_result : w->end;
}

static int is_exact(const struct wf_live_snapshot *s, const struct wf_live_walk *w) {
    int end = walked_end(w);
    if (s->depth == 0 && w->count == 0 && s->end == ASGST_NO_FRAME)
        return end == ASGST_NO_FRAME || end == ASGST_NO_TOP_JAVA_FRAME;
    return end == s->end && w->count == s->depth && run_matches(w, 0, s, 0, s->depth);
}

_Static_assert(sizeof(((wf_live_stats *)0)->invalid_by_class) == WF_LIVE_CLASSES * sizeof(uint64_t),
               "one invalid counter per class");

static int classify(const struct wf_live_snapshot *s, const struct wf_live_walk *w, int *first) {
    uint32_t d = s->depth, n = w->count, i = 0;
    int end = walked_end(w);
    while (i < n && i < d && same(&w->frames[i], expected(s, i))) i++;
    *first = (int)i;
    /* the depth limit is a cycle's sign unless the stack is that deep (then stopping there,
       after exactly the frames expected, is the exact walk; anything else is judged below) */
    if ((end == ASGST_WF_DEPTH_LIMIT && s->end != ASGST_WF_DEPTH_LIMIT) ||
        end == WF_LIVE_END_OVERFLOW || revisits(w))
        return WF_LIVE_CLS_CYCLE;
    if (i == n && n < d) return end < 0 ? WF_LIVE_CLS_TRUNCATED : WF_LIVE_CLS_MISSING;
    if (i == n && n == d) return WF_LIVE_CLS_WRONG_RESULT; /* not exact: the end is wrong */
    if (i == d) return WF_LIVE_CLS_EXTRA;
    if (run_matches(w, i, s, i + 1, n - i) && n - i == d - i - 1) return WF_LIVE_CLS_MISSING;
    if (run_matches(w, i + 1, s, i, d - i) && n - i - 1 == d - i) return WF_LIVE_CLS_EXTRA;
    const ASGST_Frame *f = &w->frames[i];
    const struct wf_live_shadow *e = expected(s, i);
    if ((uintptr_t)f->method != wf_vm_method_handle(e->method)) return WF_LIVE_CLS_WRONG_METHOD;
    if (f->bci != e->bci) return WF_LIVE_CLS_WRONG_BCI;
    return WF_LIVE_CLS_WRONG_TYPE;
}

void wf_live_check(const struct wf_live_snapshot *s, const struct wf_live_walk *w,
                   struct wf_live_verdict *v) {
    v->first_diff = -1;
    v->cls = 0;
    if (!contract_ok(w)) {
        v->outcome = WF_LIVE_INVALID;
        v->cls = WF_LIVE_CLS_CONTRACT;
        return;
    }
    if (is_exact(s, w)) {
        v->outcome = WF_LIVE_EXACT;
        return;
    }
    v->outcome = WF_LIVE_INVALID;
    v->cls = classify(s, w, &v->first_diff);
}

void wf_live_expect(struct wf_live_snapshot *s, uint32_t window, const void *uc) {
    if (s->depth == 0) return;
    switch (window) {
    case WF_LIVE_WIN_CALL:     /* callee published, not entered yet / returned already */
    case WF_LIVE_WIN_PROLOGUE: /* callee has no frame yet: its method is only in rbx */
    case WF_LIVE_WIN_EPILOGUE: /* callee's frame popped, the caller pops its record next */
        s->depth--;
        break;
    case WF_LIVE_WIN_BCI: { /* bcp stored; the shadow store of the same bci is next */
        s->frames[s->depth - 1].bci = (int32_t)(uint32_t)wf_uc_get(uc, WF_UC_RCX);
        break;
    }
    default: break;
    }
}

void wf_live_snapshot_take(const struct wf_live_thread *t, struct wf_live_snapshot *snap) {
    uint32_t depth = t->depth;
    wf_arch_compiler_barrier(); /* the records below depth are complete */
    if (depth > snap->cap) depth = snap->cap;
    for (uint32_t k = 0; k < depth; k++) snap->frames[k] = t->shadow[k];
    snap->depth = depth;
    snap->end = ASGST_NO_FRAME;
}
