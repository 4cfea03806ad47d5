/* wf_gen.h — the generator: bytes or a seed -> a well-formed case of the simulated VM
 * (every frame kind, every thread state, every walk option), mapped at WF_VM_ROOT, with the
 * true trace in the wf_case. The same bytes (or seed) and params give the same case.
 *
 * Stack plan, outermost (bottom) first:
 *   C thread start (return address 0) -> entry (no saved anchor) -> Java segment
 *   [-> native wrapper -> C -> entry (saved anchor = that wrapper) -> Java segment]*
 *   -> top, by thread state: IN_JAVA: a Java frame (maybe before its frame is built, or at
 *   its `ret` after it was popped, or an interpreted callee before its prologue), a stub
 *   or a leaf C frame; IN_NATIVE: native wrapper + C (anchor = wrapper); IN_VM / BLOCKED:
 *   Java frame + C (anchor = that frame); NOT_JAVA: C frames only.
 * The generator also keeps the physical frames it laid out (wf_gen_layout_*), top first.
 *
 * Deep stacks (params.deep = 1): one input in 512 (by a hash of all its bytes) gets, from
 * the bytes after the layout's own, a stack that a correct walk leaves at WF_WALK_MAX_DEPTH
 * or near it: a run of
 * 1-4 small units (an interpreted or compiled frame, or a Java -> C -> Java crossing:
 * native wrapper, C, entry) repeated above the bottom entry frame, sized so that the walk
 * visits 8192 + d physical frames, d in -2..2 mostly, up to +759 otherwise. The run takes
 * no bytes per frame: the layout is generated a second time with it (the same bytes give the
 * same choices), so a deep input is as short as a shallow one.
 */
#ifndef WALKFUZZ_WF_GEN_H
#define WALKFUZZ_WF_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "wf_case.h"

/* cffi:begin */
#define WF_GEN_MAX_FRAMES 4000
#define WF_GEN_DEFAULT_MAX_FRAMES 48
#define WF_GEN_MAX_PHYSICAL 10240 /* physical frames of a layout, deep run included */

typedef struct wf_gen_params {
    int32_t state;       /* wf_thread_state to force, or -1: chosen by the bytes */
    int32_t options;     /* ASGST options to force, or -1 */
    int32_t entry;       /* wf_walk_entry to force, or -1 */
    int32_t consistent;  /* 1: thread flags always match the options; 0: sometimes not */
    uint32_t min_frames; /* Java frames at least (<= max_frames) */
    uint32_t max_frames; /* Java frames at most; 0 = WF_GEN_DEFAULT_MAX_FRAMES, cap 4000 */
    uint32_t deep;       /* 1: one input in 512 gets a deep stack (above); 2: all (tests);
                            0: never (the default) */
} wf_gen_params;

typedef struct wf_gen_frame {
    int kind; /* wf_frame_kind */
    uint64_t sp, fp, pc;
} wf_gen_frame;

/* Default params: everything chosen by the bytes. */
void wf_gen_default_params(wf_gen_params *p);
/* Generate from bytes (any length; zeros after the end). WF_CASE_OK or WF_CASE_ERR_MAP. */
int wf_gen_from_bytes(const uint8_t *data, size_t len, const wf_gen_params *p, wf_case *c);
/* Generate from a 64-bit seed. WF_CASE_OK or WF_CASE_ERR_MAP. */
int wf_gen_from_seed(uint64_t seed, const wf_gen_params *p, wf_case *c);
/* Bytes of `data` the last wf_gen_from_bytes consumed (the rest can drive mutations). */
size_t wf_gen_consumed(void);
/* Physical frames a walk of the last generated case would visit without a depth limit (a
   correct walk stops after WF_WALK_MAX_DEPTH of them), 0 when it fails before any. */
uint32_t wf_gen_walk_depth(void);
/* Physical frames of the last generated case, top (index 0) to bottom. */
uint32_t wf_gen_layout_count(void);
int wf_gen_layout_frame(uint32_t i, wf_gen_frame *out);
/* cffi:end */

#endif /* WALKFUZZ_WF_GEN_H */
