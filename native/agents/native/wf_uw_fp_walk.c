/* The frame-pointer walk: a plain rbp chain, as profilers without unwind tables do it (the
 * fp unwinder's backend, unwinders/wf_unw_fp.c, and the stress companion of every other).
 *
 *   frame record of a function with a frame pointer (push %rbp; mov %rsp,%rbp):
 *
 *   higher addresses
 *   | return address  |  [rbp + 8]   -> the caller's pc
 *   | caller's rbp    |  [rbp]       -> the caller's frame record
 *   lower addresses      sp after the return: rbp + 16
 *
 * Every read goes straight to memory, inside the guard: a bad rbp faults and the guard names
 * it. The walk ends at rbp 0 or a return address 0 (the outermost frame), and refuses an rbp that
 * is misaligned or below the sp of the frame it leaves (the chain runs towards higher addresses).
 * A return into glibc's __restore_rt means a signal frame: the interrupted registers are read from
 * the ucontext that follows the trampoline's return-address slot (the kernel's rt_sigframe).
 *
 * Its known limit: a function without a frame record is invisible to it, and so is its caller
 * when the walk starts in it (rbp still holds the caller's record); a function that uses rbp
 * as a general register breaks the chain. The fuzz oracle does not judge walks over such frames
 * (wf_unwinder_needs_frame_pointers).
 */
#define _GNU_SOURCE
#include "wf_ucontext.h"
#include "wf_uw_fp_walk.h"
#include "wf_uw_targets.h"

/* Why a step ended, as a negative code in w->unw_rc. */
#define FP_E_MISALIGNED (-1)  /* rbp not 8-aligned */
#define FP_E_BACKWARDS (-2)   /* rbp below the sp of the frame being left */
#define FP_E_NO_SIGFRAME (-3) /* the handler's frames never returned into __restore_rt */

typedef struct fp_regs {
    uintptr_t pc, sp, fp;
} fp_regs;

/* One step up the rbp chain; 0 or a wf_uw_stop. */
static int32_t step(wf_uw_walk *w, fp_regs *r) {
    w->steps++;
    if (r->fp == 0) return WF_UW_STOP_END;
    if (r->fp & 7) {
        w->unw_rc = FP_E_MISALIGNED;
        return WF_UW_STOP_STEP_ERROR;
    }
    if (r->fp < r->sp) {
        w->unw_rc = FP_E_BACKWARDS;
        return WF_UW_STOP_STEP_ERROR;
    }
    const uintptr_t *record = (const uintptr_t *)r->fp;
    uintptr_t pc = record[1];
    if (pc == 0) return WF_UW_STOP_END;
    r->sp = r->fp + 16;
    r->fp = record[0];
    r->pc = pc;
    return WF_UW_STOP_NONE;
}

/* Where the walk starts from a signal frame's ucontext: the interrupted registers. */
static void from_ucontext(fp_regs *r, const ucontext_t *uc) {
    r->pc = wf_uc_pc(uc);
    r->sp = wf_uc_sp(uc);
    r->fp = wf_uc_fp(uc);
}

/* `exact`: the first frame's pc is where the thread stopped (a signal frame's registers). */
static int32_t record_frames(wf_uw_walk *w, fp_regs *r, int exact) {
    uintptr_t trampoline = wf_uw_targets_get()->restore_rt;
    for (;;) {
        int32_t stop = wf_uw_record(w, r->pc, r->sp, r->fp, exact, exact);
        if (stop != WF_UW_STOP_NONE) return stop;
        exact = 0;
        uintptr_t slot = r->fp + 8;
        stop = step(w, r);
        if (stop != WF_UW_STOP_NONE) return stop;
        if (trampoline != 0 && r->pc == trampoline) {
            /* the handler's record returns into __restore_rt: its ucontext follows the slot */
            from_ucontext(r, (const ucontext_t *)(slot + 8));
            exact = 1;
        }
    }
}

/* From here through the handler's frames to the signal frame, then the interrupted frame on. */
static int32_t from_signal_frame(wf_uw_walk *w) {
    uintptr_t trampoline = wf_uw_targets_get()->restore_rt;
    fp_regs r = {.pc = 0,
                 .sp = (uintptr_t)__builtin_frame_address(0),
                 .fp = (uintptr_t)__builtin_frame_address(0)};
    for (int i = 0; i < WF_UW_MAX_HANDLER_FRAMES; i++) {
        uintptr_t slot = r.fp + 8;
        int32_t stop = step(w, &r);
        if (stop != WF_UW_STOP_NONE) return stop;
        if (trampoline != 0 && r.pc == trampoline) {
            from_ucontext(&r, (const ucontext_t *)(slot + 8));
            return record_frames(w, &r, 1);
        }
    }
    w->unw_rc = FP_E_NO_SIGFRAME;
    return WF_UW_STOP_BUDGET;
}

int32_t wf_uw_fp_walk(wf_uw_walk *w) {
    if (w->uc == NULL) return from_signal_frame(w);
    fp_regs r;
    from_ucontext(&r, w->uc);
    return record_frames(w, &r, w->signal_frame);
}
