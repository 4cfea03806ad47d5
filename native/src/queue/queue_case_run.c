/* queue_case_run.c — run a case's queue program (section 9) against the mapped case and log
 * every op result and handler call (docs/case-format.md §7).
 *
 * The log is what fuzz/targets/minivm/queue/model.py predicts. Besides logging, the executor keeps
 * its own count of enqueue attempts per queue and checks GetQueueSizeInfo against it after every
 * enqueue, so a bookkeeping bug shows up in C as a violation without a model; for a walker with
 * wf_queue_get_counters it counts every counter the same way and compares them after the last
 * op.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "case/case_queue.h"
#include "wf_queue.h"
#include "wf_ucontext.h"
#include "wf_vm.h"
#include "wf_walker.h"

#define NO_ITERATOR 2 /* handler event code: the handler got no iterator */
#define COMPRESSED 2  /* COMPRESS result: the last element's arg was bumped */

typedef struct registration {
    struct executor *x;
    int32_t index;
} registration;

typedef struct executor {
    const wf_walker *w; /* every queue and walk call goes through its table */
    wf_queue_result *r;
    const wf_queue_op *ops;
    uint32_t count;
    ASGST_Queue *handles[WF_QUEUE_MAX_REGISTRATIONS];
    registration regs[WF_QUEUE_MAX_REGISTRATIONS];
    uint32_t registrations;
    /* the running (outermost) safepoint */
    int in_safepoint;
    int32_t safepoint_op;
    uint32_t elements_seen, inner_at, inner_begin, inner_count;
    /* shadow bookkeeping */
    int live[WF_QUEUE_MAX_REGISTRATIONS], was_live[WF_QUEUE_MAX_REGISTRATIONS];
    uintptr_t alias_base[WF_QUEUE_MAX_REGISTRATIONS]; /* what an ALIAS of it adds its offset to */
    uint32_t attempts[WF_QUEUE_MAX_REGISTRATIONS];
    wf_queue_counters counters[WF_QUEUE_MAX_REGISTRATIONS]; /* what wf_queue_get_counters owes */
    int counted[WF_QUEUE_MAX_REGISTRATIONS]; /* compared already (at its end: its slot may be
                                                reused after) */
    int filled; /* a FILL ran: RegisterQueue may now hand out any freed slot again */
    /* POKE undo log */
    uint64_t undo_addr[WF_QUEUE_MAX_OPS], undo_old[WF_QUEUE_MAX_OPS];
    uint32_t undo_count;
    /* the thread record before the first THREAD op */
    struct wf_vm_thread thread_before;
    int thread_changed;
} executor;

static executor X;
static ASGST_Queue *fillers[WF_QUEUE_FILL_MAX]; /* FILL's queues, until it deregisters them */
static char foreign_env; /* a non-NULL JNIEnv of no thread the walker knows */

wf_queue_result *wf_queue_result_new(void) {
    wf_queue_result *r = calloc(1, sizeof *r);
    if (r == NULL) return NULL;
    r->events = calloc(WF_QUEUE_MAX_EVENTS, sizeof *r->events);
    r->frames = calloc(WF_QUEUE_MAX_LOGGED_FRAMES, sizeof *r->frames);
    if (r->events == NULL || r->frames == NULL) {
        wf_queue_result_free(r);
        return NULL;
    }
    return r;
}

void wf_queue_result_free(wf_queue_result *r) {
    if (r == NULL) return;
    free(r->events);
    free(r->frames);
    free(r);
}

/* ---- the log ----------------------------------------------------------------------------- */

static wf_queue_event *log_event(executor *x, int kind, int32_t op, int32_t queue, int32_t code) {
    wf_queue_result *r = x->r;
    static wf_queue_event sink; /* where events go once the log is full */
    if (r->event_count >= WF_QUEUE_MAX_EVENTS) {
        r->status = -2;
        return &sink;
    }
    wf_queue_event *e = &r->events[r->event_count++];
    *e = (wf_queue_event){
        .kind = kind, .op = op, .queue = queue, .code = code, .frame_begin = r->frame_count};
    return e;
}

