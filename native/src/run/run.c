/* run.c — the one-call hot path (wf_run.h): map, walk under the guard, check. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "run_walk_record.h"
#include "wf_mutate.h"
#include "wf_run.h"
#include "wf_ucontext.h"
#include "wf_vm.h"

static ASGST_Frame *got_frames, *ref_frames; /* WF_RUN_MAX_FRAMES each, allocated once */

static int buffers(void) {
    if (got_frames == NULL) got_frames = calloc(WF_RUN_MAX_FRAMES, sizeof *got_frames);
    if (ref_frames == NULL) ref_frames = calloc(WF_RUN_MAX_FRAMES, sizeof *ref_frames);
    return got_frames != NULL && ref_frames != NULL;
}

const ASGST_Frame *wf_run_frames(void) { return got_frames; }

/* ---- one walk -------------------------------------------------------------------------- */

typedef struct walk_job {
    walk_record *rec;
    const wf_case *c;
} walk_job;

static void record_frames(ASGST_Iterator *it, void *arg) {
    walk_record *rec = arg;
    ASGST_Frame f;
    int rc;
    rec->handler_called = 1;
    while ((rc = rec->walker->next_frame(it, &f)) == 1) {
        if (rec->count == rec->cap) { /* a walker that never ends */
            rec->overflow = 1;
            break;
        }
        rec->frames[rec->count] = f;
        rec->count = rec->count + 1;
        wf_guard_progress(rec->count, (uintptr_t)f.sp, (uintptr_t)f.fp, (uintptr_t)f.pc);
    }
    rec->end_code = rc;
    rec->state_after = rec->walker->state(it);
}

static void context_of(const wf_case *c, ucontext_t *uc) {
    memset(uc, 0, sizeof *uc);
    wf_uc_set_frame(uc, c->pc, c->sp, c->fp);
}

static intptr_t walk_guarded(void *arg) {
    walk_job *job = arg;
    walk_record *rec = job->rec;
    const wf_case *c = job->c;
    ucontext_t uc;
    context_of(c, &uc);
    int32_t options = (int32_t)c->options;
    switch (c->entry) {
    case WF_ENTRY_FROM_FRAME:
        rec->run_result = rec->walker->run_with_iterator_from_frame(
            (void *)c->sp, (void *)c->fp, (void *)c->pc, options, record_frames, rec);
        break;
    case WF_ENTRY_NULL_CONTEXT:
        rec->run_result = rec->walker->run_with_iterator(NULL, options, record_frames, rec);
        break;
    default:
        rec->run_result = rec->walker->run_with_iterator(&uc, options, record_frames, rec);
        break;
    }
    if (!rec->handler_called) rec->end_code = rec->state_after = rec->run_result;
    return 0;
}

static void record_init(walk_record *rec, const wf_walker *w, ASGST_Frame *frames) {
    memset(rec, 0, sizeof *rec);
    rec->walker = w;
    rec->frames = frames;
    rec->cap = WF_RUN_MAX_FRAMES;
}

/* 0 walked, 1 faulted (*fault set). */
static int walk(const wf_walker *w, const wf_case *c, walk_record *rec, ASGST_Frame *frames,
                wf_fault *fault) {
    record_init(rec, w, frames);
    walk_job job = {rec, c};
    intptr_t ignored;
    return wf_guard_call(walk_guarded, &job, &ignored, fault);
}

/* ---- the result ------------------------------------------------------------------------ */

static uint8_t shape_kind(const ASGST_Frame *f) { return wf_shape_kind_of(f->type, f->comp_level); }

void wf_fill_shape(wf_run_result *r, const walk_record *rec, int64_t upto) {
    uint32_t end = upto < 0 || upto >= (int64_t)rec->count ? rec->count : (uint32_t)upto + 1;
    r->shape_len = 0;
    for (uint32_t i = 0; i < end; i++) {
        uint8_t k = shape_kind(&rec->frames[i]);
        if (r->shape_len > 0 && r->shape[r->shape_len - 1] == k) continue;
        if (r->shape_len == WF_SHAPE_MAX) {
            memmove(r->shape, r->shape + 1, WF_SHAPE_MAX - 1);
            r->shape_len--;
        }
        r->shape[r->shape_len++] = k;
    }
}

static void note_diff(wf_run_result *r, const walk_record *got, const ASGST_Frame *want,
                      uint32_t want_count) {
    if (r->diff_index < 0) return;
    uint32_t i = (uint32_t)r->diff_index;
    if (i < got->count) r->got = got->frames[i];
    if (want != NULL && i < want_count) r->want = want[i];
}

static void set_oracle(wf_run_result *r, int run, int end, uint32_t count) {
    r->want_run_result = run;
    r->want_end_code = end;
    r->want_frames = count;
}

