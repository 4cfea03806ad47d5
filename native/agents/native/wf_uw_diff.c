/* One unwinder's rows for the differential oracle: each input walked as the fuzz hot path
 * walks it (wf_uw_fuzz_one), the result cut down to what the unwinders can be compared on.
 */
#include <string.h>

#include "wf_unwind.h"
#include "wf_arch.h"
#include "wf_uw_diff.h"

/* More than the deepest chain (16 frames of up to 2 KiB, the bottom's ucontexts), libgcc's
   64 KiB walk area and an unwinder's own frames. */
#define WF_UW_DIFF_SCRUB_BYTES (192 * 1024)

_Static_assert(sizeof(wf_uw_diff_row) == 144, "wf_uw_diff_row has no padding: 144 bytes");
_Static_assert(WF_UW_DIFF_IDS <= WF_UW_MAX_FRAMES, "a row holds at most a walk's frames");

static void to_row(const wf_uw_result *r, wf_uw_diff_row *row) {
    memset(row, 0, sizeof *row);
    row->status = r->status;
    row->stop = r->stop;
    row->invalid = r->invalid;
    row->perturbations = r->perturbations;
    row->frames = r->frames;
    row->steps = r->unw_steps;
    for (uint32_t i = 0; i < WF_UW_DIFF_IDS; i++)
        row->id[i] = i < r->frames ? r->frame[i].id : WF_UW_ID_UNKNOWN;
    row->walk_ns = r->walk_ns;
    if (r->stop == WF_UW_STOP_FAULT || r->stop == WF_UW_STOP_HANG) {
        row->fault_pc = r->fault.pc;
        row->fault_signo = r->fault.signo;
    }
    row->unw_rc = r->unw_rc;
}

/* Zero the stack the input's chain, its walk and the unwinder are about to use: a perturbed
   walk reads stale words there (a frame's unwritten locals, what earlier walks left), and
   zeroed they are the same in every process and every replay, whatever ran before. */
__attribute__((noinline, no_sanitize("address"))) static void scrub_stack(void) {
    volatile uint8_t area[WF_UW_DIFF_SCRUB_BYTES];
    memset((uint8_t *)area, 0, sizeof area);
    wf_arch_keep_memory(area);
}

/* The chain runs right below this frame, on the stack scrub_stack just zeroed. */
int wf_uw_diff_one(const uint8_t *data, size_t size, wf_uw_diff_row *row) {
    wf_uw_result result;
    scrub_stack();
    wf_uw_fuzz_one(data, size, &result);
    to_row(&result, row);
    return row->status;
}

void wf_uw_diff_batch(uint64_t seed, uint64_t first, uint64_t count, uint8_t *current,
                      uint64_t *started, wf_uw_diff_row *rows, uint8_t *inputs) {
    for (uint64_t i = 0; i < count; i++) {
        uint8_t input[WF_UW_INPUT_SIZE];
        wf_uw_generate(seed, first + i, input);
        if (inputs != NULL) memcpy(inputs + i * WF_UW_INPUT_SIZE, input, sizeof input);
        memcpy(current, input, sizeof input); /* on disk before it runs */
        __atomic_store_n(started, first + i + 1, __ATOMIC_RELEASE);
        wf_uw_diff_one(input, sizeof input, &rows[i]);
    }
}
