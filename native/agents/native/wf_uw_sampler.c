/* The sampling handler: walk from the interrupted context, compare with the shadow stack.
 *
 * What the handler sees (ALTERNATE switches per sample):
 *
 *   FROM_UCONTEXT                       THROUGH_SIGFRAME
 *   uc (kernel's copy of the            handler frames (walked, not recorded)
 *     interrupted registers)            __restore_rt  <- signal frame, stepped through
 *   interrupted work fn  <- frame 0     interrupted work fn  <- first recorded frame
 *   callers ... worker root             callers ... worker root
 *
 * Truth: the shadow stack, innermost first, then the worker root. Tolerated: one work
 * function on top that the shadow does not have yet or any more (prologue before its push,
 * epilogue after its pop). An unknown frame 0 (interrupted outside the generated code) is
 * dropped before comparing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "wf_ucontext.h"
#include "wf_uw_companion_walk.h"
#include "wf_uw_sampler.h"
#include "wf_uw_walk.h"

#define PROLOGUE_SCAN 16 /* bytes of a function searched for its frame-record set-up */
#define RET 0xc3
#define REP_PREFIX 0xf3

__thread wf_uw_sampler *wf_uw_current_sampler __attribute__((tls_model("initial-exec")));

uint64_t wf_uw_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

unsigned wf_uw_log2_bucket(uint64_t ns) {
    unsigned b = ns == 0 ? 0 : 63u - (unsigned)__builtin_clzll(ns);
    return b < WF_UW_HIST_BUCKETS ? b : WF_UW_HIST_BUCKETS - 1;
}

/* The shadow stack as the truth: work ids innermost first, then the worker root. */
static uint32_t shadow_truth(const wf_uw_shadow *s, int32_t *truth) {
    uint32_t depth = s->depth;
    uint32_t n = depth < WF_UW_SHADOW_MAX ? depth : WF_UW_SHADOW_MAX;
    for (uint32_t i = 0; i < n; i++) truth[i] = WF_UW_ID_WORK_BASE + s->ids[n - 1 - i];
    truth[n] = WF_UW_ID_WORKER_ROOT;
    return n + 1;
}

static int same(const int32_t *a, uint32_t n, const int32_t *b, uint32_t m) {
    return n == m && memcmp(a, b, n * sizeof *a) == 0;
}

static int is_work(int32_t id) {
    return id >= WF_UW_ID_WORK_BASE && id < WF_UW_ID_WORK_BASE + WF_UW_WORK_FUNCTIONS;
}

static void keep(wf_uw_stress_stats *st, int32_t invalid, int32_t first_diff, int mode,
                 const wf_uw_walk *walk, const int32_t *walked, uint32_t n, const int32_t *truth,
                 uint32_t m) {
    if (st->kept >= WF_UW_KEPT_INVALID) return;
    wf_uw_kept_sample *k = &st->kept_samples[st->kept++];
    k->invalid = invalid;
    k->first_diff = first_diff;
    k->mode = mode;
    k->stop = walk->stop;
    k->walked_count = n < WF_UW_KEPT_IDS ? n : WF_UW_KEPT_IDS;
    k->shadow_count = m < WF_UW_KEPT_IDS ? m : WF_UW_KEPT_IDS;
    memcpy(k->walked, walked, k->walked_count * sizeof *walked);
    memcpy(k->shadow, truth, k->shadow_count * sizeof *truth);
    k->pc0 = walk->frames > 0 ? walk->frame[0].pc : 0;
}

/* Count an invalid sample under its signature key; async-signal-safe (the thread's own stats). */
static void count_signature(wf_uw_stress_stats *st, int32_t invalid, int32_t first_diff,
                            const int32_t *walked, uint32_t n) {
    uint32_t cut = first_diff >= 0 && (uint32_t)first_diff < n ? (uint32_t)first_diff + 1 : n;
    int32_t id = cut > 0 ? walked[cut - 1] : -1;
    uint64_t now = wf_uw_now_ns();
    for (uint32_t i = 0; i < st->signature_slots; i++) {
        wf_uw_signature_count *c = &st->signature_counts[i];
        if (c->invalid == invalid && c->id == id) {
            c->count++;
            c->last_ns = now;
            return;
        }
    }
    if (st->signature_slots >= WF_UW_SIGNATURE_SLOTS) {
        st->signatures_lost++;
        return;
    }
    st->signature_counts[st->signature_slots++] = (wf_uw_signature_count){
        .invalid = invalid, .id = id, .count = 1, .first_ns = now, .last_ns = now};
}

/* The end of `push %rbp; mov %rsp,%rbp` in a function's first bytes; 0 when it has none. */
static uintptr_t frame_record_set_up(const wf_uw_range *r) {
    const uint8_t *code = (const uint8_t *)r->start;
    for (uintptr_t i = 0; i + 3 <= PROLOGUE_SCAN && r->start + i + 3 <= r->end; i++)
        if (code[i] == 0x48 && code[i + 1] == 0x89 && code[i + 2] == 0xe5) return r->start + i + 3;
    return 0;
}

