/* Where perturbed registers may point: memory set up once per process (internal).
 *
 *   edge page i:   [ RW page (pattern i) ][ PROT_NONE ]     pointers just below the edge
 *   heap:          [ RW 64 KiB of pointers to itself, code, zeros ][ PROT_NONE ]
 *   other stack:   a parked thread whose stack holds a real chain; its captured sp/fp/pc
 *   trampoline:    glibc's signal-return code (__restore_rt: mov $15,%rax; syscall)
 */
#ifndef WF_UW_TARGETS_H
#define WF_UW_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#define WF_UW_EDGE_PAGES 4

typedef struct wf_uw_targets {
    uintptr_t edge_page[WF_UW_EDGE_PAGES]; /* start of each RW page */
    uintptr_t page_size;
    uintptr_t heap;
    size_t heap_size;
    uintptr_t restore_rt; /* 0 when it could not be found */
    uintptr_t other_sp, other_fp, other_pc;
    uintptr_t libc_code;   /* a libc function */
    uintptr_t unwind_code; /* a function of the unwinder */
} wf_uw_targets;

/* The process's targets, set up on first use (thread-safe). Not async-signal-safe. */
const wf_uw_targets *wf_uw_targets_get(void);

/* This thread's stack [lo, hi), cached per thread. Not async-signal-safe. */
void wf_uw_this_stack(uintptr_t *lo, uintptr_t *hi);

#endif
