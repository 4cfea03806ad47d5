/* The sampler's call into the fp companion (internal; not cffi-visible). */
#ifndef WF_UW_COMPANION_WALK_H
#define WF_UW_COMPANION_WALK_H

#include <stdint.h>
#include <ucontext.h>

#include "wf_unwinder.h"

/* When the companion is on, walk `uc` (the handler's ucontext) with the fp walk and count
   both verdicts; `main` is the sample's walk by the process's unwinder (NULL when it faulted
   or hung), `truth` the shadow stack innermost first, then the worker root.
   Async-signal-safe. */
void wf_uw_companion_sample(const ucontext_t *uc, const wf_uw_walk *main, const int32_t *truth,
                            uint32_t m);

#endif
