/* Stress mode: every SIGPROF calls ASGCT on the real ucontext (guarded all the same: a fault
 * on a real context is the worst finding there is), counts its result code, measures the
 * achieved interval and the walk latency, and checks the trace against the workload's shadow
 * stack.
 *
 * The shadow stack is a direct buffer the workload thread writes on every tracked method
 * entry and exit (release stores, so the depth is never ahead of the ids):
 *
 *   int index:  0       1         2              depth
 *              +-------+---------+---------+ ... +---------+
 *              | depth | id of   | id of   |     | id of   |
 *              |       | bottom  | caller  |     | top     |
 *              +-------+---------+---------+ ... +---------+
 *
 * Only tracked methods (in the manifest) are compared: ASGCT also reports JDK frames (streams,
 * lambdas, Thread.run), which the shadow stack does not know. The top frame may legitimately
 * differ by one in a transition window (method entered, push not yet done; pop done, return
 * not yet done): that is TOP_TOLERATED, anything else is an invalid trace of some class.
 */
#define _GNU_SOURCE
#include <string.h>
#include <ucontext.h>

#include "wf_hs.h"
#include "wf_ucontext.h"

/* tracked: ids of tracked frames, top first; a and b skip that many top entries. */
static int equal_from(const int32_t *tr, int n, int a, const int32_t *top_first, int d, int b) {
    if (n - a != d - b || a > n || b > d) return 0;
    for (int i = 0; i < n - a; i++)
        if (tr[a + i] != top_first[b + i]) return 0;
    return 1;
}

static int is_subsequence(const int32_t *small, int ns, const int32_t *big, int nb) {
    int j = 0;
    for (int i = 0; i < nb && j < ns; i++)
        if (big[i] == small[j]) j++;
    return j == ns;
}

static wf_hs_class compare_tracked(const int32_t *tr, int n, const int32_t *sh, int d) {
    if (equal_from(tr, n, 0, sh, d, 0)) return WF_HS_CLASS_EXACT;
    if (equal_from(tr, n, 1, sh, d, 0) || equal_from(tr, n, 0, sh, d, 1) ||
        equal_from(tr, n, 1, sh, d, 1))
        return WF_HS_CLASS_TOP_TOLERATED;
    int prefix = 0, suffix = 0;
    while (prefix < n && prefix < d && tr[prefix] == sh[prefix]) prefix++;
    while (suffix < n && suffix < d && tr[n - 1 - suffix] == sh[d - 1 - suffix]) suffix++;
    if (prefix == n && n < d) return WF_HS_CLASS_TRUNCATED;
    if (suffix == n && n < d) return WF_HS_CLASS_MISSING_TOP;
    if (n < d && is_subsequence(tr, n, sh, d)) return WF_HS_CLASS_MISSING;
    if (n > d && is_subsequence(sh, d, tr, n)) return WF_HS_CLASS_EXTRA;
    if (n == d) return WF_HS_CLASS_WRONG_METHOD;
    return WF_HS_CLASS_OTHER;
}

static int bci_ok(const wf_asgct_frame *f, const wf_hs_method_info *info) {
    if (info->code_len == 0) return f->lineno == -3 || f->lineno == -1; /* native/abstract */
    return f->lineno >= -1 && f->lineno < info->code_len;
}

static const wf_hs_method_info *find_memo(wf_hs_method_memo *memo, jmethodID id) {
    wf_hs_method_memo *m = &memo[((uintptr_t)id >> 3) & (WF_HS_METHOD_MEMO - 1)];
    if (m->id == id && id) return m->info;
    const wf_hs_method_info *info = wf_hs_methods_find(id);
    if (info) {
        m->id = id;
        m->info = info;
    }
    return info;
}

/* Whether the tracked ids, top first, equal the shadow's ids (bottom first) after skipping a
 * top entries of the one and b of the other: the common cases without reversing the shadow. */
static int equal_shadow(const int32_t *tr, int n, int a, const int32_t *ids, int d, int b) {
    if (n - a != d - b || a > n || b > d) return 0;
    for (int i = 0; i < n - a; i++)
        if (tr[a + i] != ids[d - 1 - b - i]) return 0;
    return 1;
}

