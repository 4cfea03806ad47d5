/* Call chains of known shape for the libunwind fuzz target (internal; not cffi-visible).
 *
 * A chain is root -> chain_<path[0]> -> ... -> chain_<path[depth-1]> -> bottom. The chain
 * functions are generated (fuzz/targets/native/chaingen.py), half with frame pointers, half
 * without; every function of a chain, root and bottom included, sits in its own ELF section
 * whose bounds the linker exports, so any pc maps back to exactly one of them.
 *
 *   higher addresses
 *   +----------------------------+
 *   | root frame (wf_uw_chain_run)|   <- the walk stops here: above it is the caller's world
 *   | chain_<path[0]> frame       |
 *   | ...                         |   fp-chained or CFI-only, frame sizes 8 B .. 2 KiB
 *   | chain_<path[depth-1]> frame |
 *   | bottom frame                |   <- context captured here; perturbed copies walked here
 *   +----------------------------+
 *   lower addresses (the walk's own frames and libunwind's run below the captured sp)
 */
#ifndef WF_UW_CHAIN_H
#define WF_UW_CHAIN_H

#include <stdint.h>

#define WF_UW_CHAIN_FUNCTIONS 16
#define WF_UW_WORK_FUNCTIONS 8
#define WF_UW_MAX_DEPTH 16

/* Put a function in its own section (named <function>_code), never inline it. */
#define WF_UW_GENERATED(section_name) __attribute__((noinline, used, section(section_name)))

/* One function's code: [start, end). */
typedef struct wf_uw_range {
    uintptr_t start, end;
    int frame_pointer;
} wf_uw_range;

typedef struct wf_uw_chain wf_uw_chain;
typedef uintptr_t wf_uw_chain_fn(wf_uw_chain *c, unsigned level);

struct wf_uw_chain {
    unsigned depth;                /* 1..WF_UW_MAX_DEPTH chain functions */
    uint8_t path[WF_UW_MAX_DEPTH]; /* index into wf_uw_chain_fns, outermost first */
    uintptr_t (*bottom)(wf_uw_chain *c);
    void *arg; /* the bottom's state */
};

/* Read through volatile so calls stay indirect: nothing inlined, nothing folded. */
extern wf_uw_chain_fn *const volatile wf_uw_chain_fns[WF_UW_CHAIN_FUNCTIONS];
extern const wf_uw_range wf_uw_chain_ranges[WF_UW_CHAIN_FUNCTIONS];

/* Call the chain function after `level`, or the bottom after the last one. */
static inline uintptr_t wf_uw_chain_descend(wf_uw_chain *c, unsigned level) {
    unsigned next = level + 1;
    return next < c->depth ? wf_uw_chain_fns[c->path[next]](c, next) : c->bottom(c);
}

/* Run the chain: root -> path -> c->bottom(c). Returns what the bottom returned (plus noise). */
uintptr_t wf_uw_chain_run(wf_uw_chain *c);

#endif
