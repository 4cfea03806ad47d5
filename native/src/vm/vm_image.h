/* vm_image.h — internal: writing a case's VM part into the fixed regions of wf_vm.h.
 * Used by the decoder and the generator; walkers only read (wf_vm.h).
 *
 * wf_vm_image_begin() clears exactly what the previous case used (table entries, string
 * bytes, stack bytes) so a new case starts from zeroed memory without touching the rest;
 * writers then fill tables in order and wf_vm_image_commit() publishes the root.
 */
#ifndef WALKFUZZ_VM_IMAGE_H
#define WALKFUZZ_VM_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "wf_vm.h"

/* Mutable views of the fixed tables. */
#define WF_VM_MUT ((struct wf_vm *)(uintptr_t)WF_VM_ROOT)
#define WF_VM_THREAD_MUT ((struct wf_vm_thread *)(uintptr_t)WF_VM_THREAD)
#define WF_VM_CLASS_MUT(i) ((struct wf_vm_class *)wf_vm_class_handle(i))
#define WF_VM_METHOD_MUT(i) ((struct wf_vm_method *)wf_vm_method_handle(i))
#define WF_VM_BLOB_MUT(i) \
    ((struct wf_vm_blob *)((uintptr_t)WF_VM_BLOBS + (uintptr_t)(i)*WF_VM_BLOB_STRIDE))
#define WF_VM_PCDESC_MUT(i) \
    ((struct wf_vm_pcdesc *)((uintptr_t)WF_VM_PCDESCS + (uintptr_t)(i)*WF_VM_PCDESC_STRIDE))

/* Start a new case: map on first use, clear what the previous case used, unpublish the root.
   0, or -errno if the regions cannot be mapped. */
int wf_vm_image_begin(void);
/* Copy a name (len bytes, no NUL inside) into the string pool; NULL when the pool is full. */
const char *wf_vm_image_string(const uint8_t *bytes, uint32_t len);
/* The stack image of `size` bytes at [WF_VM_STACK_TOP - size, WF_VM_STACK_TOP). */
uint8_t *wf_vm_image_stack(uint32_t size);
/* Record how many entries of each table were written (maybe partly), for the next begin. */
void wf_vm_image_touched(uint32_t classes, uint32_t methods, uint32_t blobs, uint32_t descs);
/* Publish the root: counts (tables already filled), thread, magic. */
void wf_vm_image_commit(uint32_t classes, uint32_t methods, uint32_t blobs, uint32_t descs);

/* Code patches (case section 10, CODE_BYTES): write bytes over the 0xCC fill at
   [WF_VM_CODE_HEAP + offset, + length), in any order; the case remembers the union of the
   ranges written (sorted, disjoint) for the encoder, and the next wf_vm_image_begin()
   restores the fill. 0, or -1 when the table is full or the range leaves the heap (nothing
   written). */
#define WF_VM_MAX_CODE_PATCHES 1024
int wf_vm_image_code(uint32_t offset, const uint8_t *bytes, uint32_t length);
/* The patches of the mapped case, in order: how many, and the i-th one's place. */
uint32_t wf_vm_image_patch_count(void);
void wf_vm_image_patch(uint32_t i, uint32_t *offset, uint32_t *length);

/* A stack run repeated below itself (case section 5 with WF_CASE_SECTION_RUNS, docs/case-
   format.md §2): the n bytes at `run`, the stack image's bytes at address hi (n and hi
   multiples of 8), stand for themselves and times - 1 copies below: copy k (1 <= k < times)
   at run - k*n is the run with every word v, hi <= v < hi + 2n, lowered by k*n (a saved fp
   or anchor into the run or the copy above moves with its frame). Writes the copies. */
void wf_vm_stack_repeat(uint8_t *run, uintptr_t hi, uint32_t n, uint32_t times);
/* 1 if the bytes below `run` hold exactly those copies. */
int wf_vm_stack_repeat_holds(const uint8_t *run, uintptr_t hi, uint32_t n, uint32_t times);

/* A repeat of a stack image: the run's offset (its highest place), size and places. */
typedef struct wf_vm_stack_run {
    uint32_t offset, size, times;
} wf_vm_stack_run;
/* The repeat, with a run of at most max_n bytes, that stands for the most bytes of the image
   (size bytes at the top of the stack, so its byte 0 is at WF_VM_STACK_TOP - size), for a
   stack recorded rather than generated (a live capture): 1 and *found, or 0 if none repeats.
   Costs about size / 8 * max_n / 8 word compares. */
int wf_vm_stack_repeat_find(const uint8_t *image, uint32_t size, uint32_t max_n,
                            wf_vm_stack_run *found);

/* Forget the generator's record of physical frames (the mapped case is no longer its). */
void wf_gen_layout_reset(void);

#endif /* WALKFUZZ_VM_IMAGE_H */
