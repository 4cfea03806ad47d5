/* The one interface every native unwinder backend implements (internal; not cffi-visible).
 *
 * One backend per extension (unwinders/wf_unw_<name>.c, linked with the common walk, fuzz and
 * stress files): their unw_* and _Unwind_* symbols clash in one process. A step-style backend
 * (libunwind, llvm, fp) loops "record, step"; a callback-style one (libgcc, libdw) records
 * in its callback and stops the walk when wf_uw_record returns non-zero.
 *
 *   wf_uw_walk_guarded (wf_uw_walk.c)
 *     wf_guard_call_masked
 *       wf_unwinder_walk (the backend)     init from w->uc, or from here through the handler
 *         wf_uw_record per frame (common)  id, cycle, budget, root: 0 = go on, else a stop
 */
#ifndef WF_UNWINDER_H
#define WF_UNWINDER_H

#include <stdint.h>
#include <ucontext.h>

#include "wf_unwind.h"

/* Frames a sigframe-mode walk may pass before it must have met the signal frame. */
#define WF_UW_MAX_HANDLER_FRAMES 16

typedef struct wf_uw_walk {
    /* in */
    ucontext_t *uc;     /* context to walk from; NULL = capture in the walk and record from
                           the interrupted frame on, the one after __restore_rt */
    int signal_frame;   /* uc's pc is where the thread stopped, not a return address */
    int32_t stop_id;    /* the walk is complete at a frame with this id */
    wf_uw_frame *frame; /* WF_UW_MAX_FRAMES slots */
    /* out */
    int32_t stop;   /* wf_uw_stop */
    int32_t unw_rc; /* the backend's last return code (0 or its negative error) */
    uint32_t frames;
    uint32_t steps; /* step calls made (or frames passed to a callback) */
} wf_uw_walk;

/* Walk from w->uc (or from the caller's signal frame when w->uc is NULL), feeding every frame
   to wf_uw_record(); returns a wf_uw_stop. Runs inside the guard. */
int32_t wf_unwinder_walk(wf_uw_walk *w);

/* Name and library of the unwinder this extension was built with. */
const char *wf_unwinder_name(void);
const char *wf_unwinder_library(void);

/* An address inside the unwinder's own code (a perturbation may point a register there). */
uintptr_t wf_unwinder_code(void);

/* How a chain's bottom captures its context: called through this pointer from the bottom, so
   the captured pc is a return address into the bottom. The unwinder's own capture where it has
   one that fills a ucontext_t (libunwind's unw_getcontext), else glibc's getcontext. */
typedef int wf_uw_capture_fn(ucontext_t *uc);
wf_uw_capture_fn *wf_unwinder_capture(void);

/* 1 when the unwinder sees only frames with a frame record (a frame-pointer walk): the fuzz
   oracle does not judge its walks over chains with a function that has none (its known limit,
   counted as known_limit), 0 when unwind tables let it see every frame. */
int wf_unwinder_needs_frame_pointers(void);

/* Record one walked frame; 0 = go on, else the wf_uw_stop that ends the walk (root, cycle,
   budget). Async-signal-safe. */
int32_t wf_uw_record(wf_uw_walk *w, uintptr_t pc, uintptr_t sp, uintptr_t fp, int signal_frame,
                     int exact);

#endif
