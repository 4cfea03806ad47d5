/* vm_repeat.c — a run of stack bytes repeated below itself (vm_image.h): how case section 5
 * with WF_CASE_SECTION_RUNS expands (docs/case-format.md §2) and how the generator lays a
 * deep run (wf_gen.h). Frames are relocatable but for the stack addresses they hold (saved
 * fps, saved anchors), and those point into the run itself or the copy of it just above. */
#include <string.h>

#include "vm_image.h"

/* The word v of copy k of the run at hi (n bytes): moved with the copy if it points into the
   run or the copy above it. */
static inline uint64_t relocated(uint64_t v, uintptr_t hi, uint32_t n, uint64_t k) {
    return v - hi < 2 * (uint64_t)n ? v - k * n : v;
}

void wf_vm_stack_repeat(uint8_t *run, uintptr_t hi, uint32_t n, uint32_t times) {
    for (uint32_t k = 1; k < times; k++) {
        uint8_t *copy = run - (size_t)k * n;
        for (uint32_t i = 0; i < n; i += 8) {
            uint64_t v;
            memcpy(&v, run + i, 8);
            v = relocated(v, hi, n, k);
            memcpy(copy + i, &v, 8);
        }
    }
}

int wf_vm_stack_repeat_holds(const uint8_t *run, uintptr_t hi, uint32_t n, uint32_t times) {
    for (uint32_t k = 1; k < times; k++) {
        const uint8_t *copy = run - (size_t)k * n;
        for (uint32_t i = 0; i < n; i += 8) {
            uint64_t v, w;
            memcpy(&v, run + i, 8);
            memcpy(&w, copy + i, 8);
            if (w != relocated(v, hi, n, k)) return 0;
        }
    }
    return 1;
}
