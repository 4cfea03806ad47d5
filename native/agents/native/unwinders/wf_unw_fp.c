/* The frame-pointer backend: the rbp-chain walk of wf_uw_fp_walk.c (common to every extension:
 * a stress run of any other unwinder walks its samples with it too). Its known limit, and how
 * the oracles judge it, are described there.
 */
#define _GNU_SOURCE
#include "wf_uw_fp_walk.h"

const char *wf_unwinder_name(void) { return "fp"; }
const char *wf_unwinder_library(void) { return "walkfuzz (built in)"; }
uintptr_t wf_unwinder_code(void) { return (uintptr_t)&wf_uw_fp_walk; }
wf_uw_capture_fn *wf_unwinder_capture(void) { return &getcontext; }
int wf_unwinder_needs_frame_pointers(void) { return 1; }

int32_t wf_unwinder_walk(wf_uw_walk *w) { return wf_uw_fp_walk(w); }
