/* queue_fuzz.c — the queue harness's one call (wf_queue_fuzz.h): generate the case and the
 * program, run the program through the walker's queue entries under the guard, check the log. */

#include "queue_fuzz.h"
#include "run/run_walk_record.h"
#include "wf_gen.h"

static wf_queue_op program[WF_QUEUE_FUZZ_MAX_OPS];
static uint32_t program_count;
static wf_queue_result *log_buffer; /* allocated by the first call */

uint32_t wf_queue_fuzz_op_count(void) { return program_count; }

typedef struct queue_job {
    const wf_walker *w;
    wf_queue_result *log;
} queue_job;

static intptr_t run_program(void *arg) {
    queue_job *job = arg;
    return wf_case_queue_run_walker(job->w, job->log);
}

/* The program (the mapped case's section 9) through w under the guard, then its log checked. */
static int run_checked(const wf_walker *w, const wf_case *c, const wf_queue_op *ops, uint32_t count,
                       wf_queue_result *log, wf_run_result *r) {
    queue_job job = {w, log};
    intptr_t ignored;
    if (wf_guard_call(run_program, &job, &ignored, &r->fault) != 0) {
        r->finding = r->fault.kind == WF_FAULT_HANG ? WF_FINDING_HANG : WF_FINDING_CRASH;
        w->queue_thread_reset(); /* its queues, and the safepoint the fault abandoned */
        wf_case_queue_undo();    /* the stack words the program POKEd */
        return r->finding;
    }
    wf_queue_oracle(c, ops, count, log, r);
    return r->finding;
}

static void generate_params(wf_gen_params *p) {
    wf_gen_default_params(p);
    p->entry = WF_ENTRY_UCONTEXT; /* Enqueue walks a ucontext: so does the truth */
    p->consistent = 1;            /* thread flags match the options (Enqueue's rule) */
    p->max_frames = WF_QUEUE_FUZZ_MAX_FRAMES;
}

int wf_queue_fuzz_run(const wf_walker *w, const uint8_t *data, size_t len, wf_case *c,
                      wf_run_result *r) {
    if (!w->has_queue) return wf_result_start(r, WF_CASE_ERR_BAD_FIELD);
    if (log_buffer == NULL && (log_buffer = wf_queue_result_new()) == NULL)
        return wf_result_start(r, WF_CASE_ERR_MAP);
    int wild = len > 0 && (data[0] & WF_QUEUE_FUZZ_MUTATE);
    size_t skip = len > 0 ? 1 : 0;
    wf_gen_params p;
    generate_params(&p);
    int status = wf_gen_from_bytes(data + skip, len - skip, &p, c);
    if (wf_result_start(r, status) != WF_CASE_OK) return WF_FINDING_NONE;
    size_t used = skip + wf_gen_consumed();
    program_count = wf_queue_gen_program(c, data + used, len - used, wild, program);
    wf_case_queue_set(program, program_count);
    return run_checked(w, c, program, program_count, log_buffer, r);
}

int wf_queue_case_run(const wf_walker *w, const wf_case *c, wf_queue_result *log,
                      wf_run_result *r) {
    if (!w->has_queue) return wf_result_start(r, WF_CASE_ERR_BAD_FIELD);
    wf_result_start(r, WF_CASE_OK);
    uint32_t count;
    const wf_queue_op *ops = wf_case_queue_ops(&count);
    return run_checked(w, c, ops, count, log, r);
}
