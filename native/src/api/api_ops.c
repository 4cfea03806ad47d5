/* api_ops.c — the api harness's callback (wf_api_fuzz.h): the operations it runs on the walker's
 * iterator, the check of each result and the first failure recorded. */
#include <string.h>

#include "api_ops.h"
#include "run/run_walk_record.h"
#include "wf_vm.h"

/* ---- iterator ---------------------------------------------------------------------------- */

static void remember(uintptr_t *ring, uint32_t *count, uintptr_t handle) {
    if (handle == 0) return;
    ring[*count % API_SEEN_MAX] = handle;
    *count = *count + 1;
}

static void remember_method(api_exec *x, ASGST_Method method) {
    remember(x->methods, &x->method_count, (uintptr_t)method);
    const struct wf_vm_method *m = wf_vm_method_at((uintptr_t)method);
    if (m != NULL) remember(x->classes, &x->class_count, (uintptr_t)m->klass);
}

/* NextFrame with no iterator (ops after a Run* call that called no handler): an error code,
   the frame untouched (docs/case-format.md §4.5). */
static void op_next_null(level *lv) {
    ASGST_Frame f, before;
    memset(&f, API_FILL, sizeof f);
    memset(&before, API_FILL, sizeof before);
    int rc = lv->x->w->next_frame(NULL, &f);
    if (rc < 0 && memcmp(&f, &before, sizeof f) == 0) return;
    lv->x->r->end_code = rc;
    api_fail(lv, WF_CHECK_API_NEXT_FRAME, WF_FINDING_CONTRACT);
}

/* NextFrame: the expected walk's frame at pos, then its end code again and again, with
 *frame left as it was (asgst.h: sticky). */
static void op_next(level *lv) {
    api_exec *x = lv->x;
    if (lv->it == NULL) return op_next_null(lv);
    const api_expected *e = lv->want;
    ASGST_Frame f, before;
    memset(&f, API_FILL, sizeof f);
    memset(&before, API_FILL, sizeof before);
    int rc = x->w->next_frame(lv->it, &f);
    if (lv->pos < e->count) {
        const ASGST_Frame *want = &e->frames[lv->pos];
        if (rc == 1 && wf_same_frame(&f, want)) {
            lv->pos++;
            remember_method(x, f.method);
            return;
        }
        x->r->want = *want;
    } else if (rc == e->end && memcmp(&f, &before, sizeof f) == 0) {
        lv->ended = 1;
        return;
    }
    x->r->end_code = rc;
    x->r->diff_index = (int32_t)lv->pos;
    if (rc == 1) x->r->got = f;
    api_fail(lv, WF_CHECK_API_NEXT_FRAME, WF_FINDING_INVALID_TRACE);
}

static void op_state(level *lv) {
    int rc = lv->x->w->state(lv->it);
    int want = lv->it == NULL ? ASGST_NO_FRAME : lv->ended ? lv->want->end : 1;
    if (rc != want) {
        lv->x->r->state_after = rc;
        api_fail(lv, WF_CHECK_API_STATE, WF_FINDING_CONTRACT);
    }
}

static void op_rewind(level *lv) {
    lv->x->w->rewind_iterator(lv->it);
    lv->pos = 0;
    lv->ended = 0;
}

/* ---- info calls ------------------------------------------------------------------------- */

/* Not a handle of its table, mostly: NULL, a misaligned or out-of-range entry, the other
   table's entry, anywhere in the VM, anywhere at all. */
static uintptr_t arbitrary_handle(api_exec *x, uintptr_t table, uintptr_t stride, uintptr_t other) {
    gen_provider *p = &x->p;
    switch (provider_byte(p) % 6) {
    case 0: return 0;
    case 1: return table + stride * provider_range(p, 0, 63) + 8 * provider_range(p, 0, 7);
    case 2: return other + stride * provider_range(p, 0, 7);
    case 3: return WF_VM_ROOT + provider_range(p, 0, 0xfffff);
    case 4: return provider_u64(p) & 0x7ffffffffff8ULL;
    default: return table + provider_range(p, 0, 0xffff);
    }
}

