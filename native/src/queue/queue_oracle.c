/* queue_oracle.c — the queue harness's checks (wf_queue_fuzz.h), run on the executor's log
 * (wf_case_queue.h) after the program: a shadow of every queue (live, capacity, the elements
 * it must hold in insertion order with their args) is replayed from the op results, and each
 * logged size info, handler call and element walk is compared with it and with the case's
 * true trace. Everything the calls return is in the log, so no check runs inside the guard.
 */
#include <string.h>

#include "queue_fuzz.h"
#include "run/run_walk_record.h"

#define NO_ITERATOR 2 /* handler event code: the handler got no iterator */
#define COMPRESSED 2  /* COMPRESS result: the last element's arg was bumped */
#define CUT 1         /* handler event code: the walk was cut at the frame limit */

typedef struct entry {
    int32_t op; /* the op that enqueued it */
    uint64_t arg;
    int32_t truth_top; /* index of its top frame in the case's truth, -1 unknown */
} entry;

typedef struct shadow {
    int live;
    int32_t capacity, pending_capacity;   /* pending: -1 none */
    uint32_t options;                     /* of the element iterators */
    uint32_t hook_options[2];             /* of the start / end handler's iterator */
    uint32_t head, count;                 /* entries[head .. head+count) are queued */
    entry entries[WF_QUEUE_FUZZ_MAX_OPS]; /* one push per op at most */
    int has_current;                      /* the element being handled (index 0) */
    entry current;
    uint32_t pending_seen; /* PENDING events of the end of the log */
} shadow;

typedef struct oracle {
    const wf_case *c;
    const wf_queue_op *ops;
    uint32_t count;
    const wf_queue_result *log;
    wf_run_result *r;
    shadow q[WF_QUEUE_FUZZ_MAX_REGISTRATIONS];
    uint8_t inner[WF_QUEUE_FUZZ_MAX_OPS]; /* op runs inside a handler */
    int poked;                            /* the stack changed: the truth is off */
    int exited;                           /* THREAD_EXIT ran: RegisterQueue refuses */
    uint32_t registrations;               /* made so far (shadowed: the first ones) */
    uint32_t processed;                   /* elements of the running safepoint */
} oracle;

static int failed(const oracle *o) { return o->r->finding != WF_FINDING_NONE; }

static void fail(oracle *o, int finding, int check, int32_t op) {
    if (failed(o)) return;
    o->r->finding = finding;
    o->r->check = check;
    o->r->queue_op = op;
}

static shadow *queue_of(oracle *o, int32_t index) {
    return index >= 0 && index < WF_QUEUE_FUZZ_MAX_REGISTRATIONS ? &o->q[index] : NULL;
}

/* ---- codes ------------------------------------------------------------------------------- */

static int walk_error(int code) {
    return (code >= ASGST_NO_TOP_JAVA_FRAME && code <= ASGST_NO_THREAD) ||
           (code >= ASGST_WF_BAD_ARGUMENT && code <= ASGST_WF_BAD_PC);
}

static int enqueue_code(int code) {
    return code == ASGST_JAVA_TRACE || walk_error(code) || code == ASGST_ENQUEUE_NO_QUEUE ||
           code == ASGST_ENQUEUE_FULL_QUEUE || code == ASGST_ENQUEUE_OTHER_ERROR;
}

/* ---- walks ------------------------------------------------------------------------------- */

static const ASGST_Frame *frames_of(const oracle *o, const wf_queue_event *e) {
    return &o->log->frames[e->frame_begin];
}

static void note_walk(oracle *o, const wf_queue_event *e, int32_t index) {
    walk_record rec = {.count = e->frame_count, .frames = (ASGST_Frame *)frames_of(o, e)};
    wf_run_result *r = o->r;
    r->run_result = ASGST_JAVA_TRACE;
    r->end_code = e->code;
    r->frames = e->frame_count;
    r->diff_index = index;
    if (index >= 0 && (uint32_t)index < e->frame_count) r->got = frames_of(o, e)[index];
    wf_fill_shape(r, &rec, index);
}

