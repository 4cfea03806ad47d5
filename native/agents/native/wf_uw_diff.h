/* The differential oracle's side of one unwinder's extension: generator inputs walked in a
 * batch, one compact row per input. Every unwinder's extension has this same layout, so the
 * supervisor (fuzz/targets/native/differential/rows.py) reads the rows of every worker process
 * alike and compares walks by their frame ids, the one thing the unwinders' processes share (their
 * addresses differ).
 */
#ifndef WF_UW_DIFF_H
#define WF_UW_DIFF_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
#define WF_UW_DIFF_IDS 24

/* One input's walk, compact: 144 bytes, no padding. */
typedef struct wf_uw_diff_row {
    int32_t status;        /* wf_uw_status */
    int32_t stop;          /* wf_uw_stop */
    int32_t invalid;       /* wf_uw_invalid against the truth (unperturbed inputs) */
    int32_t perturbations; /* perturbations applied (0 = the truth is known) */
    uint32_t frames;       /* frames walked (id[] holds the first WF_UW_DIFF_IDS) */
    uint32_t steps;        /* the backend's steps */
    int32_t id[24];        /* WF_UW_DIFF_IDS frame ids, innermost first; -1 unknown code */
    uint64_t walk_ns;      /* time of the guarded walk */
    uint64_t fault_pc;     /* faulting pc for a fault, else 0 */
    int32_t fault_signo;   /* the fault's signal, else 0 */
    int32_t unw_rc;        /* the backend's last return code */
} wf_uw_diff_row;

/* Walk one input (wf_uw_fuzz_one) into a row. Returns row->status. */
int wf_uw_diff_one(const uint8_t *data, size_t size, wf_uw_diff_row *row);

/* Walk inputs first..first+count-1 of generator stream `seed` into rows[0..count-1], and
   their bytes into inputs[i * WF_UW_INPUT_SIZE] unless `inputs` is NULL. Before input i runs,
   `current` gets its bytes and *started its number first + i + 1 (the journal the supervisor
   reads if the process dies). Never stops early: a difference is judged across processes. */
void wf_uw_diff_batch(uint64_t seed, uint64_t first, uint64_t count, uint8_t *current,
                      uint64_t *started, wf_uw_diff_row *rows, uint8_t *inputs);
/* cffi:end */

#endif