/* A frame-pointer walk's known limit on this sample: a function on the stack without a frame
   record, or the interrupted one before its record is set up or at its `ret` (rbp holds the
   caller's record there, and the walk legitimately skips the caller). */
static int beyond_limit(const wf_uw_shadow *shadow, uintptr_t pc0) {
    if (!wf_unwinder_needs_frame_pointers()) return 0;
    uint32_t depth = shadow->depth < WF_UW_SHADOW_MAX ? shadow->depth : WF_UW_SHADOW_MAX;
    for (uint32_t i = 0; i < depth; i++)
        if (!wf_uw_work_ranges[shadow->ids[i] % WF_UW_WORK_FUNCTIONS].frame_pointer) return 1;
    int id = wf_uw_frame_id(pc0);
    if (!is_work(id)) return 0;
    const wf_uw_range *r = &wf_uw_work_ranges[id - WF_UW_ID_WORK_BASE];
    if (!r->frame_pointer || pc0 < frame_record_set_up(r)) return 1;
    const uint8_t *at = (const uint8_t *)pc0;
    return at[0] == RET || (at[0] == REP_PREFIX && at[1] == RET);
}

static void judge(wf_uw_sampler *s, int mode, const wf_uw_walk *walk, const int32_t *truth,
                  uint32_t m, uintptr_t pc0) {
    wf_uw_stress_stats *st = &s->stats;
    if (beyond_limit(&s->worker.shadow, pc0)) {
        st->known_limit++;
        return;
    }
    int32_t ids[WF_UW_MAX_FRAMES];
    uint32_t n = 0;
    for (uint32_t i = 0; i < walk->frames; i++)
        if (i > 0 || walk->frame[i].id != WF_UW_ID_UNKNOWN) ids[n++] = walk->frame[i].id;
    if (same(ids, n, truth, m)) {
        st->matched++;
        return;
    }
    if (n > 0 && is_work(ids[0]) && same(ids + 1, n - 1, truth, m)) {
        st->tolerated++;
        return;
    }
    int32_t first_diff;
    int invalid = wf_uw_classify(ids, n, truth, m, walk->stop == WF_UW_STOP_CYCLE, &first_diff);
    st->invalid_kinds[invalid]++;
    count_signature(st, invalid, first_diff, ids, n);
    keep(st, invalid, first_diff, mode, walk, ids, n, truth, m);
}

static void sample(wf_uw_sampler *s, ucontext_t *uc) {
    wf_uw_stress_stats *st = &s->stats;
    uint64_t start = wf_uw_now_ns();
    st->delivered++;
    if (s->last_ns != 0) st->interval_hist[wf_uw_log2_bucket(start - s->last_ns)]++;
    s->last_ns = start;
    int overrun = timer_getoverrun(s->timer);
    st->overruns += overrun > 0 ? (uint64_t)overrun : 0;

    int32_t truth[WF_UW_SHADOW_MAX + 1];
    uint32_t m = shadow_truth(&s->worker.shadow, truth);
    int mode = s->cfg->mode == WF_UW_ALTERNATE ? (int)(s->samples++ & 1) : s->cfg->mode;
    ucontext_t copy;
    wf_uw_frame frames[WF_UW_MAX_FRAMES];
    wf_uw_walk walk = {.stop_id = WF_UW_ID_WORKER_ROOT, .frame = frames, .signal_frame = 1};
    if (mode == WF_UW_FROM_UCONTEXT) {
        memcpy(&copy, uc, sizeof copy);
        walk.uc = &copy;
    }
    wf_fault fault;
    wf_uw_walk_guarded(&walk, &fault);
    st->latency_hist[wf_uw_log2_bucket(wf_uw_now_ns() - start)]++;
    st->walked++;
    st->frames += walk.frames;
    st->stops[walk.stop]++;
    if (beyond_limit(&s->worker.shadow, wf_uc_pc(uc))) {
        st->known_limit++; /* whatever the walk did, a fault included: not judged */
        return;
    }
    st->faults += walk.stop == WF_UW_STOP_FAULT;
    st->hangs += walk.stop == WF_UW_STOP_HANG;
    int judged = walk.stop != WF_UW_STOP_FAULT && walk.stop != WF_UW_STOP_HANG;
    if (judged) judge(s, mode, &walk, truth, m, wf_uc_pc(uc));
    wf_uw_companion_sample(uc, judged ? &walk : NULL, truth, m);
}

void wf_uw_on_sample(int signo, siginfo_t *info, void *ucontext) {
    (void)signo;
    (void)info;
    int saved_errno = errno;
    wf_uw_sampler *s = wf_uw_current_sampler;
    if (s != NULL && s->armed) sample(s, ucontext);
    errno = saved_errno;
}