/* Compare with the truth or the reference walker; the finding, if any, goes into r. */
static void check_truth(const wf_walker *w, const wf_case *c, const walk_record *got,
                        wf_run_result *r) {
    const ASGST_Frame *want = NULL;
    uint32_t want_count = 0;
    walk_record ref;
    if (c->has_truth) {
        r->oracle = WF_ORACLE_TRUTH;
        want = c->truth;
        want_count = c->truth_count;
        set_oracle(r, c->truth_run_result, c->truth_end_code, want_count);
    } else if (w->run_with_iterator != wf_walker_reference()->run_with_iterator) {
        r->oracle = WF_ORACLE_REFERENCE;
        wf_fault fault;
        if (walk(wf_walker_reference(), c, &ref, ref_frames, &fault) != 0) {
            r->finding = fault.kind == WF_FAULT_HANG ? WF_FINDING_HANG : WF_FINDING_CRASH;
            r->fault = fault; /* the reference itself failed: a walkfuzz bug, reported */
            return;
        }
        want = ref.frames;
        want_count = ref.count;
        set_oracle(r, ref.run_result, ref.end_code, want_count);
    } else {
        return;
    }
    r->check = wf_check_oracle(got, r->want_run_result, r->want_end_code, want, want_count,
                               &r->diff_index);
    if (r->check != WF_CHECK_NONE) r->finding = WF_FINDING_INVALID_TRACE;
    note_diff(r, got, want, want_count);
}

int wf_result_start(wf_run_result *r, int status) {
    memset(r, 0, sizeof *r);
    r->diff_index = -1;
    r->queue_op = -1;
    r->status = status;
    return status;
}

int wf_run_mapped(const wf_walker *w, wf_case *c, wf_run_result *r) {
    memset(r, 0, sizeof *r);
    r->diff_index = -1;
    r->mutations = c->mutations;
    if (!buffers()) return r->status = WF_CASE_ERR_MAP;
    walk_record got;
    if (walk(w, c, &got, got_frames, &r->fault) != 0) {
        r->finding = r->fault.kind == WF_FAULT_HANG ? WF_FINDING_HANG : WF_FINDING_CRASH;
        r->frames = got.count;
        wf_fill_shape(r, &got, -1);
        return 0;
    }
    r->run_result = got.run_result;
    r->end_code = got.end_code;
    r->state_after = got.state_after;
    r->frames = got.count;
    r->check = wf_check_contract(&got, c->options, &r->diff_index);
    if (r->check != WF_CHECK_NONE) {
        r->finding = WF_FINDING_CONTRACT;
        note_diff(r, &got, NULL, 0);
    } else {
        check_truth(w, c, &got, r);
    }
    wf_fill_shape(r, &got, r->diff_index);
    return 0;
}

int wf_run_case(const wf_walker *w, const uint8_t *data, size_t len, wf_case *c, wf_run_result *r) {
    int status = wf_case_decode(data, len, c, NULL);
    if (status != WF_CASE_OK) {
        memset(r, 0, sizeof *r);
        r->diff_index = -1;
        return r->status = status;
    }
    return wf_run_mapped(w, c, r);
}

int wf_run_generated(const wf_walker *w, const uint8_t *data, size_t len, const wf_gen_params *p,
                     uint32_t mutate, wf_case *c, wf_run_result *r) {
    int status = wf_gen_from_bytes(data, len, p, c);
    if (status != WF_CASE_OK) {
        memset(r, 0, sizeof *r);
        r->diff_index = -1;
        return r->status = status;
    }
    if (mutate != 0) {
        size_t used = wf_gen_consumed();
        wf_mutate_bytes(c, mutate, data + used, len - used);
    }
    return wf_run_mapped(w, c, r);
}

/* ---- unguarded helpers for tests ------------------------------------------------------- */

uint32_t wf_walk_from_frame(const wf_walker *w, uint64_t sp, uint64_t fp, uint64_t pc,
                            int32_t options, ASGST_Frame *out, uint32_t cap, int *run, int *end) {
    walk_record rec;
    record_init(&rec, w, out);
    rec.cap = cap;
    rec.run_result = w->run_with_iterator_from_frame((void *)sp, (void *)fp, (void *)pc, options,
                                                     record_frames, &rec);
    *run = rec.run_result;
    *end = rec.handler_called ? rec.end_code : rec.run_result;
    return rec.count;
}

typedef struct rewind_job {
    walk_record first, second;
} rewind_job;

static void walk_rewind_walk(ASGST_Iterator *it, void *arg) {
    rewind_job *job = arg;
    record_frames(it, &job->first);
    job->first.walker->rewind_iterator(it);
    record_frames(it, &job->second);
}

uint32_t wf_walk_twice_rewound(const wf_walker *w, const wf_case *c, ASGST_Frame *out1,
                               ASGST_Frame *out2, uint32_t cap, uint32_t *count2) {
    rewind_job job;
    record_init(&job.first, w, out1);
    record_init(&job.second, w, out2);
    job.first.cap = job.second.cap = cap;
    ucontext_t uc;
    context_of(c, &uc);
    if (c->entry == WF_ENTRY_FROM_FRAME)
        w->run_with_iterator_from_frame((void *)c->sp, (void *)c->fp, (void *)c->pc,
                                        (int32_t)c->options, walk_rewind_walk, &job);
    else
        w->run_with_iterator(c->entry == WF_ENTRY_NULL_CONTEXT ? NULL : &uc, (int32_t)c->options,
                             walk_rewind_walk, &job);
    *count2 = job.second.count;
    return job.first.count;
}
