/* wf_worker.h — the one C call a fuzz worker (harness process) makes per input.
 *
 * It journals the input (wf_journal.h: on disk before it runs, so a worker death loses
 * nothing), then decodes or generates the case, maps it, walks it under the guard and checks
 * it (wf_run.h). The atheris harnesses and the bare libFuzzer benchmark harness call exactly
 * this, so their exec/s compare the same work.
 *
 * Input layout per harness:
 *   REGISTERS  generator bytes; what the generator leaves drives register-context mutations
 *              (small offsets, bit flips, other regions, misalignment)
 *   LAYOUTS    byte 0 = control (bit 0 clear: walk the layout as generated, against its true
 *              trace; set: mutate layout/thread/stack with the bytes the generator leaves),
 *              then generator bytes
 *   BYTES      a case file (docs/case-format.md), raw-mutated by libFuzzer; checked against
 *              the reference walker (a TRUTH section is ignored: the bytes may have changed)
 *   QUEUE      byte 0 = control (bit 0: also wild operands and stack pokes), then generator
 *              bytes, then the queue program's bytes (wf_queue_fuzz.h); needs w->has_queue
 *   API        byte 0 = control (bit 0: also arbitrary handles), then generator bytes, then
 *              iterator API operations run inside the walk's callbacks (wf_api_fuzz.h)
 */
#ifndef WALKFUZZ_WF_WORKER_H
#define WALKFUZZ_WF_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "wf_case.h"
#include "wf_run.h"
#include "wf_walker.h"

/* cffi:begin */
enum wf_worker_harness {
    WF_HARNESS_REGISTERS = 1,
    WF_HARNESS_LAYOUTS = 2,
    WF_HARNESS_BYTES = 3,
    WF_HARNESS_QUEUE = 4,
    WF_HARNESS_API = 5
};
#define WF_LAYOUTS_MUTATE 1

/* Journal the input, then run it as `harness` on walker w. Returns r->finding
   (WF_FINDING_NONE when the walk was fine or the input does not decode: see r->status). */
int wf_worker_run(int harness, const struct wf_walker *w, const uint8_t *data, size_t len,
                  wf_case *c, wf_run_result *r);

/* What a harness does with a finding (r holds its result): 0 to go on, nonzero to end the
   process as a crash, whose input libFuzzer then stores (a standalone fuzzer's finding, or an
   error in the callback). */
typedef int (*wf_finding_fn)(const uint8_t *data, size_t len);
/* Run libFuzzer (the LLVMFuzzerRunDriver this process has loaded: atheris's, or a preloaded
   sanitizer runtime's) on the command line argv[0..argc), each input going to
   wf_worker_run(harness, w, data, len, c, r) and, when that is a finding, to on_finding: no
   Python on an input's way unless it is a finding. Ctrl-C (SIGINT) then ends the process
   with status 130. Returns when libFuzzer does (it usually exits the process itself): its
   status, -ENOSYS when no libFuzzer is loaded, else -errno. */
int wf_worker_fuzz(int argc, char **argv, int harness, const struct wf_walker *w, wf_case *c,
                   wf_run_result *r, wf_finding_fn on_finding);
/* cffi:end */

#endif
