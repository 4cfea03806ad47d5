/* The libdw walker: Dwfl_Thread_Callbacks whose memory and registers come from a wf_dw_walk.
 *
 *   dwfl_getthread_frames(dwfl, tid)
 *     next_thread ──► the one thread (tid = our pid: libdw only compares it)
 *     set_initial_registers ──► w->regs (rip is DWARF register 16, libdw's return-address column)
 *     memory_read ──► w->read  (every load of a CFA-relative saved register or return address)
 *     frame_cb per frame ──► w->record
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <stdio.h>
#include <unistd.h>

#include "wf_snap_dw.h"

/* The walk in progress: libdw's callbacks take no per-walk argument. */
static __thread wf_dw_walk *current;

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp) {
    (void)dwfl, (void)dwfl_arg;
    if (*thread_argp != NULL) return 0;
    *thread_argp = (void *)1;
    return getpid();
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg) {
    (void)dwfl, (void)dwfl_arg;
    uint64_t word;
    if (current->read(current->arg, (uintptr_t)addr, &word) != 0) return false;
    *result = word;
    return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg) {
    (void)thread_arg;
    Dwarf_Word regs[WF_SNAP_REGS];
    for (int i = 0; i < WF_SNAP_REGS; i++) regs[i] = current->regs[i];
    if (!dwfl_thread_state_registers(thread, 0, WF_SNAP_REGS, regs)) return false;
    dwfl_thread_state_register_pc(thread, regs[WF_SNAP_RIP]);
    return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

static char *debuginfo_path;
static const Dwfl_Callbacks module_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

static Dwfl *attach(Dwfl *dwfl, int32_t *rc) {
    if (dwfl_report_end(dwfl, NULL, NULL) != 0 ||
        !dwfl_attach_state(dwfl, NULL, getpid(), &thread_callbacks, NULL)) {
        *rc = dwfl_errno();
        dwfl_end(dwfl);
        return NULL;
    }
    return dwfl;
}

Dwfl *wf_dw_open_maps(const char *map, size_t len, int32_t *rc) {
    Dwfl *dwfl = dwfl_begin(&module_callbacks);
    if (dwfl == NULL) {
        *rc = dwfl_errno();
        return NULL;
    }
    dwfl_report_begin(dwfl);
    FILE *text = fmemopen((void *)map, len, "r");
    int reported = text != NULL ? dwfl_linux_proc_maps_report(dwfl, text) : -1;
    if (text != NULL) fclose(text);
    if (reported != 0) {
        *rc = reported > 0 ? reported : dwfl_errno();
        dwfl_end(dwfl);
        return NULL;
    }
    return attach(dwfl, rc);
}

Dwfl *wf_dw_open_self(int32_t *rc) {
    Dwfl *dwfl = dwfl_begin(&module_callbacks);
    if (dwfl == NULL) {
        *rc = dwfl_errno();
        return NULL;
    }
    dwfl_report_begin(dwfl);
    if (dwfl_linux_proc_report(dwfl, getpid()) != 0) {
        *rc = dwfl_errno();
        dwfl_end(dwfl);
        return NULL;
    }
    return attach(dwfl, rc);
}

static int count_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
                        void *arg) {
    (void)mod, (void)userdata, (void)name, (void)start;
    (*(uint32_t *)arg)++;
    return DWARF_CB_OK;
}

uint32_t wf_dw_modules(Dwfl *dwfl) {
    uint32_t n = 0;
    dwfl_getmodules(dwfl, count_module, &n, 0);
    return n;
}

static int on_frame(Dwfl_Frame *state, void *arg) {
    wf_dw_walk *w = arg;
    Dwarf_Addr pc;
    bool activation;
    if (!dwfl_frame_pc(state, &pc, &activation)) {
        w->stop = WF_SNAP_STOP_STEP_ERROR;
        w->rc = dwfl_errno();
        return DWARF_CB_ABORT;
    }
    /* The CFA of the frame is its caller's sp; libdw keeps sp and rbp as registers 7 and 6. */
    Dwarf_Word sp = 0, fp = 0;
    dwfl_frame_reg(state, WF_SNAP_RSP, &sp);
    dwfl_frame_reg(state, WF_SNAP_RBP, &fp);
    int32_t stop = w->record(w->arg, (uintptr_t)pc, (uintptr_t)sp, (uintptr_t)fp, activation);
    if (stop != WF_SNAP_STOP_NONE) {
        w->stop = stop;
        return DWARF_CB_ABORT;
    }
    return DWARF_CB_OK;
}

int32_t wf_dw_walk_frames(Dwfl *dwfl, wf_dw_walk *w) {
    w->stop = WF_SNAP_STOP_END;
    w->rc = 0;
    wf_dw_walk *outer = current;
    current = w;
    int rc = dwfl_getthread_frames(dwfl, getpid(), on_frame, w);
    current = outer;
    if (rc == -1 && w->stop == WF_SNAP_STOP_END) {
        w->stop = WF_SNAP_STOP_STEP_ERROR;
        w->rc = dwfl_errno();
    }
    return w->stop;
}