wf_hs_class wf_hs_classify(const wf_asgct_frame *frames, int n, const int32_t *shadow_ids,
                           int depth, int32_t *tracked, int32_t *shadow_top,
                           wf_hs_method_memo *memo) {
    int nt = 0, in_update = 0;
    for (int i = 0; i < n; i++) {
        const wf_hs_method_info *info = find_memo(memo, frames[i].method_id);
        if (!info) return WF_HS_CLASS_UNKNOWN_METHOD;
        if (!bci_ok(&frames[i], info)) return WF_HS_CLASS_WRONG_BCI;
        if (info->shadow_id > 0) tracked[nt++] = info->shadow_id;
        else if (info->shadow_id == 0 && nt == 0) in_update = 1;
    }
    if (depth > WF_HS_MAX_DEPTH) depth = WF_HS_MAX_DEPTH;
    wf_hs_class cls;
    if (equal_shadow(tracked, nt, 0, shadow_ids, depth, 0)) {
        cls = WF_HS_CLASS_EXACT;
    } else if (equal_shadow(tracked, nt, 1, shadow_ids, depth, 0) ||
               equal_shadow(tracked, nt, 0, shadow_ids, depth, 1) ||
               equal_shadow(tracked, nt, 1, shadow_ids, depth, 1)) {
        cls = WF_HS_CLASS_TOP_TOLERATED;
    } else {
        for (int i = 0; i < depth; i++) shadow_top[i] = shadow_ids[depth - 1 - i];
        cls = compare_tracked(tracked, nt, shadow_top, depth);
    }
    /* Inside push/pop the stores of several inlined levels may be scheduled together: the
     * trace's scopes and the buffer disagree by design there, which is not an ASGCT error. */
    if (in_update && cls > WF_HS_CLASS_IN_UPDATE) return WF_HS_CLASS_IN_UPDATE;
    return cls;
}

static void report_invalid(wf_hs_thread *t, wf_hs_class cls, const wf_asgct_trace *trace,
                           const int32_t *shadow_ids, int depth) {
    wf_hs_invalid_event ev;
    memset(&ev, 0, sizeof ev);
    ev.thread = (uint32_t)t->index;
    ev.cls = (uint8_t)cls;
    ev.n = (int16_t)trace->num_frames;
    ev.depth = (int16_t)depth;
    for (int i = 0; i < trace->num_frames && i < 32; i++) {
        const wf_hs_method_info *info = wf_hs_methods_find(trace->frames[i].method_id);
        ev.trace_ids[i] = info ? info->shadow_id : -2;
        ev.trace_bci[i] = trace->frames[i].lineno;
    }
    for (int i = 0; i < depth && i < 32; i++) ev.shadow_ids[i] = shadow_ids[depth - 1 - i];
    wf_hs_out_invalid(&ev);
}

static void check_shadow(wf_hs_thread *t, const wf_asgct_trace *trace) {
    volatile int32_t *shadow = t->shadow;
    int32_t depth = shadow ? shadow[0] : 0;
    if (!shadow || depth <= 0 || depth >= WF_HS_SHADOW_CAP) {
        t->classes[WF_HS_CLASS_NO_SHADOW]++;
        return;
    }
    const int32_t *ids = (const int32_t *)shadow + 1;
    wf_hs_class cls = wf_hs_classify(trace->frames, trace->num_frames, ids, depth,
                                     t->scratch_tracked, t->scratch_shadow, t->memo);
    t->classes[cls]++;
    if (cls > WF_HS_CLASS_IN_UPDATE) {
        uint64_t now = wf_hs_now_ns();
        if (!t->class_first_ns[cls]) t->class_first_ns[cls] = now;
        t->class_last_ns[cls] = now;
        report_invalid(t, cls, trace, ids, depth);
    }
}

void wf_hs_stress_on_signal(wf_hs_thread *t, ucontext_t *uc) {
    t->signals++;
    if (!wf_hs_cfg.walk) return;
    uint64_t start = wf_hs_now_ns();
    if (t->last_sample_ns)
        t->interval_hist[wf_hs_log2_bucket((start - t->last_sample_ns) / 1000)]++;
    t->last_sample_ns = start;
    wf_asgct_trace trace = {t->env, 0, t->frames};
    wf_fault fault;
    t->calls++;
    if (wf_hs_asgct_guarded(&trace, WF_HS_MAX_DEPTH, uc, &fault)) {
        t->faults++;
        wf_hs_fault_event ev;
        memset(&ev, 0, sizeof ev);
        ev.thread = (uint32_t)t->index;
        ev.strategy = 0xff; /* no perturbation: a real context */
        wf_hs_record keep;
        memset(&keep, 0, sizeof keep);
        wf_hs_record_encode(&keep, ev.record); /* the record that changes nothing */
        ev.fault = fault;
        ev.real_pc = ev.pert_pc = wf_uc_pc(uc);
        ev.real_sp = ev.pert_sp = wf_uc_sp(uc);
        ev.real_fp = ev.pert_fp = wf_uc_fp(uc);
        wf_hs_out_fault(&ev);
    }
    uint64_t walked = wf_hs_now_ns();
    t->latency_hist[wf_hs_log2_bucket((walked - start) / 1000)]++;
    t->walk_ns += walked - start;
    t->codes[wf_hs_code_slot(trace.num_frames)]++;
    wf_hs_check_on_sample(t, &trace);
    if (trace.num_frames > 0) check_shadow(t, &trace);
    t->handler_ns += wf_hs_now_ns() - start;
}
