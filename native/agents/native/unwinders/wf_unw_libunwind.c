/* The libunwind backend: Debian's libunwind (nongnu, libunwind.so.8), unw_init_local2 then
 * unw_step, every frame fed to wf_uw_record.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "wf_unwinder.h"

const char *wf_unwinder_name(void) { return "libunwind"; }
const char *wf_unwinder_library(void) { return "libunwind.so.8"; }
uintptr_t wf_unwinder_code(void) { return (uintptr_t)&unw_step; }
int wf_unwinder_needs_frame_pointers(void) { return 0; }

/* unw_getcontext names libunwind's assembly capture (a macro for unw_tdep_getcontext); on
   x86-64 its unw_context_t is a ucontext_t. */
wf_uw_capture_fn *wf_unwinder_capture(void) { return &unw_tdep_getcontext; }

static int32_t step_stop(wf_uw_walk *w, int rc) {
    w->unw_rc = rc;
    return rc == 0 ? WF_UW_STOP_END : WF_UW_STOP_STEP_ERROR;
}

/* Step up to the interrupted frame: libunwind 1.6.2 flags (unw_is_signal_frame) the frame
   whose registers it restored from the signal frame, i.e. the one after __restore_rt. Returns
   WF_UW_STOP_NONE there, else a wf_uw_stop. */
static int32_t pass_signal_frame(wf_uw_walk *w, unw_cursor_t *cursor) {
    for (int i = 0; i < WF_UW_MAX_HANDLER_FRAMES; i++) {
        if (unw_is_signal_frame(cursor) > 0) return WF_UW_STOP_NONE;
        w->steps++;
        int rc = unw_step(cursor);
        if (rc <= 0) return step_stop(w, rc);
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
        int32_t stop = wf_uw_record(w, pc, sp, fp, unw_is_signal_frame(cursor) > 0, exact);
        if (stop != WF_UW_STOP_NONE) return stop;
        exact = 0;
        w->steps++;
        int rc = unw_step(cursor);
        if (rc <= 0) return step_stop(w, rc);
    }
}

int32_t wf_unwinder_walk(wf_uw_walk *w) {
    unw_cursor_t cursor;
    unw_context_t here;
    int rc;
    if (w->uc != NULL) {
        rc = unw_init_local2(&cursor, w->uc, w->signal_frame ? UNW_INIT_SIGNAL_FRAME : 0);
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
        return stop != WF_UW_STOP_NONE ? stop : record_frames(w, &cursor, 1);
    }
    return record_frames(w, &cursor, w->signal_frame);
}
