/* One guarded walk with a reason for every exit, whichever unwinder does it (internal). */
#ifndef WF_UW_WALK_H
#define WF_UW_WALK_H

#include <stdint.h>

#include "wf_unwinder.h"

/* Walk under wf_guard_call_masked; on a fault, stop is WF_UW_STOP_FAULT or _HANG and *fault
   says what happened. Returns stop. Async-signal-safe as far as the unwinder is. */
int wf_uw_walk_guarded(wf_uw_walk *walk, wf_fault *fault);

/* Frame id of a walked pc; `exact` when the pc is not a return address (frame 0, or the frame
   the unwinder flags as a signal frame). Async-signal-safe. */
int32_t wf_uw_walked_id(uintptr_t pc, int exact);

#endif
