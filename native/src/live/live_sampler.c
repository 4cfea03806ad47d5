/* live_sampler.c — sampling the live VM's workers: the SIGPROF handler, per-thread POSIX
 * timers (signal mode), and the guarded walk + check + bookkeeping of one sample. Thread
 * mode's sampler thread and handshake are live_sampler_thread.c, queue mode's enqueue
 * live_queue.c, the ticker live_ticker.c: called through the run's hooks (wf_live_mode_hooks),
 * never by name, as they call this file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wf_live_worker.h"
#include "wf_thread_timer.h"
#include "wf_ucontext.h"

static __thread struct wf_live_worker *current_worker __attribute__((tls_model("initial-exec")));

void wf_live_worker_bind(struct wf_live_worker *w) { current_worker = w; }

/* ---- one sample ---------------------------------------------------------------------- */

struct walk_call {
    const wf_walker *api;
    void *uc;
    int32_t options;
    struct wf_live_walk *out;
};

static void collect(ASGST_Iterator *it, void *arg) {
    struct walk_call *c = arg;
    struct wf_live_walk *o = c->out;
    for (;;) {
        if (o->count == WF_LIVE_WALK_MAX) {
            o->end = WF_LIVE_END_OVERFLOW; /* longer than any true stack: a cycle */
            break;
        }
        ASGST_Frame *f = &o->frames[o->count];
        int rc = c->api->next_frame(it, f);
        if (rc != 1) {
            o->end = rc;
            break;
        }
        o->count++;
        wf_guard_progress(o->count, (uintptr_t)f->sp, (uintptr_t)f->fp, (uintptr_t)f->pc);
    }
    o->state_after = c->api->state(it);
}

static intptr_t guarded_walk(void *arg) {
    struct walk_call *c = arg;
    c->out->run_result = c->api->run_with_iterator(c->uc, c->options, collect, c);
    return 0;
}

static void count_end(wf_live_stats *st, int32_t code) {
    st->errors[code <= 0 && code > -WF_LIVE_ERROR_SLOTS + 1 ? -code : WF_LIVE_ERROR_SLOTS - 1]++;
}

void wf_live_record(uint32_t *values, uint64_t *count, uint64_t ns) {
    if (*count >= wf_live_current_run.cfg.record_cap) return;
    values[*count] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
    (*count)++;
}

void wf_live_judge(struct wf_live_worker *w, const struct wf_live_sample_info *at,
                   const wf_fault *fault) {
    const struct wf_live_walk *walk = &w->walk;
    wf_live_stats *st = &w->st;
    st->walked++;
    st->window_samples[at->window]++;
    if (fault != NULL) {
        int hang = fault->kind == WF_FAULT_HANG;
        if (hang) st->hangs++;
        else st->faults++;
        wf_live_capture_keep(w, at, hang ? -2 : -1, -1, fault);
    } else {
        st->frames += walk->count;
        count_end(st, walk->run_result < 0 ? walk->run_result : walk->end);
        struct wf_live_verdict v;
        wf_live_check(at->snap, walk, &v);
        if (v.outcome == WF_LIVE_EXACT) st->exact++;
        else {
            st->invalid++;
            st->invalid_by_class[v.cls]++;
            st->invalid_in_window += at->window != WF_LIVE_WIN_NONE;
            wf_live_capture_keep(w, at, v.cls, v.first_diff, NULL);
        }
    }
    wf_live_record(w->latencies, &w->latency_count, wf_live_now_ns() - at->t0);
}

void wf_live_walk_reset(struct wf_live_walk *walk, int32_t run_result) {
    walk->run_result = run_result;
    walk->end = 0;
    walk->state_after = 0;
    walk->count = 0;
}

void wf_live_collect(ASGST_Iterator *it, struct wf_live_walk *out) {
    struct walk_call call = {.api = wf_live_current_run.api, .out = out};
    collect(it, &call);
}

void wf_live_info(struct wf_live_sample_info *at, const struct wf_live_worker *w,
                  struct wf_live_snapshot *snap, const void *uc, uint64_t t0) {
    at->pc = wf_uc_pc(uc);
    at->sp = wf_uc_sp(uc);
    at->fp = wf_uc_fp(uc);
    at->source = WF_EXPECTED_WALK;
    at->signal = NULL;
    at->window = wf_live_window_at(&wf_live_current_run.vm, at->pc);
    wf_live_expect(snap, at->window, uc);
    at->state = w->vm->state;
    if (wf_live_current_run.cfg.workload == WF_LIVE_WORKLOAD_RECURSIVE)
        wf_live_expect_depth(snap, at->state, &w->vm->anchor, at->pc);
    at->snap = snap;
    at->t0 = t0;
}

void wf_live_sample(struct wf_live_worker *w, void *uc, int32_t options, uint64_t t0) {
    const struct wf_live_run *run = &wf_live_current_run;
    struct wf_live_sample_info at;
    wf_live_info(&at, w, &w->snap, uc, t0);
    wf_live_walk_reset(&w->walk, 0);
    struct walk_call call = {.api = run->api, .uc = uc, .options = options, .out = &w->walk};
    intptr_t ignored;
    wf_fault fault;
    int faulted = wf_guard_call(guarded_walk, &call, &ignored, &fault);
    wf_live_judge(w, &at, faulted ? &fault : NULL);
    if (run->cfg.safepoint_every && ++w->samples % run->cfg.safepoint_every == 0)
        w->jt.poll = 1; /* the next poll enters the safepoint stub */
}