/* asgst.h's rules for a handler's walk; FRAME_GONE only for an element, and before any frame. */
static void check_walk_contract(oracle *o, const wf_queue_event *e, uint32_t options, int element) {
    if (e->code == ASGST_WF_FRAME_GONE && element && e->frame_count == 0) return;
    walk_record rec = {.run_result = ASGST_JAVA_TRACE,
                       .end_code = e->code,
                       .state_after = e->code,
                       .handler_called = 1,
                       .overflow = e->code == CUT,
                       .count = e->frame_count,
                       .cap = WF_QUEUE_WALK_MAX_FRAMES,
                       .frames = (ASGST_Frame *)frames_of(o, e)};
    if (e->code == CUT) rec.end_code = rec.state_after = ASGST_NO_FRAME;
    int32_t index;
    int check = wf_check_contract(&rec, options, &index);
    if (check == WF_CHECK_NONE) return;
    fail(o, WF_FINDING_CONTRACT, check, e->op);
    note_walk(o, e, index);
}

/* The element's walk against the truth: its top frame and every caller, or FRAME_GONE if
   the top frame was above the poll's frame. */
static void check_walk_truth(oracle *o, const wf_queue_event *e, const entry *en) {
    const wf_case *c = o->c;
    const ASGST_Frame *top = &c->truth[en->truth_top];
    const ASGST_Frame *got = frames_of(o, e);
    wf_run_result *r = o->r;
    if (e->code == ASGST_WF_FRAME_GONE && e->frame_count == 0) {
        if ((uint64_t)(uintptr_t)top->sp >= o->ops[e->op].sp) {
            fail(o, WF_FINDING_INVALID_TRACE, WF_CHECK_QUEUE_TRUTH, e->op);
            note_walk(o, e, 0);
            r->want = *top;
        }
        return;
    }
    walk_record rec = {.run_result = ASGST_JAVA_TRACE,
                       .end_code = e->code,
                       .handler_called = 1,
                       .count = e->frame_count,
                       .frames = (ASGST_Frame *)got};
    int32_t index;
    uint32_t want_count = c->truth_count - (uint32_t)en->truth_top;
    int check = wf_check_oracle(&rec, ASGST_JAVA_TRACE, c->truth_end_code, top, want_count, &index);
    int same_element =
        (uintptr_t)top->pc == e->pc && (uintptr_t)top->sp == e->sp && (uintptr_t)top->fp == e->fp;
    if (check == WF_CHECK_NONE && same_element) return;
    fail(o, WF_FINDING_INVALID_TRACE, WF_CHECK_QUEUE_TRUTH, e->op);
    note_walk(o, e, index < 0 ? 0 : index);
    r->oracle = WF_ORACLE_TRUTH;
    r->want_run_result = ASGST_JAVA_TRACE;
    r->want_end_code = c->truth_end_code;
    r->want_frames = want_count;
    if (index >= 0 && (uint32_t)index < want_count) r->want = top[index];
}

/* ---- the truth of an enqueue -------------------------------------------------------------- */

static int state_walks_anchor(uint32_t state) {
    return state == WF_THREAD_IN_VM || state == WF_THREAD_IN_NATIVE || state == WF_THREAD_BLOCKED;
}

/* Index in the truth of the top Java frame an Enqueue from op's context finds, or -1 when
   the truth does not say (a context that is no true frame, a thread with no Java walk). */
static int32_t truth_top(const oracle *o, const wf_queue_op *op) {
    const wf_case *c = o->c;
    const struct wf_vm_thread *t = (const struct wf_vm_thread *)(uintptr_t)WF_VM_THREAD;
    if (!c->has_truth || c->truth_run_result != ASGST_JAVA_TRACE) return -1;
    uint32_t i = 0;
    if (t->state == WF_THREAD_IN_JAVA) {
        while (i < c->truth_count &&
               !((uintptr_t)c->truth[i].sp == op->sp && (uintptr_t)c->truth[i].pc == op->pc &&
                 (uintptr_t)c->truth[i].fp == op->fp))
            i++;
    } else if (!state_walks_anchor(t->state)) {
        return -1;
    }
    for (; i < c->truth_count; i++)
        if (c->truth[i].type == ASGST_FRAME_JAVA || c->truth[i].type == ASGST_FRAME_JAVA_INLINED)
            return (int32_t)i;
    return -1;
}