static void log_walk(executor *x, wf_queue_event *e, ASGST_Iterator *it) {
    wf_queue_result *r = x->r;
    if (it == NULL) {
        e->code = NO_ITERATOR;
        return;
    }
    ASGST_Frame f;
    int rc = 1;
    e->frame_begin = r->frame_count;
    while (e->frame_count < WF_QUEUE_WALK_MAX_FRAMES && (rc = x->w->next_frame(it, &f)) == 1) {
        if (r->frame_count >= WF_QUEUE_MAX_LOGGED_FRAMES) {
            r->status = -2;
            break;
        }
        r->frames[r->frame_count++] = f;
        e->frame_count++;
    }
    e->code = rc;
    e->state = x->w->state(it);
}

static void set_size_info(const executor *x, wf_queue_event *e, ASGST_Queue *q) {
    ASGST_QueueSizeInfo info = x->w->get_queue_size_info(q);
    e->size = info.size;
    e->capacity = info.capacity;
    e->attempts = info.attempts;
}

static void set_element(wf_queue_event *e, const ASGST_QueueElement *el) {
    if (el == NULL) return;
    e->pc = (uintptr_t)el->pc;
    e->sp = (uintptr_t)el->sp;
    e->fp = (uintptr_t)el->fp;
    e->arg = (uintptr_t)el->arg;
}

static void violation(executor *x, int32_t op, const char *what, long long got, long long want) {
    wf_queue_result *r = x->r;
    if (r->violations == 0) r->violation_op = op;
    if (r->violations++ == 0)
        snprintf(r->violation, sizeof r->violation, "op %d: %s is %lld, the executor counted %lld",
                 op, what, got, want);
}

/* ---- handlers ---------------------------------------------------------------------------- */

static void run_ops(executor *x, uint32_t begin, uint32_t end);

static void on_element(ASGST_Iterator *it, void *queue_arg, void *arg) {
    registration *reg = queue_arg;
    executor *x = reg->x;
    wf_queue_event *e = log_event(x, WF_QEV_ELEMENT, x->safepoint_op, reg->index, 0);
    set_element(e, x->w->get_queue_element(x->handles[reg->index], 0));
    e->arg = (uintptr_t)arg;
    log_walk(x, e, it);
    wf_queue_counters *want = &x->counters[reg->index];
    want->processed++;
    if (e->code == ASGST_WF_FRAME_GONE && e->frame_count == 0) want->gone++;
    if (x->inner_count > 0 && x->elements_seen == x->inner_at)
        run_ops(x, x->inner_begin, x->inner_begin + x->inner_count);
    x->elements_seen++;
}

static void on_hook(int kind, ASGST_Iterator *it, void *arg) {
    registration *reg = arg;
    log_walk(reg->x, log_event(reg->x, kind, reg->x->safepoint_op, reg->index, 0), it);
}

static void on_start(ASGST_Queue *q, ASGST_Iterator *it, void *arg) {
    on_hook(WF_QEV_START, it, arg);
}
static void on_end(ASGST_Queue *q, ASGST_Iterator *it, void *arg) { on_hook(WF_QEV_END, it, arg); }

/* ---- ops --------------------------------------------------------------------------------- */

static ASGST_Queue *handle(executor *x, uint8_t index) {
    return index < x->registrations ? x->handles[index] : NULL;
}

_Static_assert(sizeof(ucontext_t) <= WF_QUEUE_CONTEXT_SIZE, "WF_QUEUE_CONTEXT_SIZE too small");

void wf_queue_make_context(void *buf, uint64_t pc, uint64_t sp, uint64_t fp) {
    ucontext_t *uc = buf;
    memset(uc, 0, sizeof *uc);
    wf_uc_set_frame(uc, pc, sp, fp);
}

