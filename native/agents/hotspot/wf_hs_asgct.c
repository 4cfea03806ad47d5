/* Resolving AsyncGetCallTrace and calling it, guarded or not.
 *
 * The guard is the project's (native/src/guard/guard.c, contracts §1), compiled into this agent.
 * Inside a JVM the guard must not be the first to judge a fault: ASGCT itself faults on
 * purpose (SafeFetch), and so do implicit null checks and safepoint polls. The first
 * responder hands every fault to JVM_handle_linux_signal(sig, info, uc, 0); only what the
 * JVM declines is a walker fault the guard turns into a finding.
 *
 * After a siglongjmp out of ASGCT the thread's in-ASGCT flag stays set until one clean ASGCT
 * call on that thread (DESIGN.md, facts); wf_hs_asgct_guarded makes that call itself.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "wf_hs.h"

static wf_asgct_fn asgct;
static wf_jvm_signal_fn jvm_signal;
static uintptr_t libjvm_base;

uintptr_t wf_hs_libjvm_base(void) { return libjvm_base; }

static int jvm_first_responder(int sig, siginfo_t *info, void *uc) {
    return jvm_signal(sig, info, uc, 0) ? 1 : 0;
}

int wf_hs_asgct_resolve(char *err, size_t errlen) {
    asgct = (wf_asgct_fn)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    jvm_signal = (wf_jvm_signal_fn)dlsym(RTLD_DEFAULT, "JVM_handle_linux_signal");
    if (!asgct) {
        snprintf(err, errlen, "this JVM's libjvm does not export AsyncGetCallTrace");
        return -1;
    }
    if (!jvm_signal) {
        snprintf(err, errlen, "this JVM's libjvm does not export JVM_handle_linux_signal");
        return -1;
    }
    Dl_info info;
    if (dladdr((void *)asgct, &info) && info.dli_fbase) libjvm_base = (uintptr_t)info.dli_fbase;
    wf_guard_set_first_responder(jvm_first_responder);
    return 0;
}

typedef struct {
    wf_asgct_trace *trace;
    jint depth;
    void *uc;
} asgct_args;

static intptr_t call_asgct(void *arg) {
    asgct_args *a = (asgct_args *)arg;
    asgct(a->trace, a->depth, a->uc);
    return a->trace->num_frames;
}

int wf_hs_asgct_guarded(wf_asgct_trace *trace, jint depth, void *uc, wf_fault *fault) {
    asgct_args a = {trace, depth, uc};
    intptr_t result = 0;
    if (!wf_guard_call(call_asgct, &a, &result, fault)) return 0;
    /* Clean call: reset the in-ASGCT state the siglongjmp left behind. NULL ucontext makes
     * ASGCT take the thread's anchor or give up, never follow the bad registers again. */
    wf_asgct_trace clean = {trace->env_id, 0, trace->frames};
    asgct_args c = {&clean, 1, NULL};
    wf_fault ignored;
    wf_guard_call(call_asgct, &c, &result, &ignored);
    trace->num_frames = WF_HS_CODE_MIN;
    return 1;
}

void wf_hs_asgct_unguarded(wf_asgct_trace *trace, jint depth, void *uc) { asgct(trace, depth, uc); }

int wf_hs_code_slot(jint num_frames) {
    if (num_frames > 0) return WF_HS_CODE_OK_SLOT;
    if (num_frames < WF_HS_CODE_MIN) num_frames = WF_HS_CODE_MIN;
    return num_frames + WF_HS_CODE_BIAS;
}
