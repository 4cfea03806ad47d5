/* queue_fuzz.h — internal pieces of the queue harness (wf_queue_fuzz.h): the program
 * generator (queue_gen.c) and the log oracle (queue_oracle.c). */
#ifndef WALKFUZZ_QUEUE_FUZZ_H
#define WALKFUZZ_QUEUE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "case/case_queue.h"
#include "wf_case.h"
#include "wf_case_queue.h"
#include "wf_queue.h"
#include "wf_vm.h"
#include "wf_queue_fuzz.h"
#include "wf_run.h"

/* A program for the mapped, just generated case c from data (zeros after the end) into
   ops[0 .. WF_QUEUE_FUZZ_MAX_OPS); `wild` allows mutated operands and pokes. It keeps the
   decoder's domain rules (case_queue.c check_op). Returns the op count (>= 1). */
uint32_t wf_queue_gen_program(const wf_case *c, const uint8_t *data, size_t len, int wild,
                              wf_queue_op *ops);

/* Check the executor's log of ops against the calls' documented meaning (wf_queue_fuzz.h);
   the first failure goes into r (finding, check, queue_op, frames). */
void wf_queue_oracle(const wf_case *c, const wf_queue_op *ops, uint32_t count,
                     const wf_queue_result *log, wf_run_result *r);

#endif /* WALKFUZZ_QUEUE_FUZZ_H */
