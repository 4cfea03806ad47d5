/* wf_api_fuzz.h — the `api` fuzz harness's one C call: input bytes -> a generated case (the
 * layouts harness's generator, wf_gen.h) + a sequence of iterator API operations, run through
 * the walker's table (wf_walker.h) under the crash guard, each result checked as it comes:
 *
 *   input:  byte 0 bit 0 (WF_API_FUZZ_WILD): info calls on seen handles only (clear), or also
 *           on arbitrary ones (set); then generator bytes; what the generator leaves is the
 *           operation sequence: one byte per op (op = byte % WF_API_OP_COUNT), then its
 *           operand bytes (docs/case-format.md, "api harness inputs"). Ops run inside the
 *           case's own RunWithIterator* callback; FROM_FRAME and NESTED open a callback of
 *           their own (up to WF_API_FUZZ_MAX_DEPTH deep) whose ops run until RETURN.
 *   oracle: an iterator's expected walk is the case's true trace (the top run and NESTED) or
 *           the in-core reference walker's walk from the frame (FROM_FRAME); NextFrame gives
 *           its frames in order from the last rewind, then its end code, sticky, *frame left
 *           as it was; State is 1 until NextFrame returned the end code, then that code;
 *           GetMethodInfo/GetClassInfo match the mapped VM's records (empty for an invalid
 *           handle), lengths are full lengths, names truncated to capacity-1 plus NUL and not
 *           a byte written at or past the capacity (canary bytes after the buffer);
 *           ThreadState as the reference walker's; Capabilities defined bits, stable.
 *   result: r->check names the operation (api-next-frame, api-method-info, ...), r->queue_op
 *           the index of the failing op, also after a crash or hang inside it.
 */
#ifndef WALKFUZZ_WF_API_FUZZ_H
#define WALKFUZZ_WF_API_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "wf_case.h"
#include "wf_run.h"
#include "wf_walker.h"

/* cffi:begin */
#define WF_API_FUZZ_WILD 1
#define WF_API_FUZZ_MAX_OPS 64    /* ops of one input, nested ones included */
#define WF_API_FUZZ_MAX_DEPTH 3   /* iterators open at once (the case's + 2 nested) */
#define WF_API_FUZZ_MAX_FRAMES 16 /* Java frames of the generated case */
#define WF_API_NAME_CAP 72        /* largest name buffer capacity (names are shorter/longer) */

enum wf_api_op {
    WF_API_NEXT = 0,         /* ASGST_NextFrame once */
    WF_API_NEXT_N = 1,       /* ASGST_NextFrame 1..8 times (operand), past the end too */
    WF_API_REWIND = 2,       /* ASGST_RewindIterator wherever the walk is */
    WF_API_STATE = 3,        /* ASGST_State */
    WF_API_METHOD_INFO = 4,  /* ASGST_GetMethodInfo: handle, then three capacities */
    WF_API_CLASS_INFO = 5,   /* ASGST_GetClassInfo: handle, then two capacities */
    WF_API_FROM_FRAME = 6,   /* ASGST_RunWithIteratorFromFrame at an expected frame */
    WF_API_NESTED = 7,       /* the case's RunWithIterator* again, inside the callback */
    WF_API_CAPABILITIES = 8, /* ASGST_Capabilities */
    WF_API_THREAD_STATE = 9, /* ASGST_ThreadState */
    WF_API_RETURN = 10,      /* leave the current callback */
    WF_API_NULL_INFO = 11,   /* GetMethodInfo, GetClassInfo with a NULL info: handle each */
    WF_API_OP_COUNT = 12
};

/* Generate, run and check one input on walker w. Returns r->finding. Not signal-safe. */
int wf_api_fuzz_run(const struct wf_walker *w, const uint8_t *data, size_t len, struct wf_case *c,
                    struct wf_run_result *r);
/* Ops the last wf_api_fuzz_run ran, and the op at index i (-1 out of range). */
uint32_t wf_api_fuzz_op_count(void);
int wf_api_fuzz_op(uint32_t i);
/* Name of an op ("next-frame", "method-info", ...; "none" out of range). */
const char *wf_api_op_name(int op);
/* cffi:end */

#endif /* WALKFUZZ_WF_API_FUZZ_H */
