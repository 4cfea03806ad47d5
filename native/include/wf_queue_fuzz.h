/* wf_queue_fuzz.h — the `queue` fuzz harness's one C call: input bytes -> a generated case
 * (wf_gen.h) + a queue program over its physical frames (wf_case_queue.h ops: register, enqueue
 * from a frame's context, set an element's arg, compression, resize, size info, start/end handlers,
 * safepoints with ops inside a handler, deregister, thread exit, stack pokes), run through the
 * walker's queue entries (wf_walker.h) under the crash guard, then checked from the executor's log:
 *
 *   input:  byte 0 bit 0 (WF_QUEUE_FUZZ_MUTATE): well-formed program only (clear), or also
 *           wild contexts, out-of-range sizes and indexes, and stack pokes (set);
 *           then generator bytes; what the generator leaves drives the program.
 *   safety:   a fault or a hang in any call                          -> crash / hang
 *   contract: a code asgst.h does not allow (ASGST_WF_FRAME_GONE only for an element walk
 *             with no frame), frames breaking the rules of wf_check  -> contract
 *   bookkeeping: size, capacity, attempts against the calls' results -> contract
 *   order:    elements handled in insertion order, each once, with its arg -> invalid-trace
 *   truth:    an element enqueued from a true frame and walked at a safepoint before any poke
 *             is the true trace from its top Java frame, or FRAME_GONE only if that frame is
 *             above the poll's frame                                 -> invalid-trace
 */
#ifndef WALKFUZZ_WF_QUEUE_FUZZ_H
#define WALKFUZZ_WF_QUEUE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "wf_case.h"
#include "wf_case_queue.h"
#include "wf_run.h"
#include "wf_walker.h"

/* cffi:begin */
#define WF_QUEUE_FUZZ_MUTATE 1
#define WF_QUEUE_FUZZ_MAX_OPS 48          /* ops of one generated program */
#define WF_QUEUE_FUZZ_MAX_REGISTRATIONS 8 /* REGISTER ops of one program */
#define WF_QUEUE_FUZZ_MAX_FRAMES 12       /* Java frames of the generated case */

/* Generate, run and check one input on walker w (w->has_queue must be 1; else r->status is
   WF_CASE_ERR_BAD_FIELD and nothing runs). Returns r->finding. Not signal-safe.
   (Struct tags: this header's cffi block comes before wf_run.h's typedefs.) */
int wf_queue_fuzz_run(const struct wf_walker *w, const uint8_t *data, size_t len, struct wf_case *c,
                      struct wf_run_result *r);
/* Ops of the program the last wf_queue_fuzz_run generated (it stays the mapped case's
   section 9, so wf_case_encode writes a replayable case file). */
uint32_t wf_queue_fuzz_op_count(void);
/* Run the mapped case c's queue program (section 9) with walker w's queue entries under the
   guard, log into log and check the log as the harness does. Returns r->finding; on a fault
   the walker's queues are reset and r->fault says what happened. Not signal-safe. */
int wf_queue_case_run(const struct wf_walker *w, const struct wf_case *c,
                      struct wf_queue_result *log, struct wf_run_result *r);
/* cffi:end */

#endif /* WALKFUZZ_WF_QUEUE_FUZZ_H */
