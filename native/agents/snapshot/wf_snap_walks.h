/* The unwinders' walks of a parsed snapshot (internal; not cffi-visible). Each records into out
 * through wf_snap_record and returns the wf_snap_stop that ended it; wf_snap_walk runs them
 * inside the guard. */
#ifndef WF_SNAP_WALKS_H
#define WF_SNAP_WALKS_H

#include "wf_snap_image.h"

int32_t wf_snap_walk_libunwind(const wf_snap_view *v, const wf_snap_image *im, wf_snap_result *out);

int32_t wf_snap_walk_libdw(const wf_snap_view *v, const wf_snap_image *im, wf_snap_result *out);

#endif
