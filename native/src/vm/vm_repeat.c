/* vm_repeat.c — a run of stack bytes repeated below itself (vm_image.h): how case section 5
 * with WF_CASE_SECTION_RUNS expands (docs/case-format.md §2), how the generator lays a
 * deep run (wf_gen.h), and the repeat found in a recorded stack (a live capture's). Frames are
 * relocatable but for the stack addresses they hold (saved fps, saved anchors), and those point
 * into the run itself or the copy of it just above. */
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

/* How many places, from the top one down to at most `times`, hold the run's copies. */
static uint32_t places_holding(const uint8_t *run, uintptr_t hi, uint32_t n, uint32_t times) {
    for (uint32_t k = 1; k < times; k++) {
        const uint8_t *copy = run - (size_t)k * n;
        for (uint32_t i = 0; i < n; i += 8) {
            uint64_t v, w;
            memcpy(&v, run + i, 8);
            memcpy(&w, copy + i, 8);
            if (w != relocated(v, hi, n, k)) return k;
        }
    }
    return times;
}

int wf_vm_stack_repeat_holds(const uint8_t *run, uintptr_t hi, uint32_t n, uint32_t times) {
    return places_holding(run, hi, n, times) == times;
}

static inline uint64_t word_at(const uint8_t *image, uint32_t i) {
    uint64_t v;
    memcpy(&v, image + (size_t)i * 8, 8);
    return v;
}

/* The longest stretch of words that each equal the word n bytes above them, or that word
   lowered by n when it points into the stack: [*end - *len, *end) in words. A first look:
   which words a repeat of n bytes could stand for (the exact rule is relocated()'s). */
static void stretch(const uint8_t *image, uint32_t words, uintptr_t lo, uint32_t n, uint32_t *end,
                    uint32_t *len) {
    uint32_t step = n / 8, run = 0;
    uintptr_t hi = lo + (uintptr_t)words * 8;
    *len = 0;
    for (uint32_t i = 0; i + step < words; i++) {
        uint64_t lower = word_at(image, i), upper = word_at(image, i + step);
        run = lower == upper || (upper - lower == n && upper >= lo && upper < hi) ? run + 1 : 0;
        if (run > *len) {
            *len = run;
            *end = i + 1 + step; /* the stretch's pairs reach n bytes above the last lower word */
        }
    }
    if (*len > 0) *len += step;
}

int wf_vm_stack_repeat_find(const uint8_t *image, uint32_t size, uint32_t max_n,
                            wf_vm_stack_run *found) {
    uint32_t words = size / 8, best = 0;
    uintptr_t lo = WF_VM_STACK_TOP - size;
    for (uint32_t n = 8; n <= max_n && n < size / 2; n += 8) {
        uint32_t end = 0, len = 0;
        stretch(image, words, lo, n, &end, &len);
        uint32_t times = len * 8 / n;
        if (times < 2 || (times - 1) * n <= best) continue; /* saves no more than the best */
        uint32_t offset = end * 8 - n;
        times = places_holding(image + offset, lo + offset, n, times);
        if (times < 2 || (times - 1) * n <= best) continue;
        *found = (wf_vm_stack_run){.offset = offset, .size = n, .times = times};
        best = (times - 1) * n;
    }
    return best > 0;
}
