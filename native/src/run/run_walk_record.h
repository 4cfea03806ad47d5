/* run_walk_record.h — internal: what one walk returned, as the harness recorded it. */
#ifndef WALKFUZZ_WALK_RECORD_H
#define WALKFUZZ_WALK_RECORD_H

#include <stdint.h>

#include "asgst.h"
#include "wf_run.h"
#include "wf_walker.h"

typedef struct walk_record {
    const wf_walker *walker;
    int run_result;
    int end_code;
    int state_after;
    int handler_called;
    int overflow;            /* the walker returned more than cap frames */
    volatile uint32_t count; /* frames recorded (read after a fault too) */
    uint32_t cap;
    ASGST_Frame *frames;
} walk_record;

/* A result with nothing found yet and `status` (no differing frame, no queue operation);
   returns status. */
int wf_result_start(wf_run_result *r, int status);
/* Contract checks of a recorded walk (wf_check); *index = offending frame or -1. */
int wf_check_contract(const walk_record *rec, uint32_t options, int32_t *index);
/* Every field of two frames equal. */
int wf_same_frame(const ASGST_Frame *a, const ASGST_Frame *b);
/* Oracle comparison; wf_check or 0; *index = first differing frame or -1. */
int wf_check_oracle(const walk_record *got, int want_run, int want_end, const ASGST_Frame *want,
                    uint32_t want_count, int32_t *index);

/* r->shape: kinds of frames [0, upto] (all if upto < 0), repeats collapsed, keeping the last
   WF_SHAPE_MAX. */
void wf_fill_shape(wf_run_result *r, const walk_record *rec, int64_t upto);

#endif /* WALKFUZZ_WALK_RECORD_H */
