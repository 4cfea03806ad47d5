/* The frame-pointer companion of a stress run: every sample of a library unwinder's process
 * walked a second time, by the fp walk (wf_uw_fp_walk.h), the two walks judged against the
 * shadow stack and against each other. In one process only one library unwinder can be loaded
 * (their symbols clash); the frame-pointer walker needs no library, so it is the unwinder
 * every process has besides its own.
 *
 * fp's rule (the differential oracle's, docs/native-unwinders.md): its known frames must be a
 * subsequence of the truth (skipping a frameless function and stopping early are its known
 * limits); a frame not on the stack, or out of order, is wrong. The library unwinder's verdict
 * is the sampler's (the walk equals the truth, or does so but for one work function on top).
 */
#ifndef WF_UW_COMPANION_H
#define WF_UW_COMPANION_H

#include <stdint.h>

/* cffi:begin */
#define WF_UW_COMPANION_KEPT 8
#define WF_UW_COMPANION_IDS 24

/* A sample whose two walks differ and disagree: one is right (as judged), the other is not. */
typedef struct wf_uw_companion_kept {
    int32_t main_ok, fp_ok;
    int32_t main_stop, fp_stop;
    uint32_t main_count, fp_count, truth_count;
    int32_t main_ids[24]; /* WF_UW_COMPANION_IDS, innermost first */
    int32_t fp_ids[24];
    int32_t truth[24];
} wf_uw_companion_kept;

typedef struct wf_uw_companion_stats {
    uint64_t walked;                          /* samples walked by both */
    uint64_t fp_exact, fp_faithful, fp_wrong; /* fp against the truth (faithful: a subsequence) */
    uint64_t fp_faults, fp_hangs, fp_frames;
    uint64_t both_ok, main_only_ok, fp_only_ok, both_wrong; /* the two verdicts side by side */
    uint64_t walk_ns;                                       /* time in fp walks */
    uint32_t kept;
    wf_uw_companion_kept kept_samples[8]; /* WF_UW_COMPANION_KEPT */
} wf_uw_companion_stats;

/* Walk every sample with the fp companion from now on (1) or not (0). Call before a run. */
void wf_uw_companion_set(int on);
/* The counts since the last reset, into *out; then zero them. Not while a run goes on. */
void wf_uw_companion_take(wf_uw_companion_stats *out);
/* cffi:end */

#endif