/* ---- handler ------------------------------------------------------------------------- */

void wf_live_note_delivery(struct wf_live_worker *w, uint64_t t0) {
    if (w->last_sample_ns != 0)
        wf_live_record(w->intervals, &w->interval_count, t0 - w->last_sample_ns);
    w->last_sample_ns = t0;
    w->st.delivered++;
}

static void sample_here(struct wf_live_worker *w, void *uc, uint64_t t0) {
    wf_live_note_delivery(w, t0);
    wf_live_snapshot_take(&w->jt, &w->snap);
    __atomic_or_fetch(&w->vm->flags, WF_THREAD_CURRENT, __ATOMIC_RELAXED);
    wf_live_sample(w, uc, ASGST_WALK_SAME_THREAD, t0);
    __atomic_and_fetch(&w->vm->flags, ~(uint32_t)WF_THREAD_CURRENT, __ATOMIC_RELAXED);
}

/* Restart the timer when wf_live_pace_next says so (wf_live_pace.h: why). */
static void pace(struct wf_live_worker *w, const siginfo_t *info, uint64_t entered_ns) {
    if (info->si_code != SI_TIMER || !w->has_timer) return;
    uint64_t first = wf_live_pace_next(&w->pace, entered_ns, wf_live_now_ns(), info->si_overrun > 0,
                                       wf_live_current_run.cfg.interval_ns);
    if (first != 0 &&
        wf_thread_timer_restart(w->timer, first, wf_live_current_run.cfg.interval_ns) == 0)
        w->st.paced++;
}

static void on_sigprof(int signo, siginfo_t *info, void *uc) {
    (void)signo;
    int saved_errno = errno;
    struct wf_live_worker *w = current_worker;
    if (w != NULL) {
        const struct wf_live_mode_hooks *hooks = &wf_live_current_run.hooks;
        if (hooks->handler != NULL) hooks->handler(w, uc);
        else if (wf_live_current_run.phase == WF_LIVE_SAMPLING) {
            uint64_t entered = wf_live_now_ns();
            if (hooks->sample != NULL) hooks->sample(w, uc, entered);
            else sample_here(w, uc, entered);
            pace(w, info, entered);
            wf_live_pace_done(&w->pace, entered, wf_live_now_ns());
            __atomic_store_n(&w->answered, w->answered + 1, __ATOMIC_RELEASE); /* the ticker's */
        }
    }
    errno = saved_errno;
}

int wf_live_sampler_install(char *err, size_t errlen) {
    int installed = wf_sampling_handler_install(SIGPROF, on_sigprof, NULL);
    if (installed != 0) {
        snprintf(err, errlen, "cannot install the SIGPROF handler: %s", strerror(-installed));
        return -1;
    }
    return 0;
}

/* ---- signal mode: per-thread timers ------------------------------------------------- */

static int arm_timer(struct wf_live_worker *w, uint64_t interval_ns, char *err, size_t errlen) {
    int rc = wf_thread_timer_start(w->tid, SIGPROF, interval_ns, &w->timer);
    if (rc != 0) {
        snprintf(err, errlen, "timer for worker %d (%llu ns): %s", w->index,
                 (unsigned long long)interval_ns, strerror(-rc));
        return -1;
    }
    w->has_timer = 1;
    return 0;
}

static intptr_t nothing(void *arg) {
    (void)arg;
    return 0;
}

void wf_live_guard_prepare(uint64_t budget_ns) {
    intptr_t ignored;
    wf_fault fault;
    wf_guard_call(nothing, NULL, &ignored,
                  &fault); /* handlers, alternate stack: not in a handler */
    if (budget_ns) wf_guard_set_budget_ns(budget_ns);
}

int wf_live_sampler_start(struct wf_live_run *run, char *err, size_t errlen) {
    if (run->hooks.start != NULL) return run->hooks.start(run, err, errlen);
    for (int i = 0; i < run->worker_count; i++)
        if (arm_timer(&run->workers[i], run->cfg.interval_ns, err, errlen) != 0) return -1;
    return 0;
}

void wf_live_sampler_stop(struct wf_live_run *run) {
    for (int i = 0; i < run->worker_count; i++) {
        struct wf_live_worker *w = &run->workers[i];
        if (!w->has_timer) continue;
        timer_delete(w->timer);
        w->has_timer = 0;
    }
    if (run->has_sampler) pthread_join(run->sampler, NULL);
    run->has_sampler = 0;
}

void wf_live_safepoint(struct wf_live_thread *t, const struct wf_live_method *unused) {
    (void)unused;
    struct wf_live_worker *w = (struct wf_live_worker *)t; /* jt is the first member */
    w->st.safepoints++;
    t->poll = 0;
    if (wf_live_current_run.hooks.safepoint != NULL) wf_live_current_run.hooks.safepoint(w);
}
