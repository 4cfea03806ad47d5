/* The fp companion of a stress run (wf_uw_companion.h): the second walk of each sample and
 * the counts of both verdicts, kept in process-wide counters that handlers on any thread add
 * to with atomics (no locks, no per-thread state to sum).
 */
#include <string.h>
#include <time.h>

#include "wf_uw_chain.h"
#include "wf_uw_companion.h"
#include "wf_uw_companion_walk.h"
#include "wf_uw_fp_walk.h"

static int enabled;
static wf_uw_companion_stats totals;
static uint32_t kept_claims; /* samples that asked for a kept slot */

void wf_uw_companion_set(int on) { __atomic_store_n(&enabled, on, __ATOMIC_RELEASE); }

void wf_uw_companion_take(wf_uw_companion_stats *out) {
    memcpy(out, &totals, sizeof *out);
    out->kept = kept_claims < WF_UW_COMPANION_KEPT ? kept_claims : WF_UW_COMPANION_KEPT;
    memset(&totals, 0, sizeof totals);
    kept_claims = 0;
}

static void add(uint64_t *counter, uint64_t n) { __atomic_fetch_add(counter, n, __ATOMIC_RELAXED); }

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int is_work(int32_t id) {
    return id >= WF_UW_ID_WORK_BASE && id < WF_UW_ID_WORK_BASE + WF_UW_WORK_FUNCTIONS;
}

/* The walk's ids as the sampler compares them: an unknown frame 0 (interrupted outside the
   generated code) dropped; with `known_only`, cut at the first unknown frame after it. */
static uint32_t ids_of(const wf_uw_walk *w, int32_t *ids, int known_only) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < w->frames; i++) {
        int32_t id = w->frame[i].id;
        if (i == 0 && id == WF_UW_ID_UNKNOWN) continue;
        if (known_only && id == WF_UW_ID_UNKNOWN) break;
        ids[n++] = id;
    }
    return n;
}

static int same(const int32_t *a, uint32_t n, const int32_t *b, uint32_t m) {
    return n == m && memcmp(a, b, n * sizeof *a) == 0;
}

/* The sampler's rule: the truth, or the truth under one work function not pushed yet. */
static int matches(const int32_t *ids, uint32_t n, const int32_t *truth, uint32_t m) {
    return same(ids, n, truth, m) || (n > 0 && is_work(ids[0]) && same(ids + 1, n - 1, truth, m));
}

static int subsequence(const int32_t *a, uint32_t n, const int32_t *t, uint32_t m) {
    uint32_t j = 0;
    for (uint32_t i = 0; i < n; i++) {
        while (j < m && t[j] != a[i]) j++;
        if (j == m) return 0;
        j++;
    }
    return 1;
}

/* fp's rule: frames on the stack in order (the top one may be a function not pushed yet); no
   known frame at all is stopping early, its known limit. */
static int faithful(const int32_t *ids, uint32_t n, const int32_t *truth, uint32_t m) {
    return n == 0 || (subsequence(ids, n, truth, m) ||
                      (is_work(ids[0]) && subsequence(ids + 1, n - 1, truth, m)));
}

static void copy_ids(int32_t *dst, uint32_t *count, const int32_t *src, uint32_t n) {
    *count = n < WF_UW_COMPANION_IDS ? n : WF_UW_COMPANION_IDS;
    memcpy(dst, src, *count * sizeof *src);
}

static void keep(int main_ok, int fp_ok, const wf_uw_walk *main, const wf_uw_walk *fp,
                 const int32_t *main_ids, uint32_t main_n, const int32_t *fp_ids, uint32_t fp_n,
                 const int32_t *truth, uint32_t m) {
    uint32_t slot = __atomic_fetch_add(&kept_claims, 1, __ATOMIC_RELAXED);
    if (slot >= WF_UW_COMPANION_KEPT) return;
    wf_uw_companion_kept *k = &totals.kept_samples[slot];
    k->main_ok = main_ok;
    k->fp_ok = fp_ok;
    k->main_stop = main->stop;
    k->fp_stop = fp->stop;
    copy_ids(k->main_ids, &k->main_count, main_ids, main_n);
    copy_ids(k->fp_ids, &k->fp_count, fp_ids, fp_n);
    copy_ids(k->truth, &k->truth_count, truth, m);
}

static intptr_t fp_walk_fn(void *arg) { return wf_uw_fp_walk(arg); }

void wf_uw_companion_sample(const ucontext_t *uc, const wf_uw_walk *main, const int32_t *truth,
                            uint32_t m) {
    if (!__atomic_load_n(&enabled, __ATOMIC_ACQUIRE)) return;
    ucontext_t copy;
    memcpy(&copy, uc, sizeof copy);
    wf_uw_frame frames[WF_UW_MAX_FRAMES];
    wf_uw_walk fp = {
        .uc = &copy, .signal_frame = 1, .stop_id = WF_UW_ID_WORKER_ROOT, .frame = frames};
    wf_fault fault;
    intptr_t stop = 0;
    uint64_t start = now_ns();
    if (wf_guard_call(fp_walk_fn, &fp, &stop, &fault) != 0)
        stop = fault.kind == WF_FAULT_HANG ? WF_UW_STOP_HANG : WF_UW_STOP_FAULT;
    fp.stop = (int32_t)stop;
    add(&totals.walk_ns, now_ns() - start);
    add(&totals.walked, 1);
    add(&totals.fp_frames, fp.frames);
    if (fp.stop == WF_UW_STOP_FAULT || fp.stop == WF_UW_STOP_HANG) {
        add(fp.stop == WF_UW_STOP_FAULT ? &totals.fp_faults : &totals.fp_hangs, 1);
        return;
    }
    int32_t fp_ids[WF_UW_MAX_FRAMES], main_ids[WF_UW_MAX_FRAMES];
    uint32_t fp_n = ids_of(&fp, fp_ids, 1);
    int exact = matches(fp_ids, fp_n, truth, m);
    int fp_ok = exact || faithful(fp_ids, fp_n, truth, m);
    add(exact ? &totals.fp_exact : fp_ok ? &totals.fp_faithful : &totals.fp_wrong, 1);
    if (main == NULL) return;
    uint32_t main_n = ids_of(main, main_ids, 0);
    int main_ok = matches(main_ids, main_n, truth, m);
    add(main_ok ? (fp_ok ? &totals.both_ok : &totals.main_only_ok)
                : (fp_ok ? &totals.fp_only_ok : &totals.both_wrong),
        1);
    /* One walk, judged by two rules (fp may stop early, the library unwinder may not): the
       sampler's own finding already has it; a sample is kept when the walks differ. */
    if (main_ok != fp_ok && !same(main_ids, main_n, fp_ids, fp_n))
        keep(main_ok, fp_ok, main, &fp, main_ids, main_n, fp_ids, fp_n, truth, m);
}
