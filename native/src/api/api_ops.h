/* api_ops.h — internal pieces of the api harness (wf_api_fuzz.h): the state of one input's
 * run (api_fuzz.c) and the callback that runs the operations with their checks (api_ops.c,
 * which api_fuzz.c calls and which calls nothing of api_fuzz.c). */
#ifndef WALKFUZZ_API_OPS_H
#define WALKFUZZ_API_OPS_H

#include <stdint.h>
#include <ucontext.h>

#include "gen/gen_provider.h"
#include "wf_api_fuzz.h"

#define API_SUB_CAP 1024 /* frames of a FROM_FRAME oracle walk (generated stacks are shorter) */
#define API_SEEN_MAX 16  /* handles remembered for the info ops */
#define API_CANARY 8     /* bytes after a name buffer that no call may write */
#define API_FILL 0xA5    /* what a name buffer and a frame hold before a call */
#define API_CAPS_UNSEEN (-1000)

typedef struct api_expected { /* the walk an iterator must give */
    const ASGST_Frame *frames;
    uint32_t count;
    int run; /* what the Run* call returns; < 0: the handler is not called */
    int end; /* NextFrame's code after the last frame */
} api_expected;

typedef struct api_exec { /* one input's run */
    const wf_walker *w;
    const wf_case *c;
    wf_run_result *r;
    gen_provider p; /* the op bytes */
    int wild;       /* arbitrary handles too */
    int failed;
    int caps; /* the first Capabilities result */
    ucontext_t uc;
    api_expected truth;
    ASGST_Frame sub[WF_API_FUZZ_MAX_DEPTH][API_SUB_CAP];
    char names[3][WF_API_NAME_CAP + API_CANARY];
    uintptr_t methods[API_SEEN_MAX], classes[API_SEEN_MAX];
    uint32_t method_count, class_count;
    int32_t program[WF_API_FUZZ_MAX_OPS]; /* the ops started, in order */
    /* Ops started; volatile: after a fault, the last one is the op that faulted. */
    volatile uint32_t program_count;
} api_exec;

typedef struct level { /* one open callback and its iterator */
    api_exec *x;
    const api_expected *want;
    ASGST_Iterator *it;
    uint32_t pos; /* frames NextFrame gave since the last rewind */
    int ended;    /* NextFrame gave the end code since then */
    int depth;    /* 0: the case's own callback */
    int called;
} level;

/* The callback of every Run* call: runs ops on lv's iterator until RETURN or the end. */
void api_handler(ASGST_Iterator *it, void *arg);
/* The case's own Run* call (its entry, context, options) with api_handler; its result. */
int api_start_case(level *lv);
/* Check a Run* call's result and whether it called the handler. */
void api_check_run(level *lv, int rc);
/* Record the first failure in the run result (check, finding kind, the op, positions). */
void api_fail(level *lv, int check, int finding);

#endif /* WALKFUZZ_API_OPS_H */
