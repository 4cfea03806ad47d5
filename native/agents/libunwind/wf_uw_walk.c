/* The walk loop: unw_init_local2, then unw_step until the known root, libunwind's own end,
 * an error, a repeated frame or the frame budget — each exit named by a wf_uw_stop.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <string.h>

#include "wf_uw_walk.h"

int32_t wf_uw_walked_id(uintptr_t pc, int exact) {
    /* A return address may sit one past the call's function (a noreturn call at its end). */
    return wf_uw_frame_id(exact ? pc : pc - 1);
}

/* pc, sp and fp seen before: everything the next step's CFA and return address come from
   repeats, so the next steps repeat too and libunwind would never end. */
static int seen_before(const wf_uw_frame *frame, uint32_t n, const wf_uw_frame *f) {
    for (uint32_t i = 0; i < n; i++)
        if (frame[i].pc == f->pc && frame[i].sp == f->sp && frame[i].fp == f->fp) return 1;
    return 0;
}

/* Step up to the interrupted frame: libunwind 1.6.2 flags (unw_is_signal_frame) the frame
   whose registers it restored from the signal frame, i.e. the one after __restore_rt. Returns 0
   there, else a wf_uw_stop. */
static int32_t pass_signal_frame(wf_uw_walk *w, unw_cursor_t *cursor) {
    for (int i = 0; i < WF_UW_MAX_HANDLER_FRAMES; i++) {
        if (unw_is_signal_frame(cursor) > 0) return 0;
        w->steps++;
        int rc = unw_step(cursor);
        if (rc <= 0) {
            w->unw_rc = rc;
            return rc == 0 ? WF_UW_STOP_END : WF_UW_STOP_STEP_ERROR;
        }
    }
    return WF_UW_STOP_BUDGET;
}

/* `exact`: frame 0's pc is where the thread stopped, not a return address. */
static int32_t record_frames(wf_uw_walk *w, unw_cursor_t *cursor, int exact) {
    for (;;) {
        unw_word_t pc = 0, sp = 0, fp = 0;
        unw_get_reg(cursor, UNW_REG_IP, &pc);
        unw_get_reg(cursor, UNW_REG_SP, &sp);
        unw_get_reg(cursor, UNW_X86_64_RBP, &fp);
        wf_uw_frame *f = &w->frame[w->frames];
        f->pc = pc;
        f->sp = sp;
        f->fp = fp;
        if (seen_before(w->frame, w->frames, f)) return WF_UW_STOP_CYCLE;
        f->signal_frame = unw_is_signal_frame(cursor) > 0;
        f->id = wf_uw_walked_id(pc, exact || f->signal_frame);
        w->frames++;
        wf_guard_progress(w->frames, sp, fp, pc);
        if (f->id == w->stop_id) return WF_UW_STOP_ROOT;
        if (w->frames == WF_UW_MAX_FRAMES) return WF_UW_STOP_BUDGET;
        exact = 0;
        w->steps++;
        int rc = unw_step(cursor);
        if (rc <= 0) {
            w->unw_rc = rc;
            return rc == 0 ? WF_UW_STOP_END : WF_UW_STOP_STEP_ERROR;
        }
    }
}

static intptr_t walk_fn(void *arg) {
    wf_uw_walk *w = arg;
    unw_cursor_t cursor;
    unw_context_t here;
    int rc;
    if (w->uc != NULL) {
        rc = unw_init_local2(&cursor, w->uc, w->init_flags);
    } else {
        unw_getcontext(&here);
        rc = unw_init_local(&cursor, &here);
    }
    if (rc < 0) {
        w->unw_rc = rc;
        return WF_UW_STOP_INIT_ERROR;
    }
    if (w->uc == NULL) {
        int32_t stop = pass_signal_frame(w, &cursor);
        return stop != 0 ? stop : record_frames(w, &cursor, 1);
    }
    return record_frames(w, &cursor, (w->init_flags & UNW_INIT_SIGNAL_FRAME) != 0);
}

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
