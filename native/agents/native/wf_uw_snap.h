/* A finding's walk kept as a remote-memory snapshot (native/agents/snapshot/wf_snapshot.h's
 * file layout): the perturbed registers the unwinder started from, the stack it walked, and the
 * known chain as truth when the input was not perturbed. A snapshot replays in any process, where
 * the input itself walks a fresh process's stack (stale words below the chain differ, and some
 * walks read them). Taken only after a walk that is a finding, so the hot path pays one test.
 */
#ifndef WF_UW_SNAP_H
#define WF_UW_SNAP_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "wf_unwind.h"
#include "wf_uw_input.h"

/* cffi:begin */
/* Arm (buf non-NULL) or disarm the capture on this thread's walks. Armed, every walk that is a
   finding writes its snapshot into buf (cap bytes; the stack part is cut to fit), without a
   module map (M = 0): the map is this process's, which the caller reads and inserts after the
   truth ranges. */
void wf_uw_snapshot_arm(uint8_t *buf, size_t cap);

/* Bytes of the last snapshot taken since the capture was armed, 0 if none. */
size_t wf_uw_snapshot_size(void);
/* cffi:end */

/* Take the snapshot of a walk that was a finding, if armed: `walked` the perturbed context,
   `captured` the chain's, `low` the lowest address of the walk's own locals (a perturbed
   register may point into them), [stack_lo, stack_hi) this thread's stack. */
void wf_uw_snapshot_take(const ucontext_t *walked, const ucontext_t *captured, uintptr_t low,
                         uintptr_t stack_lo, uintptr_t stack_hi, const wf_uw_case *cs,
                         const wf_uw_result *out);

#endif