/* ---- op results -------------------------------------------------------------------------- */

static uint32_t held(const shadow *s) { return s->count + (s->has_current ? 1 : 0); }

/* The i-th element GetQueueElement sees (current first), or NULL. */
static entry *element_at(shadow *s, int32_t n) {
    int64_t size = held(s), i = n < 0 ? size + n : n;
    if (i < 0 || i >= size) return NULL;
    if (s->has_current) {
        if (i == 0) return &s->current;
        i--;
    }
    return &s->entries[s->head + (uint64_t)i];
}

static void push(oracle *o, shadow *s, int32_t op, uint64_t arg) {
    if (s->count >= (uint32_t)s->capacity || held(s) >= (uint32_t)s->capacity) {
        fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_BOOKKEEPING, op); /* enqueued past full */
        return;
    }
    s->entries[s->head + s->count++] = (entry){op, arg, truth_top(o, &o->ops[op])};
}

static void clear_current(oracle *o) {
    for (int i = 0; i < WF_QUEUE_FUZZ_MAX_REGISTRATIONS; i++) o->q[i].has_current = 0;
}

static int valid_size(int32_t n) { return n >= 0 && n <= WF_QUEUE_MAX_CAPACITY; }

static void on_register(oracle *o, const wf_queue_event *e, const wf_queue_op *op) {
    shadow *s = queue_of(o, e->queue);
    if (e->code != 0 && e->code != 1)
        return fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_CODE, e->op);
    if (e->code == 1 && (o->inner[e->op] || !valid_size(op->n)))
        return fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_CODE, e->op);
    if (e->code == 1 && s != NULL)
        *s = (shadow){.live = 1, .capacity = op->n, .pending_capacity = -1, .options = op->options};
}

static void on_enqueue(oracle *o, const wf_queue_event *e, const wf_queue_op *op, shadow *s) {
    int code = e->code;
    int compressed = op->code == WF_QOP_COMPRESS && code == COMPRESSED;
    if (!enqueue_code(code) && !compressed)
        return fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_CODE, e->op);
    if (s == NULL || !s->live) {
        if (code == ASGST_JAVA_TRACE || compressed)
            fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_BOOKKEEPING, e->op);
        else if (op->code == WF_QOP_ENQUEUE && code != ASGST_ENQUEUE_NO_QUEUE)
            fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_CODE, e->op);
        return;
    }
    if (compressed) {
        entry *last = element_at(s, -1);
        if (last == NULL) return fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_BOOKKEEPING, e->op);
        last->arg++;
        return;
    }
    if (o->inner[e->op] && code == ASGST_JAVA_TRACE) /* asgst.h: rejected in a safepoint */
        return fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_CODE, e->op);
    if (code == ASGST_ENQUEUE_FULL_QUEUE && held(s) < (uint32_t)s->capacity)
        return fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_BOOKKEEPING, e->op);
    if (code == ASGST_JAVA_TRACE) push(o, s, e->op, op->code == WF_QOP_COMPRESS ? 1 : op->arg);
}

static void on_set_arg(oracle *o, const wf_queue_event *e, const wf_queue_op *op, shadow *s) {
    entry *el = s != NULL && s->live ? element_at(s, op->n) : NULL;
    if (e->code != (el != NULL))
        return fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_BOOKKEEPING, e->op);
    if (el != NULL) el->arg = op->arg;
}

static void on_safepoint(oracle *o, const wf_queue_event *e) {
    if (o->inner[e->op]) { /* a poll inside a handler does nothing */
        if (e->code != -1) fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_CODE, e->op);
        return;
    }
    clear_current(o);
    if (e->code != (int32_t)o->processed) fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_CODE, e->op);
    o->processed = 0;
    for (int i = 0; i < WF_QUEUE_FUZZ_MAX_REGISTRATIONS; i++) {
        shadow *s = &o->q[i];
        if (!s->live) continue;
        if (s->count != 0) fail(o, WF_FINDING_INVALID_TRACE, WF_CHECK_QUEUE_ORDER, e->op);
        s->head += s->count; /* lost elements: reported above */
        s->count = 0;
        if (s->pending_capacity >= 0) s->capacity = s->pending_capacity;
        s->pending_capacity = -1;
    }
}

