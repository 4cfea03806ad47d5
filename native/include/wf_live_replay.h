/* wf_live_replay.h — replaying a case that carries EXPECTED (section 11, a live stress
 * capture) the way the live run judged it: the walk EXPECTED names (wf_case_expected.h:
 * source) runs again with the same walker inside the guard, and the live oracle
 * (live_check.c) classifies it against the expected trace, exactly (the trace a correct walker
 * gives at the sampled instruction, window included, as wf_live_expect computed it). The
 * result has what a live finding has (class, first differing frame, shape; or the fault), so
 * a replay reproduces the live finding's signature.
 */
#ifndef WALKFUZZ_WF_LIVE_REPLAY_H
#define WALKFUZZ_WF_LIVE_REPLAY_H

#include <stdint.h>

#include "wf_case.h"
#include "wf_guard.h"
#include "wf_live.h"
#include "wf_walker.h"

/* cffi:begin */
enum wf_live_replay_status {
    WF_LIVE_REPLAY_OK = 0,
    WF_LIVE_REPLAY_NO_EXPECTED = -1, /* the mapped case has no section 11 */
    WF_LIVE_REPLAY_NO_QUEUE = -2,   /* source ENQUEUE/ELEMENT, but the walker lacks the queue API */
    WF_LIVE_REPLAY_NO_ELEMENT = -3, /* source ELEMENT, but no element handler ran */
    WF_LIVE_REPLAY_NO_MEMORY = -4
};

enum wf_live_replay_outcome {
    WF_LIVE_REPLAY_EXACT = 0,     /* the walk is what EXPECTED says */
    WF_LIVE_REPLAY_INVALID = 1,   /* cls, first_diff */
    WF_LIVE_REPLAY_FAULT = 2,     /* fault */
    WF_LIVE_REPLAY_HANG = 3,      /* fault (kind WF_FAULT_HANG) */
    WF_LIVE_REPLAY_NOT_JUDGED = 4 /* a walk the live run does not judge: an element whose
                                     frame is gone, an Enqueue that enqueued or was refused */
};

typedef struct wf_live_replay_result {
    int32_t status;          /* wf_live_replay_status */
    int32_t outcome;         /* wf_live_replay_outcome */
    int32_t cls, first_diff; /* INVALID: WF_LIVE_CLS_*, the first differing frame */
    int32_t run_result, end_code, state_after;
    uint32_t walked_count;
    wf_fault fault;
    uint32_t shape_len;
    uint8_t shape[32];        /* wf_shape_kind up to the first difference (all after a fault) */
    wf_live_frame walked[64]; /* the first WF_LIVE_FINDING_FRAMES, innermost first */
} wf_live_replay_result;

/* Replay the mapped case (decoded last) with walker w. Returns r->status. Not signal-safe. */
int wf_live_replay(const struct wf_walker *w, wf_case *c, wf_live_replay_result *r);
/* cffi:end */

#endif /* WALKFUZZ_WF_LIVE_REPLAY_H */