static void make_context(ucontext_t *uc, const wf_queue_op *op) {
    wf_queue_make_context(uc, op->pc, op->sp, op->fp);
}

/* An Enqueue on a live queue, in the counters wf_queue_get_counters keeps. */
static void count_result(wf_queue_counters *c, int rc) {
    c->attempts++;
    if (rc == ASGST_JAVA_TRACE) c->enqueued++;
    else if (rc == ASGST_ENQUEUE_FULL_QUEUE) c->full++;
    else if (rc == ASGST_ENQUEUE_OTHER_ERROR) c->other++;
    else c->walk_failed++;
}

/* Enqueue with the executor's own attempt count checked against the queue's. */
static int counted_enqueue(executor *x, int32_t i, const wf_queue_op *op, ucontext_t *uc,
                           void *arg) {
    ASGST_Queue *q = handle(x, op->queue);
    int rc = x->w->enqueue(q, uc, arg);
    if (q != NULL && op->queue < x->registrations && x->live[op->queue]) {
        count_result(&x->counters[op->queue], rc);
        uint32_t want = ++x->attempts[op->queue];
        ASGST_QueueSizeInfo info = x->w->get_queue_size_info(q);
        if ((uint32_t)info.attempts != want)
            violation(x, i, "attempts after an enqueue", info.attempts, want);
    }
    return rc;
}

/* The compression pattern of shared/reference/001: same top frame as the youngest element ->
   bump its arg (a hit count) instead of enqueueing. */
static int compress(executor *x, int32_t i, const wf_queue_op *op) {
    ucontext_t uc;
    ASGST_QueueElement el;
    make_context(&uc, op);
    int rc = x->w->get_enqueuable_element(&uc, &el);
    if (rc != 1) return rc; /* not enqueuable: a failed sample */
    ASGST_QueueElement *last = x->w->get_queue_element(handle(x, op->queue), -1);
    if (last != NULL && last->pc == el.pc && last->sp == el.sp && last->fp == el.fp) {
        last->arg = (void *)((uintptr_t)last->arg + 1);
        return COMPRESSED;
    }
    return counted_enqueue(x, i, op, &uc, (void *)1);
}

/* The next registration index gets handle h (NULL: the registration failed). */
static int add_registration(executor *x, ASGST_Queue *h, int live) {
    uint32_t idx = x->registrations - 1; /* taken by the caller, before the call it made */
    x->handles[idx] = h;
    x->live[idx] = x->was_live[idx] = live && h != NULL;
    x->alias_base[idx] = (uintptr_t)h;
    x->attempts[idx] = 0;
    return h != NULL;
}

static registration *next_registration(executor *x) {
    uint32_t idx = x->registrations++;
    x->regs[idx] = (registration){x, (int32_t)idx};
    return &x->regs[idx];
}

static int do_register(executor *x, const wf_queue_op *op) {
    registration *reg = next_registration(x);
    return add_registration(x, x->w->register_queue(NULL, op->n, (int)op->options, on_element, reg),
                            1);
}

/* FILL's handler: its queues hold nothing and are gone before the next op. */
static void on_filler(ASGST_Iterator *i, void *q, void *a) { (void)i, (void)q, (void)a; }

/* A handle is no queue after its queue ended only until RegisterQueue hands its slot out again,
   which a pool walker does once a FILL has taken every slot: from then on an ended queue's
   handle becomes NULL, which means "no queue" just the same (the log does not change). */
static void forget_if_dead(executor *x, uint32_t q) {
    if (x->filled && x->was_live[q] && !x->live[q]) x->handles[q] = NULL;
}

/* As many size-0 queues as RegisterQueue gives (at most WF_QUEUE_FILL_MAX), each deregistered
   again before the next op: the pool's full path, then the program goes on as before. */
