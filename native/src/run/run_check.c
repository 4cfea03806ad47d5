/* run_check.c — the contract and oracle checks of the hot path (wf_run.h's wf_check). */
#include <string.h>

#include "run_walk_record.h"
#include "wf_run.h"
#include "wf_vm.h"

static const char *const CHECK_NAMES[WF_CHECK_COUNT] = {
    "none",
    "run-result",
    "handler",
    "end-code",
    "state",
    "frame-limit",
    "frame-type",
    "method",
    "bci-range",
    "comp-level",
    "sp-order",
    "inlined",
    "oracle-result",
    "oracle-frame",
    "oracle-end",
    "queue-code",
    "queue-bookkeeping",
    "queue-order",
    "queue-truth",
    "api-next-frame",
    "api-state",
    "api-run",
    "api-method-info",
    "api-class-info",
    "api-name-buffer",
    "api-thread-state",
    "api-capabilities",
};

const char *wf_check_name(int check) {
    return check >= 0 && check < WF_CHECK_COUNT ? CHECK_NAMES[check] : "unknown";
}

static int is_documented_error(int code) {
    return (code >= ASGST_NO_TOP_JAVA_FRAME && code <= ASGST_NO_THREAD) ||
           (code >= ASGST_WF_BAD_ARGUMENT && code <= ASGST_WF_BAD_PC);
}

static int bci_in(const struct wf_vm_method *m, int bci) {
    return bci >= 0 && (uint32_t)bci < m->code_size;
}

/* The rules of asgst.h for one frame in isolation. */
static int check_frame(const ASGST_Frame *f, uint32_t options) {
    const struct wf_vm_method *m = wf_vm_method_at((uintptr_t)f->method);
    switch (f->type) {
    case ASGST_FRAME_JAVA:
        if (m == NULL) return WF_CHECK_METHOD;
        if (f->comp_level == 0) return bci_in(m, f->bci) ? 0 : WF_CHECK_BCI_RANGE;
        if (f->comp_level < 1 || f->comp_level > 4) return WF_CHECK_COMP_LEVEL;
        return f->bci == -1 || bci_in(m, f->bci) ? 0 : WF_CHECK_BCI_RANGE;
    case ASGST_FRAME_JAVA_INLINED:
        if (m == NULL) return WF_CHECK_METHOD;
        if (f->comp_level < 1 || f->comp_level > 4) return WF_CHECK_COMP_LEVEL;
        return bci_in(m, f->bci) ? 0 : WF_CHECK_BCI_RANGE;
    case ASGST_FRAME_JAVA_NATIVE:
        if (m == NULL) return WF_CHECK_METHOD;
        if (f->comp_level != -1) return WF_CHECK_COMP_LEVEL;
        return f->bci == -1 ? 0 : WF_CHECK_BCI_RANGE;
    case ASGST_FRAME_NON_JAVA:
        if (!(options & ASGST_INCLUDE_NON_JAVA_FRAMES)) return WF_CHECK_FRAME_TYPE;
        if (f->method != NULL) return WF_CHECK_METHOD;
        if (f->comp_level != -1) return WF_CHECK_COMP_LEVEL;
        return f->bci == -1 ? 0 : WF_CHECK_BCI_RANGE;
    default: return WF_CHECK_FRAME_TYPE;
    }
}

/* Order between frame i-1 and i: scopes of one frame share pc/sp/fp, frames grow in sp. */
static int check_order(const ASGST_Frame *prev, const ASGST_Frame *f) {
    if (prev->type == ASGST_FRAME_JAVA_INLINED) {
        if (f->sp != prev->sp || f->pc != prev->pc || f->fp != prev->fp) return WF_CHECK_SP_ORDER;
        int outer_scope = f->type == ASGST_FRAME_JAVA_INLINED ||
                          (f->type == ASGST_FRAME_JAVA && f->comp_level >= 1);
        return outer_scope ? 0 : WF_CHECK_INLINED;
    }
    return (uintptr_t)f->sp > (uintptr_t)prev->sp ? 0 : WF_CHECK_SP_ORDER;
}

static int check_codes(const walk_record *rec) {
    int ok_run = rec->run_result == ASGST_JAVA_TRACE || rec->run_result == ASGST_CPP_TRACE ||
                 is_documented_error(rec->run_result);
    if (!ok_run) return WF_CHECK_RUN_RESULT;
    if (rec->handler_called != (rec->run_result > 0)) return WF_CHECK_HANDLER;
    if (!rec->handler_called) return 0;
    if (rec->end_code != ASGST_NO_FRAME && !is_documented_error(rec->end_code))
        return WF_CHECK_END_CODE;
    return rec->state_after == rec->end_code ? 0 : WF_CHECK_STATE;
}

int wf_check_contract(const walk_record *rec, uint32_t options, int32_t *index) {
    *index = -1;
    int rc = check_codes(rec);
    if (rc != 0) return rc;
    if (rec->overflow) {
        *index = (int32_t)rec->count;
        return WF_CHECK_FRAME_LIMIT;
    }
    for (uint32_t i = 0; i < rec->count; i++) {
        rc = check_frame(&rec->frames[i], options);
        if (rc == 0 && i > 0) rc = check_order(&rec->frames[i - 1], &rec->frames[i]);
        if (rc != 0) {
            *index = (int32_t)i;
            return rc;
        }
    }
    if (rec->count > 0 && rec->frames[rec->count - 1].type == ASGST_FRAME_JAVA_INLINED) {
        *index = (int32_t)rec->count - 1;
        return WF_CHECK_INLINED; /* walk ended inside a compiled frame's scopes */
    }
    return 0;
}

int wf_same_frame(const ASGST_Frame *a, const ASGST_Frame *b) {
    return a->type == b->type && a->comp_level == b->comp_level && a->bci == b->bci &&
           a->method == b->method && a->pc == b->pc && a->sp == b->sp && a->fp == b->fp;
}

int wf_check_oracle(const walk_record *got, int want_run, int want_end, const ASGST_Frame *want,
                    uint32_t want_count, int32_t *index) {
    *index = -1;
    if (got->run_result != want_run) return WF_CHECK_ORACLE_RESULT;
    uint32_t n = got->count < want_count ? got->count : want_count;
    for (uint32_t i = 0; i < n; i++)
        if (!wf_same_frame(&got->frames[i], &want[i])) {
            *index = (int32_t)i;
            return WF_CHECK_ORACLE_FRAME;
        }
    if (got->count != want_count) {
        *index = (int32_t)n;
        return WF_CHECK_ORACLE_FRAME;
    }
    if (got->end_code != want_end) {
        *index = (int32_t)n;
        return WF_CHECK_ORACLE_END;
    }
    return 0;
}
