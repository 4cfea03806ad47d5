/* Remote-memory mode: a native stack captured as data (registers, stack bytes, the module map)
 * and walked by unwinders that read registers and memory only through accessors over it —
 * libunwind's remote address space (unw_create_addr_space) and elfutils libdw
 * (dwfl_attach_state + Dwfl_Thread_Callbacks). Nothing of the walk touches the live stack, so
 * the stack bytes themselves can be mutated, and a snapshot replays the same in any process.
 *
 * Snapshot layout (all integers little-endian; docs/native-snapshots.md):
 *
 *   off  size    field
 *   0    8       magic "WFSNAP1\0"
 *   8    2       flags: bit0 frame 0's pc is exact (an interrupted context, not a return
 *                address)
 *   10   2       truth ranges T (<= WF_SNAP_MAX_TRUTH; 0 = no known chain)
 *   12   4       module map length M (bytes)
 *   16   8       stack address: where the stack bytes were read from
 *   24   8       reserved (0)
 *   32   136     registers, DWARF x86-64 order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip
 *   168  16*T    truth: [start, end) of each frame's function, innermost first
 *   ...  M       module map: /proc/PID/maps lines of the file-backed modules the walk needs
 *   ...  rest    stack bytes (at most WF_SNAP_MAX_STACK), read from the stack address up
 *
 * Memory the accessors serve: the stack bytes at their address, and module bytes read from each
 * mapped file at the address the map gives it (a mapping's file offset, as the kernel maps
 * it). Anything else is unreadable. Module files are opened and mapped once per map and kept
 * while the next snapshot's map is byte-for-byte the same, so a fuzz campaign over one map
 * pays for them once.
 */
#ifndef WF_SNAPSHOT_H
#define WF_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "wf_guard.h"

/* cffi:begin */
#define WF_SNAP_HEADER 168
#define WF_SNAP_REGS 17
#define WF_SNAP_MAX_TRUTH 20
#define WF_SNAP_MAX_MAP 32768
#define WF_SNAP_MAX_STACK 65536
#define WF_SNAP_MAX_FRAMES 64
#define WF_SNAP_FLAG_EXACT_PC 1

/* Which unwinder walks a snapshot. */
enum wf_snap_unwinder {
    WF_SNAP_LIBUNWIND = 0, /* libunwind 1.6.2, remote address space over the snapshot */
    WF_SNAP_LIBDW = 1      /* elfutils libdw, Dwfl_Thread_Callbacks over the snapshot */
};

/* Why a snapshot walk ended. Every exit has one; the numbers are the native target's
   wf_uw_stop's (wf_unwind.h), and one more. */
enum wf_snap_stop {
    WF_SNAP_STOP_NONE = 0,        /* not ended: the unwinder goes on */
    WF_SNAP_STOP_ROOT = 1,        /* reached the last truth range: complete */
    WF_SNAP_STOP_END = 2,         /* the unwinder says outermost frame */
    WF_SNAP_STOP_STEP_ERROR = 3,  /* the unwinder reported an error stepping */
    WF_SNAP_STOP_INIT_ERROR = 4,  /* the unwinder refused the registers or the map */
    WF_SNAP_STOP_CYCLE = 5,       /* a (pc, sp, fp) came back */
    WF_SNAP_STOP_BUDGET = 6,      /* WF_SNAP_MAX_FRAMES frames without ending */
    WF_SNAP_STOP_FAULT = 7,       /* a signal inside the unwinder, caught by the guard */
    WF_SNAP_STOP_HANG = 8,        /* the watchdog interrupted the walk */
    WF_SNAP_STOP_BAD_SNAPSHOT = 9 /* not a snapshot (magic, sizes, map): nothing walked */
};

typedef struct wf_snap_frame {
    uintptr_t pc, sp, fp;
    int32_t truth; /* index of the truth range holding the pc (-1: none) */
    int32_t exact; /* pc is not a return address */
} wf_snap_frame;

typedef struct wf_snap_result {
    int32_t stop;     /* wf_snap_stop */
    int32_t rc;       /* the unwinder's last error code (libunwind UNW_E*, libdw dwfl_errno) */
    int32_t matched;  /* the walk's frames equal the truth ranges in order (T > 0 only) */
    int32_t truth;    /* T */
    uint32_t frames;  /* frames recorded in frame[] */
    uint32_t modules; /* modules of the map the unwinder was given */
    uint64_t walk_ns; /* time of the guarded walk */
    uint64_t reads;   /* memory reads served by the accessors */
    uint64_t misses;  /* reads of memory the snapshot does not hold */
    wf_snap_frame frame[64]; /* WF_SNAP_MAX_FRAMES */
    wf_fault fault;
    char error[96]; /* what was wrong with a bad snapshot */
} wf_snap_result;

/* Walk one snapshot with `unwinder` under the guard (and the watchdog, when a budget is set).
   Returns out->stop. Not async-signal-safe (libdw and the module cache allocate). */
int wf_snap_walk(int unwinder, const uint8_t *data, size_t size, wf_snap_result *out);

/* Watchdog budget of each guarded walk on this thread (0 disables). */
void wf_snap_set_walk_budget_ns(uint64_t ns);

/* Sample a known chain: run root -> chain_<path[0]> ... chain_<path[depth-1]> -> bottom, where
   the bottom spins until a signal sent to its own thread interrupts it; the handler copies the
   interrupted registers and the stack from sp up to `stack_bytes` (at most WF_SNAP_MAX_STACK,
   never past the thread's stack top) into preallocated memory. Writes the snapshot's header,
   registers, truth (bottom, path reversed, root) and stack to out — without a module map
   (M = 0): the caller inserts the map at wf_snap_map_offset(T). Returns the bytes written, or -1
   with nothing written (depth out of range, cap too small, no stack bounds). */
int64_t wf_snap_capture_chain(uint32_t depth, const uint8_t *path, uint32_t stack_bytes,
                              uint8_t *out, size_t cap);

/* Where the map goes in a snapshot with T truth ranges: WF_SNAP_HEADER + 16 * T. */
size_t wf_snap_map_offset(uint32_t truth);
/* cffi:end */

/* DWARF x86-64 register numbers (the snapshot's order, libunwind's UNW_X86_64_* and libdw's). */
enum { WF_SNAP_RBP = 6, WF_SNAP_RSP = 7, WF_SNAP_RIP = 16 };

#endif
