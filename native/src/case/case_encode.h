/* case_encode.h — internal: encoding a case from parts, for cases whose thread and stack are
 * not the mapped case's (a live stress capture, live_case.c). The tables (classes, methods,
 * code) are always the mapped VM's at WF_VM_ROOT, whoever mapped them. */
#ifndef WALKFUZZ_CASE_ENCODE_H
#define WALKFUZZ_CASE_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "case_queue.h"
#include "wf_case.h"
#include "wf_case_expected.h"
#include "wf_vm.h"

/* A range of the code heap whose bytes section 10 carries. */
typedef struct wf_code_patch {
    uint32_t offset, length;
} wf_code_patch;

typedef struct wf_case_parts {
    const struct wf_vm_thread *thread; /* THREAD: state, flags, anchor */
    const uint8_t *stack;              /* STACK: the image, stack_size bytes */
    uint32_t stack_size;
    const wf_case *c; /* CONTEXT, WALK, and TRUTH if c->has_truth */
    int has_queue;    /* section 9: queue[0..queue_count) */
    const wf_queue_op *queue;
    uint32_t queue_count;
    uint32_t patch_count; /* section 10 when > 0: sorted, disjoint */
    const wf_code_patch *patches;
    const wf_case_expected *expected; /* section 11, NULL for none */
} wf_case_parts;

/* Encode into out (capacity cap; NULL to size). The encoded length, or minus the length needed
   when cap is too small. */
int64_t wf_case_encode_parts(const wf_case_parts *p, uint8_t *out, size_t cap);

#endif /* WALKFUZZ_CASE_ENCODE_H */
