/* The libgcc backend: libgcc_s.so.1's _Unwind_Backtrace, every frame fed to wf_uw_record from
 * its callback.
 *
 * _Unwind_Backtrace walks only the stack it is called on, from its caller up. To make it walk
 * a given ucontext, the walk runs on a fake kernel signal frame built at the top of a stack
 * area of this function's own frame: its caller's return address is glibc's __restore_rt and
 * the ucontext sits right above it, as the kernel lays out an rt_sigframe. glibc's CFI for
 * __restore_rt (a "zRS" signal-frame FDE: CFA = uc_mcontext.gregs[REG_RSP], every register
 * at its gregs slot, all as offsets from rsp = &uc) then hands libgcc our registers, and
 * libgcc marks the next frame as interrupted (_Unwind_GetIPInfo's ip_before_insn = 1).
 *
 *   higher addresses        (this function's area[])
 *   +--------------------------------+
 *   | ucontext_t (the perturbed copy) |  <- rsp at __restore_rt: its CFI reads this
 *   | &__restore_rt                   |  <- on_fake_frame's return address (never returned to)
 *   +--------------------------------+  <- rsp when on_fake_frame is entered (16n + 8)
 *   | on_fake_frame, _Unwind_Backtrace, libgcc's frames, the callback ...
 *   v   (the rest of area[])
 *   lower addresses
 *
 * The walk records from the first frame libgcc flags as interrupted, the one after
 * __restore_rt; so does a walk from a signal handler (w->uc NULL), which meets the kernel's
 * real signal frame the same way. on_fake_frame never returns: it jumps back with
 * wf_lg_resume to the stack pointer wf_lg_run_on saved (a fault in libgcc leaves through the
 * guard's own jump instead, which restores its own stack pointer).
 */
#define _GNU_SOURCE
#include <string.h>
#include <unwind.h>

#include "arch/x86_64/wf_lg_stack_switch.h"
#include "wf_unwinder.h"
#include "wf_uw_targets.h"

/* Bytes of stack below the fake signal frame: libgcc's frame state (~2 KiB a frame, two of
   them live), dl_iterate_phdr and the callback with room to spare. */
#define WF_LG_AREA_BYTES 65536

const char *wf_unwinder_name(void) { return "libgcc"; }
const char *wf_unwinder_library(void) { return "libgcc_s.so.1"; }
uintptr_t wf_unwinder_code(void) { return (uintptr_t)&_Unwind_Backtrace; }

/* glibc's getcontext: libgcc has no capture of its own. */
wf_uw_capture_fn *wf_unwinder_capture(void) { return &getcontext; }
/* A CFI walk: frames without a frame pointer are no limit to it. */
int wf_unwinder_needs_frame_pointers(void) { return 0; }

typedef struct lg_state {
    wf_uw_walk *w;
    void *saved_sp; /* wf_lg_run_on's stack pointer, for wf_lg_resume */
    int32_t stop;   /* the wf_uw_stop wf_uw_record or the walk's end gave */
    int recording;  /* the interrupted frame was met: frames are recorded from there */
    int passed;     /* frames before it (the walk's own and the signal frame) */
} lg_state;

static _Unwind_Reason_Code on_frame(struct _Unwind_Context *ctx, void *arg) {
    lg_state *st = arg;
    wf_uw_walk *w = st->w;
    int interrupted = 0;
    uintptr_t pc = _Unwind_GetIPInfo(ctx, &interrupted);
    w->steps++;
    if (!st->recording) {
        /* The walk's own frames, then the signal frame: the interrupted one comes next. */
        if (!interrupted) {
            if (++st->passed > WF_UW_MAX_HANDLER_FRAMES) {
                st->stop = WF_UW_STOP_BUDGET;
                return _URC_NORMAL_STOP;
            }
            return _URC_NO_REASON;
        }
        st->recording = 1;
    }
    /* libgcc hands the outermost frame's zero return address to the callback before it ends
       the walk; the other unwinders end there without a frame. */
    if (pc == 0 && w->frames > 0) {
        st->stop = WF_UW_STOP_END;
        return _URC_NORMAL_STOP;
    }
    /* ip_before_insn: the pc is where the thread stopped, not a return address. */
    int exact = interrupted || (w->frames == 0 && w->signal_frame);
    /* The CFA of the frame below is this frame's rsp; rbp is callee-saved, so it has a
       location in every frame's context. */
    uintptr_t sp = _Unwind_GetCFA(ctx);
    uintptr_t fp = (uintptr_t)_Unwind_GetGR(ctx, 6);
    st->stop = wf_uw_record(w, pc, sp, fp, interrupted, exact);
    return st->stop != 0 ? _URC_NORMAL_STOP : _URC_NO_REASON;
}

/* The stop of a walk: the callback's, else libgcc's own end — the outermost frame (no FDE for
   a pc, or a zero return address: _URC_END_OF_STACK), or a frame state it could not build
   (_URC_FATAL_PHASE1_ERROR), kept negated in unw_rc. */
static int32_t backtrace_stop(lg_state *st, _Unwind_Reason_Code rc) {
    if (st->stop != 0) return st->stop;
    st->w->unw_rc = -(int32_t)rc;
    return rc == _URC_END_OF_STACK ? WF_UW_STOP_END : WF_UW_STOP_STEP_ERROR;
}

/* Entered on the fake signal frame; leaves by wf_lg_resume, never by returning (its return
   address is __restore_rt). */
__attribute__((noinline, noreturn)) static void on_fake_frame(void *arg) {
    lg_state *st = arg;
    _Unwind_Reason_Code rc = _Unwind_Backtrace(on_frame, st);
    wf_lg_resume(st->saved_sp, backtrace_stop(st, rc));
}

/* `area` is the stack of the walk; its top holds the fake signal frame with a copy of uc. */
__attribute__((noinline)) static int32_t walk_on_fake_frame(lg_state *st, uintptr_t *area,
                                                            size_t words) {
    uintptr_t top = (uintptr_t)(area + words);
    ucontext_t *uc = (ucontext_t *)((top - sizeof(ucontext_t)) & ~(uintptr_t)15);
    uintptr_t *pretcode = (uintptr_t *)uc - 1;
    memcpy(uc, st->w->uc, sizeof *uc);
    *pretcode = wf_uw_targets_get()->restore_rt;
    return (int32_t)wf_lg_run_on(pretcode, on_fake_frame, st, &st->saved_sp);
}

int32_t wf_unwinder_walk(wf_uw_walk *w) {
    lg_state st = {.w = w};
    if (w->uc == NULL) {
        _Unwind_Reason_Code rc = _Unwind_Backtrace(on_frame, &st);
        return backtrace_stop(&st, rc);
    }
    if (wf_uw_targets_get()->restore_rt == 0) {
        w->unw_rc = -1; /* no __restore_rt: no signal frame libgcc would read */
        return WF_UW_STOP_INIT_ERROR;
    }
    uintptr_t area[WF_LG_AREA_BYTES / sizeof(uintptr_t)] __attribute__((aligned(16)));
    return walk_on_fake_frame(&st, area, sizeof area / sizeof area[0]);
}
