/* The libdw backend: elfutils' libdw walking this process's own stack through the same
 * Dwfl_Thread_Callbacks walker remote-memory mode uses on snapshots
 * (native/agents/snapshot/wf_snap_dw.c), here with the live process as its memory:
 *
 *   modules   dwfl_linux_proc_report(getpid()), once, on the first walk (stress warms the
 *             unwinder up outside its handler)
 *   registers the ucontext's 17 general registers, DWARF order
 *   memory    process_vm_readv on our own pid: a read of an unmapped address fails with
 *             EFAULT instead of faulting, so the guard only sees libdw's own faults
 *
 * libdw has no capture of its own: chains capture with glibc's getcontext.
 */
#define _GNU_SOURCE
#include <sys/uio.h>
#include <unistd.h>

#include "wf_snap_dw.h"
#include "wf_ucontext.h"
#include "wf_unwinder.h"

const char *wf_unwinder_name(void) { return "libdw"; }
const char *wf_unwinder_library(void) { return "libdw.so.1"; }
uintptr_t wf_unwinder_code(void) { return (uintptr_t)&dwfl_getthread_frames; }
wf_uw_capture_fn *wf_unwinder_capture(void) { return &getcontext; }
int wf_unwinder_needs_frame_pointers(void) { return 0; }

typedef struct live_walk {
    wf_uw_walk *w;
    int exact;   /* frame 0's pc is where the thread stopped */
    int handler; /* still in the handler's frames, before the interrupted one */
    int passed;  /* handler frames passed */
} live_walk;

static int read_live(void *arg, uintptr_t addr, uint64_t *word) {
    (void)arg;
    struct iovec local = {word, sizeof *word};
    struct iovec remote = {(void *)addr, sizeof *word};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == sizeof *word ? 0 : -1;
}

/* libdw calls a frame an activation when its pc is where the thread stopped rather than a
   return address: frame 0, and the frame a signal frame restored. Past frame 0 that is the
   interrupted frame of a signal, which the walk records as exact. */
static int32_t record_live(void *arg, uintptr_t pc, uintptr_t sp, uintptr_t fp, int activation) {
    live_walk *l = arg;
    if (l->handler) {
        if (l->passed++ == 0 || !activation)
            return l->passed > WF_UW_MAX_HANDLER_FRAMES ? WF_UW_STOP_BUDGET : WF_UW_STOP_NONE;
        l->handler = 0;
        return wf_uw_record(l->w, pc, sp, fp, 1, 1);
    }
    int first = l->w->frames == 0;
    return wf_uw_record(l->w, pc, sp, fp, !first && activation, first ? l->exact : activation);
}

static Dwfl *self;
static int32_t self_rc;

static int32_t walk_from(wf_uw_walk *w, const ucontext_t *uc, int exact, int handler) {
    if (self == NULL && self_rc == 0) self = wf_dw_open_self(&self_rc);
    if (self == NULL) {
        w->unw_rc = self_rc;
        return WF_UW_STOP_INIT_ERROR;
    }
    uintptr_t regs[WF_SNAP_REGS];
    wf_uc_dwarf_regs(uc, regs);
    live_walk l = {w, exact, handler, 0};
    wf_dw_walk dw = {.regs = regs, .read = read_live, .record = record_live, .arg = &l};
    int32_t stop = wf_dw_walk_frames(self, &dw);
    w->unw_rc = dw.rc;
    w->steps = w->frames;
    return stop;
}

int32_t wf_unwinder_walk(wf_uw_walk *w) {
    if (w->uc != NULL) return walk_from(w, w->uc, w->signal_frame, 0);
    /* No ucontext: start here and pass the handler's frames up to the interrupted one, the
       frame after the kernel's signal frame. */
    ucontext_t here;
    getcontext(&here);
    return walk_from(w, &here, 1, 1);
}
