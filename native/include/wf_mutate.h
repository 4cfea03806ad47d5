/* wf_mutate.h — mutation operators for the fuzz harnesses, applied to the mapped case.
 * Each keeps the case decodable (tables stay within the format's rules, so a mutated case
 * encodes and decodes to the same walk) and drops the truth: a mutated case is checked
 * against the reference walker. Layout operators use the generator's physical frames
 * (wf_gen_layout_*) when the case was just generated and fall back to stack words otherwise.
 */
#ifndef WALKFUZZ_WF_MUTATE_H
#define WALKFUZZ_WF_MUTATE_H

#include <stddef.h>
#include <stdint.h>

#include "wf_case.h"

/* cffi:begin */
enum wf_mutation_class {
    WF_MUTATE_REGISTERS = 1, /* context pc/sp/fp: offsets, bit flips, other regions, misalign */
    WF_MUTATE_STACK = 2,     /* stack words: bit flips, pointers into other regions */
    WF_MUTATE_LAYOUT = 4,    /* frames removed/resized, kinds changed, return pcs moved,
                                `ret` bytes placed, frame_complete moved */
    WF_MUTATE_THREAD = 8,    /* anchor corrupted, state/flags/options/entry changed */
    WF_MUTATE_ALL = 15
};

enum wf_mutation_op {
    WF_OP_REG_OFFSET = 1,
    WF_OP_REG_BITFLIP,
    WF_OP_REG_REGION,
    WF_OP_REG_MISALIGN,
    WF_OP_STACK_BITFLIP,
    WF_OP_STACK_REGION,
    WF_OP_STACK_SMALL,
    WF_OP_FRAME_REMOVE,
    WF_OP_FRAME_RESIZE,
    WF_OP_KIND_CHANGE,
    WF_OP_RETURN_PC_MOVE,
    WF_OP_SAVED_FP,
    WF_OP_ANCHOR,
    WF_OP_STATE,
    WF_OP_WALK,
    WF_OP_CODE,
    WF_OP_COUNT
};

/* Apply 1..4 operators from the allowed classes, chosen by the bytes (zeros after the end).
   Returns the number applied (0 if `classes` allows none). Not signal-safe. */
int wf_mutate_bytes(wf_case *c, uint32_t classes, const uint8_t *data, size_t len);
/* The same from a seed. */
int wf_mutate_seed(wf_case *c, uint32_t classes, uint64_t seed);
/* Apply one operator with the given choice bytes; 1 if it changed the case, 0 if it did
   not apply (e.g. no frame to remove). */
int wf_mutate_one(wf_case *c, int op, const uint8_t *data, size_t len);
/* Short name of an operator ("reg-offset", ...). */
const char *wf_mutation_name(int op);
/* cffi:end */

#endif /* WALKFUZZ_WF_MUTATE_H */
