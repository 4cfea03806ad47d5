/* elfutils libdw walking one register set through Dwfl_Thread_Callbacks (internal; not
 * cffi-visible). The same walker serves a snapshot (memory = the snapshot's stack and module
 * files, modules from its map) and the live process (memory = this process's, read without
 * faulting; modules from dwfl_linux_proc_report(getpid())).
 */
#ifndef WF_SNAP_DW_H
#define WF_SNAP_DW_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

#include "wf_snapshot.h"

typedef struct wf_dw_walk {
    /* in */
    const uintptr_t *regs; /* WF_SNAP_REGS registers, DWARF order */
    /* One 8-byte word at addr into *word: 0, or -1 when it cannot be read. */
    int (*read)(void *arg, uintptr_t addr, uint64_t *word);
    /* One frame: WF_SNAP_STOP_NONE, or the wf_snap_stop ending the walk. */
    int32_t (*record)(void *arg, uintptr_t pc, uintptr_t sp, uintptr_t fp, int exact);
    void *arg;
    /* out */
    int32_t stop; /* wf_snap_stop */
    int32_t rc;   /* dwfl_errno() of a failed step */
} wf_dw_walk;

/* A Dwfl holding the modules of a /proc/PID/maps text, with this walker's thread callbacks
   attached; NULL (and *rc = dwfl_errno()) when libdw refuses it. Free with dwfl_end. */
Dwfl *wf_dw_open_maps(const char *map, size_t len, int32_t *rc);

/* The same for this process's own modules (dwfl_linux_proc_report(getpid())). */
Dwfl *wf_dw_open_self(int32_t *rc);

/* Walk w->regs on dwfl, feeding every frame to w->record. Returns w->stop. */
int32_t wf_dw_walk_frames(Dwfl *dwfl, wf_dw_walk *w);

/* Modules reported to dwfl. */
uint32_t wf_dw_modules(Dwfl *dwfl);

#endif