static int do_fill(executor *x, int32_t i) {
    int n = 0;
    x->filled = 1;
    for (uint32_t q = 0; q < x->registrations; q++) forget_if_dead(x, q);
    while (n < WF_QUEUE_FILL_MAX &&
           (fillers[n] = x->w->register_queue(NULL, 0, 0, on_filler, NULL)) != NULL)
        n++;
    for (int k = 0; k < n; k++) /* oldest first: a walker keeping a list finds each near its head */
        if (x->w->deregister_queue(NULL, fillers[k]) != 1)
            violation(x, i, "DeregisterQueue of a FILL queue", 0, 1);
    return n;
}

/* A registration whose handle is another's plus a misaligned offset: never a queue. An alias
   of an alias adds to the same base (two offsets could add up to 0). */
static int do_alias(executor *x, const wf_queue_op *op) {
    uintptr_t base = op->queue < x->registrations ? x->alias_base[op->queue] : 0;
    next_registration(x);
    add_registration(x, (ASGST_Queue *)(base + (uintptr_t)(intptr_t)op->n), 0);
    x->alias_base[x->registrations - 1] = base;
    return 0;
}

static int do_misuse(executor *x, int32_t i, const wf_queue_op *op) {
    ASGST_Queue *q = handle(x, op->queue);
    ucontext_t uc;
    switch (op->which) { /* a registering kind takes its index before the call */
    case WF_MISUSE_REGISTER_ENV:
        return add_registration(
            x, x->w->register_queue(&foreign_env, 1, 0, on_element, next_registration(x)), 1);
    case WF_MISUSE_REGISTER_NO_FUN:
        return add_registration(x, x->w->register_queue(NULL, 1, 0, NULL, next_registration(x)), 1);
    case WF_MISUSE_DEREGISTER_ENV: {
        int rc = x->w->deregister_queue(&foreign_env, q);
        if (rc == 1 && op->queue < x->registrations) x->live[op->queue] = 0;
        return rc;
    }
    case WF_MISUSE_NO_ELEMENT:
        wf_queue_make_context(&uc, 0, 0, 0);
        return x->w->get_enqueuable_element(&uc, NULL);
    default: return counted_enqueue(x, i, op, NULL, NULL);
    }
}

static int do_handler(executor *x, const wf_queue_op *op) {
    ASGST_Queue *q = handle(x, op->queue);
    void *arg = op->queue < x->registrations ? &x->regs[op->queue] : NULL;
    ASGST_OnQueueSafepointHandler fun = op->mode == 0 ? NULL : op->which == 0 ? on_start : on_end;
    if (op->which == 0)
        x->w->set_on_queue_processing_start(q, (int)op->options, op->mode == 2, fun, arg);
    else x->w->set_on_queue_processing_end(q, (int)op->options, op->mode == 2, fun, arg);
    return 0;
}

static int do_safepoint(executor *x, int32_t i, const wf_queue_op *op) {
    if (x->in_safepoint) return x->w->queue_safepoint(op->sp, op->fp, op->pc); /* nested: -1 */
    x->in_safepoint = 1;
    x->safepoint_op = i;
    x->elements_seen = 0;
    x->inner_at = op->inner_at;
    x->inner_begin = (uint32_t)i + 1;
    x->inner_count = op->inner_count;
    int rc = x->w->queue_safepoint(op->sp, op->fp, op->pc);
    x->in_safepoint = 0;
    x->inner_count = 0;
    for (uint32_t q = 0; q < x->registrations; q++) {
        x->attempts[q] = 0;
        if (x->live[q]) x->counters[q].safepoints++; /* the set a safepoint ran is fixed */
    }
    return rc;
}

/* Elements a DeregisterQueue or thread exit of live queue q drops. */
static uint64_t held(const executor *x, uint32_t q) {
    int32_t size = x->w->get_queue_size_info(x->handles[q]).size;
    return size > 0 ? (uint64_t)size : 0;
}

