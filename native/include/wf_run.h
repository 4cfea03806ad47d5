/* wf_run.h — the hot path: ONE call per fuzz input. decode or generate -> map at WF_VM_ROOT
 * -> [mutate] -> walk with the chosen walker inside wf_guard_call -> contract check -> truth
 * check (the generator's true trace for an unmutated case, the in-core reference walker as a
 * differential oracle for a mutated one) -> a wf_run_result.
 *
 * One case is mapped per process, so these calls are for one thread at a time. The frames of
 * the last walk stay readable through wf_run_frames() until the next call.
 */
#ifndef WALKFUZZ_WF_RUN_H
#define WALKFUZZ_WF_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "asgst.h"
#include "wf_case.h"
#include "wf_gen.h"
#include "wf_guard.h"
#include "wf_walker.h"

/* cffi:begin */
#define WF_RUN_MAX_FRAMES 65536 /* frames a harness records; more is a contract finding */
#define WF_SHAPE_MAX 32

enum wf_finding_kind {
    WF_FINDING_NONE = 0,
    WF_FINDING_CRASH = 1,         /* the guard caught a signal */
    WF_FINDING_HANG = 2,          /* the watchdog interrupted the walk */
    WF_FINDING_INVALID_TRACE = 3, /* the oracle disagrees */
    WF_FINDING_CONTRACT = 4       /* the API contract of asgst.h is broken */
};

enum wf_oracle {
    WF_ORACLE_NONE = 0,     /* mutated case walked by the reference itself */
    WF_ORACLE_TRUTH = 1,    /* the generator's true trace */
    WF_ORACLE_REFERENCE = 2 /* the in-core reference walker */
};

enum wf_check {
    WF_CHECK_NONE = 0,
    WF_CHECK_RUN_RESULT = 1,     /* Run* returned a code outside asgst.h's set */
    WF_CHECK_HANDLER = 2,        /* handler called on an error, or not called on success */
    WF_CHECK_END_CODE = 3,       /* NextFrame ended with a code outside the set */
    WF_CHECK_STATE = 4,          /* ASGST_State after the end differs from the end code */
    WF_CHECK_FRAME_LIMIT = 5,    /* more than WF_RUN_MAX_FRAMES frames */
    WF_CHECK_FRAME_TYPE = 6,     /* type outside ASGST_FrameTypeId, or NON_JAVA unasked */
    WF_CHECK_METHOD = 7,         /* Java frame without a valid method / non-Java with one */
    WF_CHECK_BCI_RANGE = 8,      /* bci outside the method's bytecode */
    WF_CHECK_COMP_LEVEL = 9,     /* comp level not allowed for the frame type */
    WF_CHECK_SP_ORDER = 10,      /* sp decreasing, or scopes of a frame disagreeing */
    WF_CHECK_INLINED = 11,       /* inlined frame not followed by its outer scope */
    WF_CHECK_ORACLE_RESULT = 12, /* Run* result differs from the oracle's */
    WF_CHECK_ORACLE_FRAME = 13,  /* a frame differs, or frames missing/extra */
    WF_CHECK_ORACLE_END = 14,    /* end code differs */
    /* queue harness (wf_queue_fuzz.h): */
    WF_CHECK_QUEUE_CODE = 15,        /* a queue call returned a code asgst.h does not allow */
    WF_CHECK_QUEUE_BOOKKEEPING = 16, /* size, capacity or attempts disagree with the calls */
    WF_CHECK_QUEUE_ORDER = 17,       /* an element handled out of insertion order, twice, or
                                        with another arg than it was given */
    WF_CHECK_QUEUE_TRUTH = 18,       /* an element walk is neither the true trace at enqueue
                                        time nor ASGST_WF_FRAME_GONE for a frame that left */
    /* api harness (wf_api_fuzz.h), one per operation: */
    WF_CHECK_API_NEXT_FRAME = 19,   /* NextFrame: not the expected frame, end code, or sticky */
    WF_CHECK_API_STATE = 20,        /* State: not 1 before the end code, or not the end code */
    WF_CHECK_API_RUN = 21,          /* a RunWithIterator*: result or handler call unexpected */
    WF_CHECK_API_METHOD_INFO = 22,  /* GetMethodInfo: names, lengths, modifiers or class */
    WF_CHECK_API_CLASS_INFO = 23,   /* GetClassInfo: names, lengths or modifiers */
    WF_CHECK_API_NAME_BUFFER = 24,  /* an info call wrote at or past a buffer's capacity */
    WF_CHECK_API_THREAD_STATE = 25, /* ThreadState differs from the reference walker's */
    WF_CHECK_API_CAPABILITIES = 26, /* Capabilities: undefined bits, or changed */
    WF_CHECK_COUNT = 27
};

