/* The common side of every walk: the guarded call into the unwinder backend and the recorder
 * of its frames, which ends the walk at the known root, a repeated frame or the frame budget —
 * each exit named by a wf_uw_stop.
 */
#include <string.h>

#include "wf_uw_walk.h"

int32_t wf_uw_walked_id(uintptr_t pc, int exact) {
    /* A return address may sit one past the call's function (a noreturn call at its end). */
    return wf_uw_frame_id(exact ? pc : pc - 1);
}

/* pc, sp and fp seen before: everything the next step's CFA and return address come from
   repeats, so the next steps repeat too and the unwinder would never end. */
static int seen_before(const wf_uw_frame *frame, uint32_t n, const wf_uw_frame *f) {
    for (uint32_t i = 0; i < n; i++)
        if (frame[i].pc == f->pc && frame[i].sp == f->sp && frame[i].fp == f->fp) return 1;
    return 0;
}

int32_t wf_uw_record(wf_uw_walk *w, uintptr_t pc, uintptr_t sp, uintptr_t fp, int signal_frame,
                     int exact) {
    if (w->frames == WF_UW_MAX_FRAMES) return WF_UW_STOP_BUDGET;
    wf_uw_frame *f = &w->frame[w->frames];
    f->pc = pc;
    f->sp = sp;
    f->fp = fp;
    if (seen_before(w->frame, w->frames, f)) return WF_UW_STOP_CYCLE;
    f->signal_frame = signal_frame;
    f->id = wf_uw_walked_id(pc, exact || signal_frame);
    w->frames++;
    wf_guard_progress(w->frames, sp, fp, pc);
    if (f->id == w->stop_id) return WF_UW_STOP_ROOT;
    if (w->frames == WF_UW_MAX_FRAMES) return WF_UW_STOP_BUDGET;
    return WF_UW_STOP_NONE;
}

static intptr_t walk_fn(void *arg) { return wf_unwinder_walk(arg); }

int wf_uw_walk_guarded(wf_uw_walk *w, wf_fault *fault) {
    intptr_t stop = 0;
    w->frames = 0;
    w->steps = 0;
    w->unw_rc = 0;
    memset(fault, 0, sizeof *fault);
    if (wf_guard_call_masked(walk_fn, w, &stop, fault) != 0)
        stop = fault->kind == WF_FAULT_HANG ? WF_UW_STOP_HANG : WF_UW_STOP_FAULT;
    w->stop = (int32_t)stop;
    return w->stop;
}