static int do_poke(executor *x, const wf_queue_op *op) {
    uint64_t *word = (uint64_t *)(uintptr_t)op->pc; /* checked by the decoder */
    x->undo_addr[x->undo_count] = op->pc;
    x->undo_old[x->undo_count++] = *word;
    *word = op->arg;
    return 0;
}

static int do_thread(executor *x, const wf_queue_op *op) {
    struct wf_vm_thread *t = (struct wf_vm_thread *)(uintptr_t)WF_VM_THREAD;
    if (!x->thread_changed) x->thread_before = *t;
    x->thread_changed = 1;
    t->state = op->which;
    t->flags = op->mode;
    t->anchor = (struct wf_vm_anchor){.sp = op->sp, .fp = op->fp, .pc = op->pc};
    return 0;
}

/* wf_queue_get_counters of registration q against the executor's counts (zeros for a handle
   that never was a queue), once: when the queue ends (a deregistered pool slot may be reused
   later) or after the last op. */
static void check_counters(executor *x, int32_t i, uint32_t q) {
    static const char *const NAMES[] = {"attempts", "enqueued",    "full",
                                        "other",    "walk_failed", "processed",
                                        "gone",     "dropped",     "safepoints"};
    _Static_assert(sizeof(wf_queue_counters) == sizeof NAMES / sizeof NAMES[0] * 8,
                   "a counter without a name");
    if (x->w->queue_counters == NULL || x->counted[q]) return;
    x->counted[q] = 1;
    wf_queue_counters got;
    x->w->queue_counters(x->handles[q], &got);
    const uint64_t *g = (const uint64_t *)&got, *want = (const uint64_t *)&x->counters[q];
    for (size_t k = 0; k < sizeof NAMES / sizeof NAMES[0]; k++) {
        if (g[k] == want[k]) continue;
        char what[64];
        snprintf(what, sizeof what, "queue %u's counter %s", q, NAMES[k]);
        violation(x, i, what, (long long)g[k], (long long)want[k]);
        return;
    }
}

static int do_deregister(executor *x, int32_t i, const wf_queue_op *op) {
    int live = op->queue < x->registrations && x->live[op->queue];
    uint64_t dropped = live ? held(x, op->queue) : 0;
    int rc = x->w->deregister_queue(NULL, handle(x, op->queue));
    if (rc == 1 && live) {
        x->live[op->queue] = 0;
        x->counters[op->queue].dropped += dropped;
        check_counters(x, i, op->queue);
        forget_if_dead(x, op->queue);
    }
    return rc;
}

static int do_thread_exit(executor *x, int32_t i) {
    uint64_t dropped[WF_QUEUE_MAX_REGISTRATIONS];
    for (uint32_t q = 0; q < x->registrations; q++) dropped[q] = x->live[q] ? held(x, q) : 0;
    int rc = x->w->queue_thread_exit();
    if (rc >= 0)
        for (uint32_t q = 0; q < x->registrations; q++) {
            if (!x->live[q]) continue;
            x->counters[q].dropped += dropped[q];
            x->live[q] = 0;
            check_counters(x, i, q);
            forget_if_dead(x, q);
        }
    return rc;
}

