/* The frame-pointer walk, in every extension (internal; not cffi-visible): the fp unwinder's
 * backend (unwinders/wf_unw_fp.c) is this walk, and a stress run of any other unwinder walks
 * each sample with it too (wf_uw_companion.c): a frame-pointer walker needs no library and
 * coexists with every one of them in one process.
 */
#ifndef WF_UW_FP_WALK_H
#define WF_UW_FP_WALK_H

#include "wf_unwinder.h"

/* Walk the rbp chain from w->uc (or from the caller's signal frame when w->uc is NULL),
   feeding every frame to wf_uw_record(); returns a wf_uw_stop. Runs inside the guard. */
int32_t wf_uw_fp_walk(wf_uw_walk *w);

#endif