/* A handle seen in this input (a frame's method, a method's class), else an entry of the
   table, or (wild inputs) an arbitrary one. */
static uintptr_t some_handle(api_exec *x, const uintptr_t *seen, uint32_t seen_count,
                             uintptr_t table, uintptr_t stride, uint32_t entries, uintptr_t other) {
    uint32_t b = provider_byte(&x->p);
    if (x->wild && b >= 160) return arbitrary_handle(x, table, stride, other);
    uint32_t n = seen_count < API_SEEN_MAX ? seen_count : API_SEEN_MAX;
    if (n > 0) return seen[b % n];
    return entries > 0 ? table + stride * (b % entries) : 0;
}

typedef struct name_call { /* one string of an info call */
    const char *want;
    uint32_t want_length;
    int32_t capacity;
    int null_buffer; /* the buffer passed is NULL: only the length comes back */
} name_call;

/* A capacity around the name's length: exact fit, one short, any, none, or a NULL buffer
   that claims room for the whole name. */
static void choose_capacity(api_exec *x, name_call *n, uint32_t len) {
    uint32_t b = provider_byte(&x->p);
    uint32_t cap;
    n->null_buffer = 0;
    switch (b & 3) {
    case 0: cap = len + 1; break;
    case 1: cap = len; break;
    case 2: cap = b >> 2; break;
    default:
        n->null_buffer = b >= 128;
        cap = n->null_buffer ? len + 1 : 0;
        break;
    }
    n->capacity = (int32_t)(cap > WF_API_NAME_CAP ? WF_API_NAME_CAP : cap);
}

/* Set up buffer i for the name: filled, capacity chosen. */
static void name_setup(api_exec *x, name_call *n, const char *want, uint32_t len, char **buffer,
                       int32_t *length, int i) {
    n->want = want;
    n->want_length = len;
    choose_capacity(x, n, len);
    memset(x->names[i], API_FILL, sizeof x->names[i]);
    *buffer = n->null_buffer ? NULL : x->names[i];
    *length = n->capacity;
}

/* 0 if the call kept to the buffer and told the truth: nothing written at or past the
   capacity, the full length, the name's first capacity-1 bytes and a NUL. */
static int name_check(const api_exec *x, const name_call *n, int32_t got_length, int i) {
    const uint8_t *b = (const uint8_t *)x->names[i];
    for (int32_t k = n->capacity; k < n->capacity + API_CANARY; k++)
        if (b[k] != API_FILL) return WF_CHECK_API_NAME_BUFFER;
    if (got_length != (int32_t)n->want_length) return -1;
    if (n->capacity == 0 || n->null_buffer) return 0;
    uint32_t keep = (uint32_t)n->capacity - 1;
    uint32_t len = n->want_length < keep ? n->want_length : keep;
    return memcmp(b, n->want, len) == 0 && b[len] == '\0' ? 0 : -1;
}

/* A method handle: one seen in the walk, a record's, or (wild inputs) any address. */
static uintptr_t some_method(api_exec *x) {
    return some_handle(x, x->methods, x->method_count, WF_VM_METHODS, WF_VM_METHOD_STRIDE,
                       WF_VM->method_count, WF_VM_CLASSES);
}

/* A class handle, chosen as some_method chooses a method handle. */
static uintptr_t some_class(api_exec *x) {
    return some_handle(x, x->classes, x->class_count, WF_VM_CLASSES, WF_VM_CLASS_STRIDE,
                       WF_VM->class_count, WF_VM_METHODS);
}

/* The check of the first of `count` name results that is wrong, or 0. */
static int names_check(const api_exec *x, const name_call *n, const int32_t *got, int count) {
    for (int i = 0; i < count; i++) {
        int check = name_check(x, &n[i], got[i], i);
        if (check != 0) return check;
    }
    return 0;
}