static int run_op(executor *x, int32_t i, const wf_queue_op *op) {
    ucontext_t uc;
    ASGST_QueueElement *el;
    switch (op->code) {
    case WF_QOP_REGISTER: return do_register(x, op);
    case WF_QOP_DEREGISTER: return do_deregister(x, i, op);
    case WF_QOP_ENQUEUE:
        make_context(&uc, op);
        return counted_enqueue(x, i, op, &uc, (void *)(uintptr_t)op->arg);
    case WF_QOP_SET_ARG:
        el = x->w->get_queue_element(handle(x, op->queue), op->n);
        if (el != NULL) el->arg = (void *)(uintptr_t)op->arg;
        return el != NULL;
    case WF_QOP_COMPRESS: return compress(x, i, op);
    case WF_QOP_RESIZE: x->w->resize_queue(handle(x, op->queue), op->n); return 0;
    case WF_QOP_SIZE_INFO: return x->w->get_queue_size_info(handle(x, op->queue)).size;
    case WF_QOP_HANDLER: return do_handler(x, op);
    case WF_QOP_SAFEPOINT: return do_safepoint(x, i, op);
    case WF_QOP_THREAD_EXIT: return do_thread_exit(x, i);
    case WF_QOP_THREAD: return do_thread(x, op);
    case WF_QOP_FILL: return do_fill(x, i);
    case WF_QOP_ALIAS: return do_alias(x, op);
    case WF_QOP_MISUSE: return do_misuse(x, i, op);
    default: return do_poke(x, op);
    }
}

/* The registration an op's log event names: the one it made, its operand, or -1. */
static int32_t logged_queue(const executor *x, const wf_queue_op *op) {
    if (wf_queue_op_registers(op)) return (int32_t)x->registrations - 1;
    if (op->code == WF_QOP_MISUSE) return op->which == WF_MISUSE_NO_ELEMENT ? -1 : op->queue;
    return op->code == WF_QOP_SAFEPOINT || op->code == WF_QOP_THREAD_EXIT ||
                   op->code == WF_QOP_POKE || op->code == WF_QOP_THREAD || op->code == WF_QOP_FILL
               ? -1
               : op->queue;
}

/* Ops [begin, end); a SAFEPOINT's inner block runs inside it, not after it. */
static void run_ops(executor *x, uint32_t begin, uint32_t end) {
    for (uint32_t i = begin; i < end; i++) {
        const wf_queue_op *op = &x->ops[i];
        int rc = run_op(x, (int32_t)i, op);
        int32_t q = logged_queue(x, op);
        wf_queue_event *e = log_event(x, WF_QEV_OP, (int32_t)i, q, rc);
        if (q >= 0) set_size_info(x, e, handle(x, (uint8_t)q));
        if (op->code == WF_QOP_SAFEPOINT) i += op->inner_count;
    }
}

static void log_pending(executor *x) {
    for (uint32_t q = 0; q < x->registrations; q++) {
        ASGST_QueueElement *el;
        for (int n = 0; (el = x->w->get_queue_element(x->handles[q], n)) != NULL; n++)
            set_element(log_event(x, WF_QEV_PENDING, (int32_t)x->count, (int32_t)q, n), el);
    }
}

void wf_case_queue_undo(void) {
    executor *x = &X;
    while (x->undo_count > 0) { /* the stack as decoded, for the next run */
        x->undo_count--;
        *(uint64_t *)(uintptr_t)x->undo_addr[x->undo_count] = x->undo_old[x->undo_count];
    }
    if (x->thread_changed) *(struct wf_vm_thread *)(uintptr_t)WF_VM_THREAD = x->thread_before;
    x->thread_changed = 0;
}

int wf_case_queue_run(wf_queue_result *r) {
    return wf_case_queue_run_walker(wf_walker_reference(), r);
}

int wf_case_queue_run_walker(const wf_walker *w, wf_queue_result *r) {
    executor *x = &X;
    uint32_t count;
    const wf_queue_op *ops = wf_case_queue_ops(&count);
    memset(x, 0, sizeof *x);
    x->w = w;
    x->r = r;
    x->ops = ops;
    x->count = count;
    r->status = 0;
    r->event_count = r->frame_count = r->violations = 0;
    r->violation[0] = 0;
    if (count == 0 || !wf_vm_is_mapped()) return r->status = -1;
    w->queue_thread_reset();
    run_ops(x, 0, count);
    log_pending(x);
    for (uint32_t q = 0; q < x->registrations; q++) check_counters(x, (int32_t)count - 1, q);
    w->queue_thread_reset();
    wf_case_queue_undo();
    return r->status;
}
