/* The one C call per fuzz input (see wf_worker.h). */
#include "wf_worker.h"

#include <string.h>

#include "wf_api_fuzz.h"
#include "wf_journal.h"
#include "wf_mutate.h"
#include "wf_queue_fuzz.h"

/* Layout-level mutations of the layouts harness: frames, kinds, return pcs, anchor, state,
   and stack words (saved fps live there). */
#define LAYOUT_CLASSES (WF_MUTATE_LAYOUT | WF_MUTATE_THREAD | WF_MUTATE_STACK)

/* A case file that libFuzzer may have changed anywhere: its TRUTH section is no evidence
   any more, so the walk is checked against the reference walker instead. */
static void run_raw_case(const struct wf_walker *w, const uint8_t *data, size_t len, wf_case *c,
                         wf_run_result *r) {
    int status = wf_case_decode(data, len, c, NULL);
    if (status != WF_CASE_OK) {
        memset(r, 0, sizeof *r);
        r->diff_index = -1;
        r->status = status;
        return;
    }
    c->has_truth = 0;
    wf_run_mapped(w, c, r);
}

/* Generator params of the layout harnesses: defaults, and stacks past the depth limit now and
   then (wf_gen.h), so every campaign walks the depth limit and the frames near it. */
static const wf_gen_params *harness_params(void) {
    static wf_gen_params p;
    if (!p.deep) {
        wf_gen_default_params(&p);
        p.deep = 1;
    }
    return &p;
}

int wf_worker_run(int harness, const struct wf_walker *w, const uint8_t *data, size_t len,
                  wf_case *c, wf_run_result *r) {
    wf_journal_record(data, len);
    switch (harness) {
    case WF_HARNESS_REGISTERS:
        wf_run_generated(w, data, len, harness_params(), WF_MUTATE_REGISTERS, c, r);
        break;
    case WF_HARNESS_LAYOUTS: {
        uint32_t mutate = len > 0 && (data[0] & WF_LAYOUTS_MUTATE) ? LAYOUT_CLASSES : 0;
        size_t skip = len > 0 ? 1 : 0;
        wf_run_generated(w, data + skip, len - skip, harness_params(), mutate, c, r);
        break;
    }
    case WF_HARNESS_QUEUE: wf_queue_fuzz_run(w, data, len, c, r); break;
    case WF_HARNESS_API: wf_api_fuzz_run(w, data, len, c, r); break;
    default: run_raw_case(w, data, len, c, r); break;
    }
    return r->status == 0 ? r->finding : WF_FINDING_NONE;
}
