/* Fuzz mode: on a SIGPROF that interrupted Java code, call ASGCT `batch` times, each time on a
 * copy of the real ucontext with pc/sp/fp perturbed by one record (wf_hs_perturb.c).
 *
 * A record whose base this context lacks (a corpus record naming the next thread's stack
 * when there is one thread) is not tried: it is counted as unresolved, never approximated.
 *
 * Only threads running Java code are worth it: a thread in the VM or in native code has a
 * last-Java-frame anchor and ASGCT walks from the anchor, ignoring the ucontext (DESIGN.md,
 * facts). "Running Java code" = the interrupted pc is in the code cache.
 *
 * A batch ends early once it has used duty_percent of the timer interval: signals arrive on
 * wall time, and a handler that outlasts the interval would starve the workload for good.
 *
 * Guarded (mode fuzz): a fault the JVM declines is caught, pushed to the fault ring with the
 * record that caused it, and the thread goes on. Unguarded (mode control): the same calls with
 * no guard, the last record of each thread kept in the flight file, and the first bad one
 * takes the VM down with an hs_err file.
 */
#define _GNU_SOURCE
#include <string.h>
#include <ucontext.h>

#include "wf_hs.h"
#include "wf_ucontext.h"

static void remember_context(wf_hs_thread *t, const ucontext_t *uc) {
    t->last_pc = wf_uc_pc(uc);
    t->last_sp = wf_uc_sp(uc);
    t->last_fp = wf_uc_fp(uc);
}

static void report_fault(wf_hs_thread *t, const ucontext_t *real, const ucontext_t *pert,
                         wf_hs_strategy s, const wf_hs_record *rec, const wf_fault *fault) {
    wf_hs_fault_event ev;
    memset(&ev, 0, sizeof ev);
    ev.thread = (uint32_t)t->index;
    ev.strategy = (uint8_t)s;
    wf_hs_record_encode(rec, ev.record);
    ev.fault = *fault;
    ev.real_pc = wf_uc_pc(real);
    ev.real_sp = wf_uc_sp(real);
    ev.real_fp = wf_uc_fp(real);
    ev.pert_pc = wf_uc_pc(pert);
    ev.pert_sp = wf_uc_sp(pert);
    ev.pert_fp = wf_uc_fp(pert);
    wf_hs_out_fault(&ev);
}

void wf_hs_fuzz_on_signal(wf_hs_thread *t, ucontext_t *uc, int guarded) {
    t->signals++;
    uintptr_t pc = wf_uc_pc(uc);
    if (!wf_hs_regions_is_java_code(pc)) {
        t->skipped_not_java++;
        return;
    }
    remember_context(t, uc);
    wf_hs_bases bases;
    wf_hs_perturb_bases(t, uc, &bases);
    wf_asgct_trace trace = {t->env, 0, t->frames};
    uint64_t deadline = wf_hs_now_ns() + wf_hs_cfg.interval_ns * wf_hs_cfg.duty_percent / 100;
    for (uint32_t i = 0; i < wf_hs_cfg.batch && wf_hs_now_ns() < deadline; i++) {
        ucontext_t copy = *uc;
        wf_hs_record rec;
        wf_hs_strategy s = wf_hs_perturb_next(t, uc, &bases, &rec);
        if (!wf_hs_record_apply(&rec, &bases, &copy)) { /* a base this context lacks */
            t->unresolved++;
            continue;
        }
        trace.num_frames = 0;
        t->calls++;
        if (guarded) {
            wf_fault fault;
            if (wf_hs_asgct_guarded(&trace, (jint)wf_hs_cfg.depth, &copy, &fault)) {
                t->faults++;
                report_fault(t, uc, &copy, s, &rec, &fault);
            }
        } else {
            wf_hs_out_flight(t, (uint8_t)s, &rec);
            wf_hs_asgct_unguarded(&trace, (jint)wf_hs_cfg.depth, &copy);
        }
        t->codes[wf_hs_code_slot(trace.num_frames)]++;
    }
}
