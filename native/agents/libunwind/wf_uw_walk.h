/* One libunwind walk with a reason for every exit, run inside the crash guard (internal). */
#ifndef WF_UW_WALK_H
#define WF_UW_WALK_H

#include <stdint.h>
#include <ucontext.h>

#include "wf_unwind.h"

/* Frames a sigframe-mode walk may pass before it must have met the signal frame. */
#define WF_UW_MAX_HANDLER_FRAMES 16

typedef struct wf_uw_walk {
    /* in */
    ucontext_t *uc;     /* context to walk from; NULL = unw_getcontext in the walk and
                           record from the interrupted frame on, the one after __restore_rt */
    int init_flags;     /* for unw_init_local2 */
    int32_t stop_id;    /* the walk is complete at a frame with this id */
    wf_uw_frame *frame; /* WF_UW_MAX_FRAMES slots */
    /* out */
    int32_t stop; /* wf_uw_stop */
    int32_t unw_rc;
    uint32_t frames;
    uint32_t steps; /* unw_step calls */
} wf_uw_walk;

/* Walk under wf_guard_call_masked; on a fault, stop is WF_UW_STOP_FAULT or _HANG and *fault
   says what happened. Returns stop. Async-signal-safe as far as libunwind is. */
int wf_uw_walk_guarded(wf_uw_walk *walk, wf_fault *fault);

/* Frame id of a walked pc; `exact` when the pc is not a return address (frame 0, or the frame
   libunwind flags as a signal frame). Async-signal-safe. */
int32_t wf_uw_walked_id(uintptr_t pc, int exact);

#endif