enum wf_shape_kind { /* frame kinds in a shape */
                     WF_SHAPE_INTERPRETED = 1,
                     WF_SHAPE_COMPILED = 2,
                     WF_SHAPE_INLINED = 3,
                     WF_SHAPE_NATIVE = 4,
                     WF_SHAPE_NON_JAVA = 5,
                     WF_SHAPE_OTHER = 6
};

typedef struct wf_run_result {
    int status;         /* 0 walked; < 0 a wf_case_status (nothing walked) */
    int finding;        /* wf_finding_kind */
    int check;          /* wf_check that failed (WF_CHECK_NONE if none) */
    int oracle;         /* wf_oracle used */
    int run_result;     /* what Run* returned */
    int end_code;       /* NextFrame's last return (= run_result if not walked) */
    int state_after;    /* ASGST_State after the end */
    uint32_t frames;    /* frames the walker returned */
    int32_t diff_index; /* first frame where check failed / oracle differs, -1 */
    ASGST_Frame got;    /* the walker's frame at diff_index (zero past its end) */
    ASGST_Frame want;   /* the oracle's frame at diff_index (zero past its end) */
    int want_run_result, want_end_code;
    uint32_t want_frames;
    uint32_t mutations; /* mutation operators applied to this case */
    wf_fault fault;     /* crash or hang record */
    uint32_t shape_len;
    uint8_t shape[32]; /* wf_shape_kind of the last frames before the failure,
                          consecutive repeats collapsed, oldest first */
    int32_t queue_op;  /* queue and api harnesses: the op the failure is about, -1 none */
} wf_run_result;

/* Decode `data` as a case file and run it. Not signal-safe (none of these are). */
int wf_run_case(const struct wf_walker *w, const uint8_t *data, size_t len, wf_case *c,
                wf_run_result *r);
/* Generate a case from `data` (params p, NULL = defaults); if `mutate` (wf_mutation_class
   bits) is non-zero, the bytes the generator left drive the mutators. Then run it. */
int wf_run_generated(const struct wf_walker *w, const uint8_t *data, size_t len,
                     const wf_gen_params *p, uint32_t mutate, wf_case *c, wf_run_result *r);
/* Run the case that is mapped now (after wf_case_decode, wf_gen_*, wf_mutate_*). */
int wf_run_mapped(const struct wf_walker *w, wf_case *c, wf_run_result *r);
/* Frames the last run's walker returned (count in result.frames). */
const ASGST_Frame *wf_run_frames(void);
/* Name of a check ("bci-range", "oracle-frame", ...). */
const char *wf_check_name(int check);

/* Walk the mapped case with walker w from (sp, fp, pc) through RunWithIteratorFromFrame,
   unguarded, into out (capacity cap). Returns the frame count; *run, *end get the codes. */
uint32_t wf_walk_from_frame(const struct wf_walker *w, uint64_t sp, uint64_t fp, uint64_t pc,
                            int32_t options, ASGST_Frame *out, uint32_t cap, int *run, int *end);
/* Walk the mapped case per c's entry; then rewind and walk again into out2. Returns the count
   of the first walk; *count2 the second's. Unguarded. */
uint32_t wf_walk_twice_rewound(const struct wf_walker *w, const wf_case *c, ASGST_Frame *out1,
                               ASGST_Frame *out2, uint32_t cap, uint32_t *count2);
/* cffi:end */

/* The wf_shape_kind of a frame of this type and comp level. */
static inline uint8_t wf_shape_kind_of(int type, int comp_level) {
    switch (type) {
    case ASGST_FRAME_JAVA: return comp_level == 0 ? WF_SHAPE_INTERPRETED : WF_SHAPE_COMPILED;
    case ASGST_FRAME_JAVA_INLINED: return WF_SHAPE_INLINED;
    case ASGST_FRAME_JAVA_NATIVE: return WF_SHAPE_NATIVE;
    case ASGST_FRAME_NON_JAVA: return WF_SHAPE_NON_JAVA;
    default: return WF_SHAPE_OTHER;
    }
}

#endif /* WALKFUZZ_WF_RUN_H */
