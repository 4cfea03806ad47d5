/* case_queue.h — internal: section 9 hooks for the case decoder and encoder, and the decoded
 * program for the executor (queue_case_run.c). The program belongs to the mapped case, like the VM
 * regions: decoding another case replaces it. */
#ifndef WALKFUZZ_CASE_QUEUE_H
#define WALKFUZZ_CASE_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "case_reader.h"
#include "wf_case_queue.h"

typedef struct wf_queue_op {
    uint8_t code;                   /* wf_queue_opcode */
    uint8_t queue;                  /* registration index operand */
    uint8_t which, mode;            /* HANDLER; THREAD: state, flags; MISUSE: kind */
    int32_t n;                      /* REGISTER, RESIZE: size; SET_ARG: index; ALIAS: offset */
    uint32_t options;               /* REGISTER, HANDLER */
    uint16_t inner_at, inner_count; /* SAFEPOINT */
    uint64_t pc, sp, fp;            /* ENQUEUE, COMPRESS, SAFEPOINT; POKE: pc = address;
                                       THREAD: the anchor */
    uint64_t arg;                   /* ENQUEUE, SET_ARG; POKE: value */
} wf_queue_op;

/* Does op take the next registration index (REGISTER, ALIAS, a registering MISUSE)? */
static inline int wf_queue_op_registers(const wf_queue_op *op) {
    return op->code == WF_QOP_REGISTER || op->code == WF_QOP_ALIAS ||
           (op->code == WF_QOP_MISUSE &&
            (op->which == WF_MISUSE_REGISTER_ENV || op->which == WF_MISUSE_REGISTER_NO_FUN));
}

/* Forget the program (a case without section 9). */
void wf_case_queue_clear(void);
/* Decode a section 9 payload (the reader is bounded to it); the thread's stack bounds must be
   known (section 5 precedes). 0 or a wf_case_status recorded in r. */
int wf_case_queue_decode(case_reader *r);
/* Bytes of the encoded section 9 with its header (0: no program); write them to out. */
size_t wf_case_queue_encoded_size(void);
void wf_case_queue_write(uint8_t *out);
/* Section 9 of ops[0..count) with its header: its size, and the bytes into out unless NULL. */
size_t wf_case_queue_encode(const wf_queue_op *ops, uint32_t count, uint8_t *out);
/* Make ops[0..count) the mapped case's program (count <= WF_QUEUE_MAX_OPS; the caller
   keeps the domain rules check_op enforces: the queue harness generator). */
void wf_case_queue_set(const wf_queue_op *ops, uint32_t count);
/* Undo what the last run's POKE and THREAD ops changed (the run does it when it ends; call
   it after a run that a fault abandoned). */
void wf_case_queue_undo(void);
/* The decoded program. */
const wf_queue_op *wf_case_queue_ops(uint32_t *count);

#endif /* WALKFUZZ_CASE_QUEUE_H */
