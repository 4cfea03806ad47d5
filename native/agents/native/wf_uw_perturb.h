/* Apply one perturbation to a context about to be walked (internal). */
#ifndef WF_UW_PERTURB_H
#define WF_UW_PERTURB_H

#include <ucontext.h>

#include "wf_uw_input.h"
#include "wf_uw_targets.h"

/* What a perturbation may refer to besides the context itself. */
typedef struct wf_uw_perturb_env {
    const wf_uw_targets *targets;
    const ucontext_t *captured;   /* the unperturbed context (live stack above its sp) */
    ucontext_t *fake_frame;       /* scratch for a fake signal frame, on the walk's stack */
    uintptr_t stack_lo, stack_hi; /* this thread's stack */
} wf_uw_perturb_env;

/* Change uc as p says. Returns 1 if anything was applied (kind != NONE). */
int wf_uw_perturb(ucontext_t *uc, const wf_uw_perturbation *p, const wf_uw_perturb_env *env);

#endif
