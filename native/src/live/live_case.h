/* live_case.h — internal: a live stress capture encoded as a case (wf_live_capture.h,
 * docs/case-format.md). Runs in the drain, never in a handler; one drain at a time. */
#ifndef WALKFUZZ_LIVE_CASE_H
#define WALKFUZZ_LIVE_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "wf_live_capture.h"
#include "wf_live_worker.h"

/* Copy capture c's stack image (and worker w's C top) into the encoder's image: after this
   the encoding reads neither c's stack copies nor w's deep buffer. */
void wf_live_case_lay_out(const struct wf_live_capture *c, const struct wf_live_worker *w);
/* Fill info from capture c (of a run in `mode`, by worker w; laid out last) and encode its
   case into out (capacity cap). The length, or minus the capacity needed; info->status < 0
   (and 0 returned) when the capture cannot be a case. */
int64_t wf_live_case_encode(const struct wf_live_capture *c, int mode,
                            const struct wf_live_worker *w, wf_live_finding *info, uint8_t *out,
                            size_t cap);

#endif /* WALKFUZZ_LIVE_CASE_H */
