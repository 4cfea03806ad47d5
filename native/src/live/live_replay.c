/* live_replay.c — a case with EXPECTED walked again and judged by the live oracle
 * (wf_live_replay.h). The walk is the one EXPECTED names:
 *   WALK     the case's CONTEXT per WALK, through the hot path's guarded walk (wf_run_mapped)
 *   ENQUEUE  section 9 run under the guard; the first ENQUEUE's result, as an empty walk
 *   ELEMENT  section 9 run under the guard; the first element handler's walk
 * and it is turned into what the live sampler would have judged (at most WF_LIVE_WALK_MAX
 * frames, more is an overflow) before wf_live_check sees it.
 */
#include <string.h>

#include "case/case_queue.h"
#include "wf_case_expected.h"
#include "wf_live_capture.h"
#include "wf_live_replay.h"
#include "wf_live_worker.h"
#include "wf_run.h"

_Static_assert(WF_CASE_MAX_EXPECTED <= WF_LIVE_SHADOW_MAX,
               "an expected trace fits a live snapshot");

static struct wf_live_walk walk;
static struct wf_live_shadow snap_frames[WF_LIVE_SHADOW_MAX];
static struct wf_live_snapshot snap = {.cap = WF_LIVE_SHADOW_MAX, .frames = snap_frames};
static wf_queue_result *queue_log;

static int32_t frame_method(uintptr_t handle) {
    if (handle == 0) return -1;
    const struct wf_vm_method *m = wf_vm_method_at(handle);
    return m ? (int32_t)m->index : -2;
}

/* The walk as the live sampler records one: it stops reading at WF_LIVE_WALK_MAX frames. */
static void as_live_walk(const ASGST_Frame *frames, uint32_t count, int32_t run_result, int32_t end,
                         int32_t state_after) {
    wf_live_walk_reset(&walk, run_result);
    walk.count = count < WF_LIVE_WALK_MAX ? count : WF_LIVE_WALK_MAX;
    if (walk.count > 0) memcpy(walk.frames, frames, walk.count * sizeof walk.frames[0]);
    walk.end = count >= WF_LIVE_WALK_MAX ? WF_LIVE_END_OVERFLOW : end;
    walk.state_after = state_after;
}

static void expected_snapshot(const wf_case_expected *e) {
    snap.depth = e->count;
    snap.end = e->end_code == ASGST_WF_DEPTH_LIMIT ? ASGST_WF_DEPTH_LIMIT : ASGST_NO_FRAME;
    for (uint32_t k = 0; k < e->count; k++) {
        const wf_expected_frame *f = &e->frames[k];
        snap.frames[e->count - 1 - k] = (struct wf_live_shadow){
            .method = (uint32_t)f->method,
            .bci = f->bci,
            .type = (uint32_t)(uint8_t)f->type | (uint32_t)(uint8_t)f->level << 8};
    }
}

static void describe_walk(wf_live_replay_result *r, int32_t upto) {
    r->run_result = walk.run_result;
    r->end_code = walk.run_result < 0 ? walk.run_result : walk.end;
    r->state_after = walk.state_after;
    r->walked_count = walk.count;
    uint32_t end = upto < 0 || (uint32_t)upto >= walk.count ? walk.count : (uint32_t)upto + 1;
    r->shape_len = 0;
    for (uint32_t i = 0; i < walk.count; i++) {
        const ASGST_Frame *f = &walk.frames[i];
        if (i < WF_LIVE_FINDING_FRAMES)
            r->walked[i] = (wf_live_frame){.method = frame_method((uintptr_t)f->method),
                                           .bci = f->bci,
                                           .type = (int8_t)f->type,
                                           .level = (int8_t)f->comp_level};
        if (i >= end) continue;
        uint8_t k = wf_shape_kind_of(f->type, f->comp_level);
        if (r->shape_len > 0 && r->shape[r->shape_len - 1] == k) continue;
        if (r->shape_len == WF_SHAPE_MAX) {
            memmove(r->shape, r->shape + 1, WF_SHAPE_MAX - 1);
            r->shape_len--;
        }
        r->shape[r->shape_len++] = k;
    }
}

/* WALK: the hot path walks the case under the guard; its own verdict is not this oracle's. */
static int walk_context(const wf_walker *w, wf_case *c, wf_live_replay_result *r) {
    wf_run_result run;
    wf_run_mapped(w, c, &run);
    int faulted = run.finding == WF_FINDING_CRASH || run.finding == WF_FINDING_HANG;
    as_live_walk(wf_run_frames(), run.frames, faulted ? 0 : run.run_result, run.end_code,
                 run.state_after);
    if (faulted) r->fault = run.fault;
    return faulted;
}