static void drop_all(oracle *o) {
    for (int i = 0; i < WF_QUEUE_FUZZ_MAX_REGISTRATIONS; i++) o->q[i].live = 0;
}

static uint32_t live_queues(const oracle *o) {
    uint32_t n = 0;
    for (int i = 0; i < WF_QUEUE_FUZZ_MAX_REGISTRATIONS; i++) n += (uint32_t)o->q[i].live;
    return n;
}

/* FILL takes every slot of the pool the program's live queues leave (asgst.h: at most
   WF_QUEUE_MAX_QUEUES live queues), none inside a safepoint or after thread exit. */
static void on_fill(oracle *o, const wf_queue_event *e) {
    if (o->registrations > WF_QUEUE_FUZZ_MAX_REGISTRATIONS) return; /* live ones not all known */
    int32_t want = o->inner[e->op] || o->exited ? 0 : WF_QUEUE_MAX_QUEUES - (int32_t)live_queues(o);
    if (e->code != want) fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_BOOKKEEPING, e->op);
}

static void on_misuse(oracle *o, const wf_queue_event *e, const wf_queue_op *op, shadow *s) {
    switch (op->which) {
    case WF_MISUSE_NO_ELEMENT:
        if (e->code != ASGST_WF_BAD_ARGUMENT)
            fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_CODE, e->op);
        return;
    case WF_MISUSE_NO_CONTEXT: { /* the thread's own context: from its anchor if not in Java */
        const struct wf_vm_thread *t = (const struct wf_vm_thread *)(uintptr_t)WF_VM_THREAD;
        if ((s == NULL || !s->live) && e->code != ASGST_ENQUEUE_NO_QUEUE)
            return fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_CODE, e->op);
        if (e->code == ASGST_JAVA_TRACE && !state_walks_anchor(t->state))
            return fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_CODE, e->op);
        on_enqueue(o, e, op, s); /* the anchor's top Java frame, as an ENQUEUE would get */
        return;
    }
    default: /* refused registrations and deregistration: 0, nothing changes */
        if (e->code != 0) fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_CODE, e->op);
    }
}

static void on_result(oracle *o, const wf_queue_event *e) {
    const wf_queue_op *op = &o->ops[e->op];
    shadow *s = queue_of(o, e->queue);
    int inner = o->inner[e->op];
    if (wf_queue_op_registers(op)) o->registrations++;
    switch (op->code) {
    case WF_QOP_REGISTER: on_register(o, e, op); break;
    case WF_QOP_DEREGISTER:
        if (e->code != ((s != NULL && s->live && !inner) ? 1 : 0))
            fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_BOOKKEEPING, e->op);
        if (s != NULL && e->code == 1) s->live = 0;
        break;
    case WF_QOP_ENQUEUE:
    case WF_QOP_COMPRESS: on_enqueue(o, e, op, s); break;
    case WF_QOP_SET_ARG: on_set_arg(o, e, op, s); break;
    case WF_QOP_RESIZE:
        if (s != NULL && s->live && valid_size(op->n)) s->pending_capacity = op->n;
        break;
    case WF_QOP_HANDLER:
        if (s != NULL && s->live) s->hook_options[op->which] = op->options;
        break;
    case WF_QOP_SAFEPOINT: on_safepoint(o, e); break;
    case WF_QOP_THREAD_EXIT:
        if (e->code != (inner ? -1 : (int32_t)live_queues(o)))
            fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_BOOKKEEPING, e->op);
        if (!inner) {
            drop_all(o);
            o->exited = 1;
        }
        break;
    case WF_QOP_FILL: on_fill(o, e); break;
    case WF_QOP_ALIAS:
        if (e->code != 0) fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_CODE, e->op);
        break;
    case WF_QOP_MISUSE: on_misuse(o, e, op, s); break;
    case WF_QOP_POKE: o->poked = 1; break;
    default: break; /* SIZE_INFO: the size check below */
    }
}