static void info_fail(level *lv, int check, int info_check, uintptr_t handle) {
    lv->x->r->got.method = (ASGST_Method)handle; /* the handle asked about, for the report */
    api_fail(lv, check < 0 ? info_check : check, WF_FINDING_CONTRACT);
}

static void op_method_info(level *lv) {
    api_exec *x = lv->x;
    uintptr_t h = some_method(x);
    const struct wf_vm_method *m = wf_vm_method_at(h);
    ASGST_MethodInfo info;
    name_call n[3];
    name_setup(x, &n[0], m ? m->name : "", m ? m->name_length : 0, &info.method_name,
               &info.method_name_length, 0);
    name_setup(x, &n[1], m ? m->signature : "", m ? m->signature_length : 0, &info.signature,
               &info.signature_length, 1);
    name_setup(x, &n[2], m ? m->generic_signature : "", m ? m->generic_signature_length : 0,
               &info.generic_signature, &info.generic_signature_length, 2);
    info.modifiers = -1;
    info.klass = (ASGST_Class)(uintptr_t)-1;
    x->w->get_method_info((ASGST_Method)h, &info);
    int32_t got[3] = {info.method_name_length, info.signature_length,
                      info.generic_signature_length};
    int check = names_check(x, n, got, 3);
    if (check != 0) return info_fail(lv, check, WF_CHECK_API_METHOD_INFO, h);
    if (info.modifiers != (m ? m->modifiers : 0) ||
        info.klass != (m ? (ASGST_Class)m->klass : NULL))
        return info_fail(lv, -1, WF_CHECK_API_METHOD_INFO, h);
    if (m != NULL) remember(x->classes, &x->class_count, (uintptr_t)info.klass);
}

static void op_class_info(level *lv) {
    api_exec *x = lv->x;
    uintptr_t h = some_class(x);
    const struct wf_vm_class *k = wf_vm_class_at(h);
    ASGST_ClassInfo info;
    name_call n[2];
    name_setup(x, &n[0], k ? k->name : "", k ? k->name_length : 0, &info.class_name,
               &info.class_name_length, 0);
    name_setup(x, &n[1], k ? k->generic_name : "", k ? k->generic_name_length : 0,
               &info.generic_class_name, &info.generic_class_name_length, 1);
    info.modifiers = -1;
    x->w->get_class_info((ASGST_Class)h, &info);
    int32_t got[2] = {info.class_name_length, info.generic_class_name_length};
    int check = names_check(x, n, got, 2);
    if (check != 0) return info_fail(lv, check, WF_CHECK_API_CLASS_INFO, h);
    if (info.modifiers != (k ? k->modifiers : 0)) info_fail(lv, -1, WF_CHECK_API_CLASS_INFO, h);
}

/* A NULL info pointer: nothing to fill; the call must return without touching memory (a fault
   is a crash finding of the guard). */
static void op_null_info(level *lv) {
    api_exec *x = lv->x;
    uintptr_t m = some_method(x);
    x->w->get_method_info((ASGST_Method)m, NULL);
    uintptr_t k = some_class(x);
    x->w->get_class_info((ASGST_Class)k, NULL);
}

/* ---- nested walks, process-wide calls ------------------------------------------------------ */

/* RunWithIteratorFromFrame at a frame of the expected walk (options the case's, or for wild
   inputs any), expected to walk as the in-core reference walker does from there. */