static intptr_t run_program(void *arg) { return wf_case_queue_run_walker(arg, queue_log); }

static const wf_queue_event *first_event(int kind, int32_t op) {
    for (uint32_t i = 0; i < queue_log->event_count; i++) {
        const wf_queue_event *e = &queue_log->events[i];
        if (e->kind == kind && (op < 0 || e->op == op)) return e;
    }
    return NULL;
}

#define ENQUEUE_OP 1 /* the program's second op (live_case.c: REGISTER, ENQUEUE, ...) */

/* ENQUEUE, ELEMENT: run section 9 under the guard. 1 faulted, 0 walked, or a status < 0. */
static int run_queue(const wf_walker *w, uint8_t source, wf_live_replay_result *r) {
    if (!w->has_queue) return WF_LIVE_REPLAY_NO_QUEUE;
    if (queue_log == NULL && (queue_log = wf_queue_result_new()) == NULL)
        return WF_LIVE_REPLAY_NO_MEMORY;
    queue_log->event_count = queue_log->frame_count = 0;
    intptr_t ignored;
    int faulted = wf_guard_call(run_program, (void *)w, &ignored, &r->fault);
    if (faulted) { /* what the abandoned run left behind */
        wf_case_queue_undo();
        w->queue_thread_reset();
    }
    if (source == WF_EXPECTED_ENQUEUE) {
        const wf_queue_event *e = first_event(WF_QEV_OP, ENQUEUE_OP);
        as_live_walk(NULL, 0, faulted || e == NULL ? 0 : e->code, 0, 0);
        return faulted;
    } /* ELEMENT: */
    const wf_queue_event *e = first_event(WF_QEV_ELEMENT, -1);
    if (e == NULL) return faulted ? 1 : WF_LIVE_REPLAY_NO_ELEMENT;
    int32_t end = e->code == 1 ? WF_LIVE_END_OVERFLOW : e->code; /* 1: cut by the log */
    as_live_walk(queue_log->frames + e->frame_begin, e->frame_count, ASGST_JAVA_TRACE, end,
                 e->state);
    return faulted;
}

/* What live_queue.c does not judge: an element whose frame is gone; an Enqueue that enqueued
   (its walk is judged at the safepoint) or was refused (full queue, other error). */
static int not_judged(uint8_t source) {
    if (source == WF_EXPECTED_ELEMENT) return walk.end == ASGST_WF_FRAME_GONE && walk.count == 0;
    int32_t rc = walk.run_result;
    return source == WF_EXPECTED_ENQUEUE &&
           (rc == ASGST_JAVA_TRACE || rc == ASGST_ENQUEUE_FULL_QUEUE ||
            rc == ASGST_ENQUEUE_OTHER_ERROR || rc == ASGST_ENQUEUE_NO_QUEUE);
}

int wf_live_replay(const wf_walker *w, wf_case *c, wf_live_replay_result *r) {
    memset(r, 0, sizeof *r);
    r->first_diff = -1;
    const wf_case_expected *e = wf_case_expected_get();
    if (e == NULL) return r->status = WF_LIVE_REPLAY_NO_EXPECTED;
    int faulted =
        e->source == WF_EXPECTED_WALK ? walk_context(w, c, r) : run_queue(w, e->source, r);
    if (faulted < 0) return r->status = faulted;
    if (faulted) {
        r->outcome = r->fault.kind == WF_FAULT_HANG ? WF_LIVE_REPLAY_HANG : WF_LIVE_REPLAY_FAULT;
        describe_walk(r, -1);
        return r->status;
    }
    if (not_judged(e->source)) {
        r->outcome = WF_LIVE_REPLAY_NOT_JUDGED;
        describe_walk(r, -1);
        return r->status;
    }
    expected_snapshot(e);
    struct wf_live_verdict v;
    wf_live_check(&snap, &walk, &v);
    r->outcome = v.outcome == WF_LIVE_EXACT ? WF_LIVE_REPLAY_EXACT : WF_LIVE_REPLAY_INVALID;
    r->cls = v.outcome == WF_LIVE_INVALID ? v.cls : 0;
    r->first_diff = v.first_diff;
    describe_walk(r, v.first_diff);
    return r->status;
}
