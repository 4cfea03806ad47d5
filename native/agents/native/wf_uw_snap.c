/* A finding's walk as a snapshot (wf_uw_snap.h). The stack part is read from the lowest of the
 * walked sp, the walk's own locals and the captured sp, up to the thread's stack top or the
 * room left, whichever comes first:
 *
 *   higher addresses
 *   +--------------------------+  <- stack top, or where the room ran out
 *   | root, chain, bottom      |     truth (unperturbed inputs): bottom, path reversed, root
 *   +--------------------------+  <- captured sp
 *   | walk_case's locals       |     the walked copy of the context, a fake signal frame
 *   +--------------------------+  <- low
 *   | the unwinder's frames    |     read only when a perturbed sp points here
 *   +--------------------------+  <- walked sp, when it is in this stack and lower
 */
#define _GNU_SOURCE
#include "wf_uw_snap.h"

#include <string.h>

#include "wf_snapshot.h"
#include "wf_ucontext.h"
#include "wf_uw_chain.h"

static __thread uint8_t *snap_buf;
static __thread size_t snap_cap, snap_size;

extern const char __start_wf_uw_bottom_code[], __stop_wf_uw_bottom_code[];
extern const char __start_wf_uw_chain_root_code[], __stop_wf_uw_chain_root_code[];

void wf_uw_snapshot_arm(uint8_t *buf, size_t cap) {
    snap_buf = buf;
    snap_cap = buf != NULL ? cap : 0;
    snap_size = 0;
}

size_t wf_uw_snapshot_size(void) { return snap_size; }

static void put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put_range(uint8_t *p, uintptr_t start, uintptr_t end) {
    put64(p, start);
    put64(p + 8, end);
}

/* The live stack holds other frames' locals and, under ASan, their redzones: reading them is the
   point, so this copy is not instrumented (and not a memcpy, which ASan intercepts). */
__attribute__((no_sanitize_address)) static void copy_stack(uint8_t *dst, uintptr_t from,
                                                            size_t n) {
    const volatile uint8_t *src = (const volatile uint8_t *)from;
    for (size_t i = 0; i < n; i++) dst[i] = src[i];
}

/* The known chain, innermost first, as wf_snap_capture_chain writes it. Returns T. */
static uint32_t put_truth(uint8_t *t, const wf_uw_case *cs) {
    put_range(t, (uintptr_t)__start_wf_uw_bottom_code, (uintptr_t)__stop_wf_uw_bottom_code);
    for (unsigned level = cs->depth; level-- > 0;) {
        const wf_uw_range *r = &wf_uw_chain_ranges[cs->path[level]];
        put_range(t += 16, r->start, r->end);
    }
    put_range(t + 16, (uintptr_t)__start_wf_uw_chain_root_code,
              (uintptr_t)__stop_wf_uw_chain_root_code);
    return cs->depth + 2;
}

static uintptr_t lowest(uintptr_t a, uintptr_t b) { return a < b ? a : b; }

void wf_uw_snapshot_take(const ucontext_t *walked, const ucontext_t *captured, uintptr_t low,
                         uintptr_t stack_lo, uintptr_t stack_hi, const wf_uw_case *cs,
                         const wf_uw_result *out) {
    uint32_t truth = out->perturbations == 0 ? cs->depth + 2 : 0;
    size_t head = WF_SNAP_HEADER + 16 * (size_t)truth;
    if (snap_buf == NULL || snap_cap < head) return;
    uintptr_t sp = wf_uc_sp(walked);
    uintptr_t from = lowest(low, wf_uc_sp(captured));
    if (sp >= stack_lo && sp < stack_hi) from = lowest(from, sp);
    from &= ~(uintptr_t)15;
    size_t n = from < stack_hi ? stack_hi - from : 0;
    if (n > WF_SNAP_MAX_STACK) n = WF_SNAP_MAX_STACK;
    if (n > snap_cap - head) n = snap_cap - head;
    uint8_t *p = snap_buf;
    memset(p, 0, WF_SNAP_HEADER);
    memcpy(p, "WFSNAP1", 8);
    p[8] = (uint8_t)(cs->signal_frame_flag ? WF_SNAP_FLAG_EXACT_PC : 0);
    p[10] = (uint8_t)truth;
    put64(p + 16, from);
    uintptr_t regs[WF_SNAP_REGS];
    wf_uc_dwarf_regs(walked, regs);
    for (int i = 0; i < WF_SNAP_REGS; i++) put64(p + 32 + 8 * i, regs[i]);
    if (truth) put_truth(p + WF_SNAP_HEADER, cs);
    copy_stack(p + head, from, n);
    snap_size = head + n;
}
