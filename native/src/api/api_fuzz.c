/* api_fuzz.c — the api harness's one call (wf_api_fuzz.h): generate the case, run the op
 * sequence inside the walker's callbacks under the guard, check each result as it comes. */
#define _GNU_SOURCE
#include <string.h>
#include <ucontext.h>

#include "api_ops.h"
#include "gen/gen_provider.h"
#include "run/run_walk_record.h"
#include "wf_gen.h"
#include "wf_ucontext.h"

static api_exec exec_state; /* big (oracle frames, a ucontext): one per process */

static const char *const OP_NAMES[WF_API_OP_COUNT] = {
    "next-frame", "next-frames", "rewind",       "state",        "method-info", "class-info",
    "from-frame", "nested",      "capabilities", "thread-state", "return",      "null-info",
};

const char *wf_api_op_name(int op) {
    return op >= 0 && op < WF_API_OP_COUNT ? OP_NAMES[op] : "none";
}

uint32_t wf_api_fuzz_op_count(void) { return exec_state.program_count; }

int wf_api_fuzz_op(uint32_t i) { return i < exec_state.program_count ? exec_state.program[i] : -1; }

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
    exec_state.program_count = 0;
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
        r->queue_op = (int32_t)exec_state.program_count - 1;
    }
    return r->finding;
}
