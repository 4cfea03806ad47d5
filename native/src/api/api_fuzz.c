/* api_fuzz.c — the api harness's one call (wf_api_fuzz.h): generate the case, run the op
 * sequence inside the walker's callbacks under the guard, check each result as it comes. */
#define _GNU_SOURCE
#include <string.h>
#include <ucontext.h>

#include "api_ops.h"
#include "gen/gen_provider.h"
#include "run/walk_record.h"
#include "wf_gen.h"
#include "wf_ucontext.h"

static api_exec exec_state; /* big (oracle frames, a ucontext): one per process */
static int32_t program[WF_API_FUZZ_MAX_OPS];
/* Ops started; volatile: after a fault, the last one is the op that faulted. */
static volatile uint32_t program_count;

static const char *const OP_NAMES[WF_API_OP_COUNT] = {
    "next-frame", "next-frames", "rewind",       "state",        "method-info", "class-info",
    "from-frame", "nested",      "capabilities", "thread-state", "return",      "null-info",
};

const char *wf_api_op_name(int op) {
    return op >= 0 && op < WF_API_OP_COUNT ? OP_NAMES[op] : "none";
}

uint32_t wf_api_fuzz_op_count(void) { return program_count; }

int wf_api_fuzz_op(uint32_t i) { return i < program_count ? program[i] : -1; }

void api_fail(level *lv, int check, int finding) {
    api_exec *x = lv->x;
    if (x->failed) return; /* the first failure is the finding */
    x->failed = 1;
    x->r->finding = finding;
    x->r->check = check;
    x->r->queue_op = (int32_t)program_count - 1;
    x->r->frames = lv->pos;
    x->r->want_frames = lv->want->count;
    x->r->want_run_result = lv->want->run;
    x->r->want_end_code = lv->want->end;
}

/* The case's own entry, as the other harnesses walk it (run.c walk_guarded). */
int api_start_case(level *lv) {
    api_exec *x = lv->x;
    const wf_case *c = x->c;
    int32_t options = (int32_t)c->options;
    switch (c->entry) {
    case WF_ENTRY_FROM_FRAME:
        return x->w->run_with_iterator_from_frame((void *)c->sp, (void *)c->fp, (void *)c->pc,
                                                  options, api_handler, lv);
    case WF_ENTRY_NULL_CONTEXT: return x->w->run_with_iterator(NULL, options, api_handler, lv);
    default: return x->w->run_with_iterator(&x->uc, options, api_handler, lv);
    }
}

/* A Run* call's result: the expected code, and the handler called exactly when it is a
   trace kind (asgst.h: an error returns without calling it). */
void api_check_run(level *lv, int rc) {
    if (lv->x->failed) return;
    if (rc != lv->want->run || lv->called != (lv->want->run > 0)) {
        lv->x->r->run_result = rc;
        api_fail(lv, WF_CHECK_API_RUN, WF_FINDING_INVALID_TRACE);
    }
}

void api_handler(ASGST_Iterator *it, void *arg) {
    level *lv = arg;
    lv->it = it;
    lv->called = 1;
    api_exec *x = lv->x;
    while (!x->failed && program_count < WF_API_FUZZ_MAX_OPS && !provider_exhausted(&x->p)) {
        int op = (int)(provider_byte(&x->p) % WF_API_OP_COUNT);
        program[program_count] = op;
        program_count = program_count + 1;
        if (op == WF_API_RETURN) return;
        api_run_op(lv, op);
    }
}

static intptr_t run_program(void *arg) {
    api_exec *x = arg;
    level root = {.x = x, .want = &x->truth};
    int rc = api_start_case(&root);
    x->r->run_result = rc;
    api_check_run(&root, rc);
    if (!x->failed) x->r->frames = root.pos;
    /* No callback (a thread the walk refuses: not Java, new, exiting): the ops left run
       outside one, on no iterator, so the process-wide calls see these threads too. */
    if (!root.called && !x->failed) {
        api_handler(NULL, &root);
        root.called = 0;
    }
    return 0;
}

static void generate_params(wf_gen_params *p) {
    wf_gen_default_params(p);
    p->max_frames = WF_API_FUZZ_MAX_FRAMES; /* short walks: ops reach their end */
}

static void exec_init(api_exec *x, const wf_walker *w, const wf_case *c, wf_run_result *r) {
    x->w = w;
    x->c = c;
    x->r = r;
    x->failed = 0;
    x->caps = API_CAPS_UNSEEN;
    x->method_count = x->class_count = 0;
    memset(&x->uc, 0, sizeof x->uc);
    wf_uc_set_frame(&x->uc, c->pc, c->sp, c->fp);
    x->truth = (api_expected){c->truth, c->truth_count, c->truth_run_result, c->truth_end_code};
}

int wf_api_fuzz_run(const wf_walker *w, const uint8_t *data, size_t len, wf_case *c,
                    wf_run_result *r) {
    int wild = len > 0 && (data[0] & WF_API_FUZZ_WILD);
    size_t skip = len > 0 ? 1 : 0;
    wf_gen_params p;
    generate_params(&p);
    program_count = 0;
    int status = wf_gen_from_bytes(data + skip, len - skip, &p, c);
    if (wf_result_start(r, status) != WF_CASE_OK) return WF_FINDING_NONE;
    r->oracle = WF_ORACLE_TRUTH;
    size_t used = skip + wf_gen_consumed();
    api_exec *x = &exec_state;
    exec_init(x, w, c, r);
    x->wild = wild;
    provider_bytes(&x->p, data + used, len - used);
    intptr_t ignored;
    if (wf_guard_call(run_program, x, &ignored, &r->fault) != 0) {
        r->finding = r->fault.kind == WF_FAULT_HANG ? WF_FINDING_HANG : WF_FINDING_CRASH;
        r->queue_op = (int32_t)program_count - 1;
    }
    return r->finding;
}