static void op_from_frame(level *lv) {
    api_exec *x = lv->x;
    uint32_t which = provider_byte(&x->p), b = provider_byte(&x->p);
    int32_t options = x->wild && b >= 128 ? (int32_t)(b & 3) : (int32_t)x->c->options;
    if (lv->want->count == 0 || lv->depth + 1 >= WF_API_FUZZ_MAX_DEPTH) return;
    const ASGST_Frame *f = &lv->want->frames[which % lv->want->count];
    ASGST_Frame *frames = x->sub[lv->depth + 1];
    int run, end;
    uint32_t count = wf_walk_from_frame(wf_walker_reference(), (uint64_t)(uintptr_t)f->sp,
                                        (uint64_t)(uintptr_t)f->fp, (uint64_t)(uintptr_t)f->pc,
                                        options, frames, API_SUB_CAP, &run, &end);
    if (count == API_SUB_CAP) return; /* the oracle stopped early: nothing to compare with */
    api_expected want = {frames, count, run, end};
    level child = {.x = x, .want = &want, .depth = lv->depth + 1};
    int rc = x->w->run_with_iterator_from_frame(f->sp, f->fp, f->pc, options, api_handler, &child);
    api_check_run(&child, rc);
}

/* The case's own Run* call again, inside this callback: a second iterator, the same walk. */
static void op_nested(level *lv) {
    if (lv->it == NULL || lv->depth + 1 >= WF_API_FUZZ_MAX_DEPTH) return;
    level child = {.x = lv->x, .want = &lv->x->truth, .depth = lv->depth + 1};
    api_check_run(&child, api_start_case(&child));
}

static void op_capabilities(level *lv) {
    api_exec *x = lv->x;
    int caps = x->w->capabilities();
    int defined = ASGST_REGISTER_QUEUE | ASGST_MARK_FRAME;
    int stable = x->caps == API_CAPS_UNSEEN || x->caps == caps;
    int queue = !x->w->has_queue || (caps & ASGST_REGISTER_QUEUE);
    if (x->caps == API_CAPS_UNSEEN) x->caps = caps;
    if ((caps & ~defined) != 0 || !stable || !queue) {
        x->r->run_result = caps;
        api_fail(lv, WF_CHECK_API_CAPABILITIES, WF_FINDING_CONTRACT);
    }
}

static void op_thread_state(level *lv) {
    int got = lv->x->w->thread_state(), want = wf_walker_reference()->thread_state();
    if (got != want) {
        lv->x->r->run_result = got;
        api_fail(lv, WF_CHECK_API_THREAD_STATE, WF_FINDING_CONTRACT);
        lv->x->r->want_run_result = want; /* the reference's answer, not the walk's */
    }
}

static void run_op(level *lv, int op) {
    switch (op) {
    case WF_API_NEXT: op_next(lv); break;
    case WF_API_NEXT_N: {
        uint32_t n = 1 + provider_byte(&lv->x->p) % 64;
        for (uint32_t i = 0; i < n && !lv->x->failed; i++) op_next(lv);
        break;
    }
    case WF_API_REWIND: op_rewind(lv); break;
    case WF_API_STATE: op_state(lv); break;
    case WF_API_METHOD_INFO: op_method_info(lv); break;
    case WF_API_CLASS_INFO: op_class_info(lv); break;
    case WF_API_FROM_FRAME: op_from_frame(lv); break;
    case WF_API_NESTED: op_nested(lv); break;
    case WF_API_CAPABILITIES: op_capabilities(lv); break;
    case WF_API_THREAD_STATE: op_thread_state(lv); break;
    case WF_API_NULL_INFO: op_null_info(lv); break;
    default: break;
    }
}

void api_fail(level *lv, int check, int finding) {
    api_exec *x = lv->x;
    if (x->failed) return; /* the first failure is the finding */
    x->failed = 1;
    x->r->finding = finding;
    x->r->check = check;
    x->r->queue_op = (int32_t)x->program_count - 1;
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
    while (!x->failed && x->program_count < WF_API_FUZZ_MAX_OPS && !provider_exhausted(&x->p)) {
        int op = (int)(provider_byte(&x->p) % WF_API_OP_COUNT);
        x->program[x->program_count] = op;
        x->program_count = x->program_count + 1;
        if (op == WF_API_RETURN) return;
        run_op(lv, op);
    }
}