/* After every op on a queue: its size info as the shadow has it (zeros for a dead one). */
static void check_size_info(oracle *o, const wf_queue_event *e) {
    shadow *s = queue_of(o, e->queue);
    if (s == NULL) return;
    int32_t size = s->live ? (int32_t)held(s) : 0, capacity = s->live ? s->capacity : 0;
    int ok = e->size == size && e->capacity == capacity && e->attempts >= 0 &&
             (s->live || e->attempts == 0) &&
             (o->ops[e->op].code != WF_QOP_SIZE_INFO || e->code == size);
    if (!ok) fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_BOOKKEEPING, e->op);
}

/* ---- handler events ---------------------------------------------------------------------- */

static void on_element(oracle *o, const wf_queue_event *e) {
    shadow *s = queue_of(o, e->queue);
    clear_current(o);
    o->processed++;
    if (s == NULL || !s->live || s->count == 0) /* never enqueued, or handled twice */
        return fail(o, WF_FINDING_INVALID_TRACE, WF_CHECK_QUEUE_ORDER, e->op);
    entry en = s->entries[s->head++];
    s->count--;
    s->current = en;
    s->has_current = 1;
    if (e->arg != en.arg) return fail(o, WF_FINDING_INVALID_TRACE, WF_CHECK_QUEUE_ORDER, en.op);
    check_walk_contract(o, e, s->options, 1);
    int same_options = ((s->options ^ o->c->options) & ASGST_INCLUDE_NON_JAVA_FRAMES) == 0;
    if (!failed(o) && en.truth_top >= 0 && !o->poked && same_options) check_walk_truth(o, e, &en);
}

static void on_pending(oracle *o, const wf_queue_event *e) {
    shadow *s = queue_of(o, e->queue);
    if (s == NULL) return;
    entry *en = s->live ? element_at(s, (int32_t)s->pending_seen) : NULL;
    s->pending_seen++;
    if (en == NULL || en->arg != e->arg)
        fail(o, WF_FINDING_INVALID_TRACE, WF_CHECK_QUEUE_ORDER, en != NULL ? en->op : e->op);
}

static void check_pending_counts(oracle *o) {
    for (int i = 0; i < WF_QUEUE_FUZZ_MAX_REGISTRATIONS; i++) {
        const shadow *s = &o->q[i];
        if (s->live && s->pending_seen != s->count)
            fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_BOOKKEEPING, (int32_t)o->count - 1);
    }
}

static void mark_inner(oracle *o) {
    for (uint32_t i = 0; i < o->count; i++)
        for (uint32_t k = 1; k <= o->ops[i].inner_count && i + k < o->count; k++)
            if (o->ops[i].code == WF_QOP_SAFEPOINT) o->inner[i + k] = 1;
}

static oracle O; /* ~30 KB: static, the hot path does not grow the stack */

void wf_queue_oracle(const wf_case *c, const wf_queue_op *ops, uint32_t count,
                     const wf_queue_result *log, wf_run_result *r) {
    oracle *o = &O;
    memset(o, 0, sizeof *o);
    *o = (oracle){.c = c, .ops = ops, .count = count, .log = log, .r = r};
    if (log->status != 0 || count > WF_QUEUE_FUZZ_MAX_OPS) return; /* log cut: no verdict */
    mark_inner(o);
    for (uint32_t i = 0; i < log->event_count && !failed(o); i++) {
        const wf_queue_event *e = &log->events[i];
        switch (e->kind) {
        case WF_QEV_OP:
            on_result(o, e);
            if (!failed(o)) check_size_info(o, e);
            break;
        case WF_QEV_ELEMENT: on_element(o, e); break;
        case WF_QEV_START:
        case WF_QEV_END: {
            const shadow *s = queue_of(o, e->queue);
            clear_current(o);
            if (e->code != NO_ITERATOR && s != NULL)
                check_walk_contract(o, e, s->hook_options[e->kind == WF_QEV_END], 0);
            break;
        }
        default: on_pending(o, e); break;
        }
    }
    if (!failed(o)) check_pending_counts(o);
    if (!failed(o) && log->violations > 0) /* the executor's attempts count */
        fail(o, WF_FINDING_CONTRACT, WF_CHECK_QUEUE_BOOKKEEPING, log->violation_op);
}
