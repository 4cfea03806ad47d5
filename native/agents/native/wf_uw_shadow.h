/* Shadow stack: the work functions a thread is in, as a signal handler on that thread sees it.
 *
 * Pushed on entry, popped on return. Only the owning thread writes; a signal handler on the
 * same thread reads. Each store is one instruction and signal fences keep the slot write
 * before the depth write, so the handler always reads ids[0..depth) complete. The interrupted
 * function itself may or may not be on it yet (prologue before the push, epilogue after the
 * pop): the comparison tolerates exactly that one frame at the top.
 */
#ifndef WF_UW_SHADOW_H
#define WF_UW_SHADOW_H

#include <stdatomic.h>
#include <stdint.h>

#define WF_UW_SHADOW_MAX 64

typedef struct wf_uw_shadow {
    volatile uint32_t depth;
    volatile uint8_t ids[WF_UW_SHADOW_MAX];
} wf_uw_shadow;

/* Enter function `id`. Async-signal-safe with respect to a reader on the same thread. */
static inline void wf_uw_shadow_push(wf_uw_shadow *s, uint8_t id) {
    uint32_t d = s->depth;
    if (d < WF_UW_SHADOW_MAX) s->ids[d] = id;
    atomic_signal_fence(memory_order_seq_cst);
    s->depth = d + 1;
    atomic_signal_fence(memory_order_seq_cst);
}

/* Leave the innermost function. */
static inline void wf_uw_shadow_pop(wf_uw_shadow *s) {
    atomic_signal_fence(memory_order_seq_cst);
    s->depth = s->depth - 1;
    atomic_signal_fence(memory_order_seq_cst);
}

#endif
