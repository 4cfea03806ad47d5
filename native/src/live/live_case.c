/* live_case.c — a live stress capture as a case file (wf_live_capture.h).
 *
 * The live VM lives at the fixed addresses a synthetic case is mapped at, so classes, methods,
 * blobs and pc descriptors are encoded straight from its tables, and method and class handles
 * stay valid. Only the stack moves: the image [lo, top) of the live stack (top = where the
 * copy ends, the live stack top unless the bound cut it) is placed so that top becomes
 * WF_VM_STACK_TOP, and every word, register and anchor that points into the live stack is
 * moved by the same delta. Code bytes: every blob that a register, an anchor or a stack word
 * points into goes into section 10, so a walker that reads the instruction at a frame's pc
 * reads what it read live.
 *
 * Queue mode (source ELEMENT): the image holds the stack at the signal (and, below the
 * signal's sp, the stack at the safepoint); section 9 replays the sample:
 *   REGISTER, ENQUEUE (the registers at the signal), a POKE per word that differs at the
 *   safepoint, THREAD (state, flags and anchor at the safepoint), SAFEPOINT (its frame)
 * and the first element handler's walk is what EXPECTED is for.
 */
#include <string.h>

#include "case/case_encode.h"
#include "live_case.h"
#include "vm/vm_image.h"
#include "wf_run.h"

_Static_assert(WF_CASE_MAX_EXPECTED >= WF_LIVE_SHADOW_MAX,
               "every expected trace of a live snapshot fits an EXPECTED section");
_Static_assert(WF_LIVE_DEEP_STACK == WF_VM_STACK_SIZE, "a deep capture fits a case's stack");

#define IMAGE_MAX WF_VM_STACK_SIZE /* an image never spans more than a case's stack */
#define RUN_MAX 2048 /* the longest repeat looked for in a deep image: a few recursion levels */
#define QUEUE_OPS_FIXED 5 /* REGISTER, ENQUEUE, THREAD, SAFEPOINT, and one spare */

static uint8_t image[IMAGE_MAX];
static wf_queue_op ops[WF_QUEUE_MAX_OPS];
static wf_case_expected expected;
static wf_code_patch patches[WF_CASE_MAX_CODE_PATCHES];
static uint8_t blob_used[WF_VM_MAX_BLOBS];

struct layout {
    uint64_t lo, top;          /* live addresses of the image */
    uint64_t live_lo, live_hi; /* the live stack */
    uint64_t delta;            /* case address = live address + delta (mod 2^64) */
};

static struct layout laid; /* the image's place (wf_live_case_lay_out) */

static uint64_t reloc(const struct layout *l, uint64_t v) {
    return v >= l->live_lo && v <= l->live_hi ? v + l->delta : v;
}

static uint64_t *word(const struct layout *l, uint64_t live) {
    return (uint64_t *)(void *)(image + (live - l->lo));
}

/* s's bytes (in the ring entry, or in the worker's deep buffer) that fall into [from, to) of
   the image. */
static void place(const struct layout *l, const struct wf_live_stack_capture *s,
                  const struct wf_live_worker *w, uint64_t from, uint64_t to) {
    const uint8_t *bytes = s->deep > 0 ? w->deep_stack[s->deep - 1] : s->stack;
    uint64_t b = s->r.base > from ? s->r.base : from;
    uint64_t e = s->r.base + s->r.bytes < to ? s->r.base + s->r.bytes : to;
    if (b < e) memcpy(image + (b - l->lo), bytes + (b - s->r.base), e - b);
}

/* The image: the worker's C top (copied once when it started), under it the stack at the
   signal, and below the signal's sp the stack at the safepoint; a gap the bound left is 0. */
static struct layout lay_out(const struct wf_live_capture *c, const struct wf_live_worker *w) {
    const struct wf_live_regs *sig = &c->signal.r;
    struct layout l = {.lo = sig->base,
                       .top = sig->base + sig->bytes,
                       .live_lo = sig->stack_lo,
                       .live_hi = sig->stack_hi};
    int c_top = w->c_top != NULL && w->c_base >= sig->base;
    if (c_top) l.top = sig->stack_hi;
    if (c->source == WF_EXPECTED_ELEMENT && c->safepoint.r.base < l.lo) l.lo = c->safepoint.r.base;
    if (l.top - l.lo > IMAGE_MAX) l.lo = l.top - IMAGE_MAX;
    l.delta = WF_VM_STACK_TOP - l.top;
    memset(image, 0, l.top - l.lo);
    if (c_top) memcpy(image + (w->c_base - l.lo), w->c_top, w->c_top_bytes);
    if (c->source == WF_EXPECTED_ELEMENT) place(&l, &c->safepoint, w, l.lo, sig->base);
    place(&l, &c->signal, w, sig->base, l.top);
    for (uint64_t a = l.lo; a < l.top; a += 8) *word(&l, a) = reloc(&l, *word(&l, a));
    return l;
}

/* ---- code bytes ------------------------------------------------------------------------ */

static void mark_code(uint64_t v) {
    const struct wf_vm *vm = WF_VM;
    if (v < WF_VM_CODE_HEAP || v >= WF_VM_CODE_HEAP + WF_VM_CODE_HEAP_SIZE) return;
    uint32_t lo = 0, hi = vm->blob_count;
    while (lo < hi) { /* blobs are sorted by start */
        uint32_t mid = lo + (hi - lo) / 2;
        if (v < vm->blobs[mid].start) hi = mid;
        else if (v >= vm->blobs[mid].end) lo = mid + 1;
        else {
            blob_used[mid] = 1;
            return;
        }
    }
}

static uint32_t code_patches(void) {
    const struct wf_vm *vm = WF_VM;
    uint32_t n = 0;
    for (uint32_t i = 0; i < vm->blob_count && n < WF_CASE_MAX_CODE_PATCHES; i++)
        if (blob_used[i])
            patches[n++] = (wf_code_patch){(uint32_t)(vm->blobs[i].start - WF_VM_CODE_HEAP),
                                           (uint32_t)(vm->blobs[i].end - vm->blobs[i].start)};
    return n;
}

static void mark_regs(const struct wf_live_regs *r) {
    mark_code(r->pc);
    mark_code(r->anchor_pc);
}

/* ---- the queue program ------------------------------------------------------------------ */

static wf_queue_op frame_op(uint8_t code, uint64_t pc, uint64_t sp, uint64_t fp) {
    return (wf_queue_op){.code = code, .pc = pc, .sp = sp, .fp = fp};
}

/* Section 9 of a queue-mode capture; -1 if its POKEs do not fit. */
static int32_t queue_program(const struct wf_live_capture *c, const struct layout *l,
                             uint32_t *pokes) {
    const struct wf_live_regs *sig = &c->signal.r;
    uint32_t n = 0;
    ops[n++] = (wf_queue_op){.code = WF_QOP_REGISTER, .n = WF_LIVE_QUEUE_CAPACITY};
    ops[n++] = frame_op(WF_QOP_ENQUEUE, sig->pc, reloc(l, sig->sp), reloc(l, sig->fp));
    *pokes = 0;
    if (c->source != WF_EXPECTED_ELEMENT) return (int32_t)n;
    const struct wf_live_stack_capture *s = &c->safepoint;
    uint64_t end = s->r.base + s->r.bytes < l->top ? s->r.base + s->r.bytes : l->top;
    for (uint64_t a = s->r.base > l->lo ? s->r.base : l->lo; a < end; a += 8) {
        uint64_t now;
        memcpy(&now, s->stack + (a - s->r.base), 8);
        now = reloc(l, now);
        mark_code(now);
        if (now == *word(l, a)) continue;
        if (n + QUEUE_OPS_FIXED > WF_QUEUE_MAX_OPS) return -1;
        ops[n++] = (wf_queue_op){.code = WF_QOP_POKE, .pc = a + l->delta, .arg = now};
        (*pokes)++;
    }
    wf_queue_op thread =
        frame_op(WF_QOP_THREAD, s->r.anchor_pc, reloc(l, s->r.anchor_sp), reloc(l, s->r.anchor_fp));
    thread.which = (uint8_t)s->r.state;
    thread.mode = (uint8_t)s->r.flags;
    ops[n++] = thread;
    ops[n++] = frame_op(WF_QOP_SAFEPOINT, c->poll_pc, reloc(l, c->poll_sp), reloc(l, c->poll_fp));
    mark_regs(&s->r);
    mark_code(c->poll_pc);
    return (int32_t)n;
}

/* ---- the finding --------------------------------------------------------------------------- */

static void shape(wf_live_finding *info, const struct wf_live_capture *c) {
    uint32_t count = c->walked_count;
    uint32_t end =
        c->first_diff < 0 || (uint32_t)c->first_diff >= count ? count : (uint32_t)c->first_diff + 1;
    info->shape_len = 0;
    for (uint32_t i = 0; i < end; i++) {
        uint8_t k = wf_shape_kind_of(c->walked[i].type, c->walked[i].level);
        if (info->shape_len > 0 && info->shape[info->shape_len - 1] == k) continue;
        if (info->shape_len == WF_SHAPE_MAX) {
            memmove(info->shape, info->shape + 1, WF_SHAPE_MAX - 1);
            info->shape_len--;
        }
        info->shape[info->shape_len++] = k;
    }
}

static void describe(wf_live_finding *info, const struct wf_live_capture *c, int mode, int worker) {
    const struct wf_live_regs *sig = &c->signal.r;
    uint32_t dropped = sig->dropped;
    if (c->source == WF_EXPECTED_ELEMENT && c->safepoint.r.dropped > dropped)
        dropped = c->safepoint.r.dropped;
    *info = (wf_live_finding){.cls = c->cls,
                              .first_diff = c->first_diff,
                              .worker = worker,
                              .mode = (uint32_t)mode,
                              .source = c->source,
                              .window = c->window,
                              .t_ns = c->t_ns,
                              .run_result = c->run_result,
                              .end_code = c->run_result < 0 ? c->run_result : c->end,
                              .state_after = c->state_after,
                              .walked_count = c->walked_count,
                              .expected_count = c->expected_count,
                              .expected_end = c->expected_end,
                              .thread_state = sig->state,
                              .thread_flags = sig->flags,
                              .pc = sig->pc,
                              .sp = sig->sp,
                              .fp = sig->fp,
                              .stack_dropped = dropped};
    if (c->faulted) {
        info->fault_pc = c->fault.pc;
        info->fault_addr = c->fault.addr;
        info->fault_signo = c->fault.signo;
        info->fault_kind = c->fault.kind;
    }
    for (uint32_t k = 0; k < c->walked_count && k < WF_LIVE_FINDING_FRAMES; k++)
        info->walked[k] = c->walked[k];
    for (uint32_t k = 0; k < c->expected_count && k < WF_LIVE_FINDING_FRAMES; k++)
        info->expected[k] = c->expected[k];
    shape(info, c);
}

static void fill_expected(const struct wf_live_capture *c, int mode) {
    expected.mode = (uint8_t)mode;
    expected.source = (uint8_t)c->source;
    expected.window = (uint8_t)c->window;
    expected.end_code = c->expected_end;
    expected.count = c->expected_count;
    memcpy(expected.frames, c->expected, c->expected_count * sizeof expected.frames[0]);
}

void wf_live_case_lay_out(const struct wf_live_capture *c, const struct wf_live_worker *w) {
    laid = lay_out(c, w);
}

int64_t wf_live_case_encode(const struct wf_live_capture *c, int mode,
                            const struct wf_live_worker *w, wf_live_finding *info, uint8_t *out,
                            size_t cap) {
    describe(info, c, mode, w->index);
    memset(blob_used, 0, sizeof blob_used);
    const struct wf_live_regs *sig = &c->signal.r;
    struct layout l = laid;
    for (uint64_t a = l.lo; a < l.top; a += 8) mark_code(*word(&l, a));
    mark_regs(sig);
    uint32_t pokes = 0;
    int32_t queue_ops = c->source == WF_EXPECTED_WALK ? 0 : queue_program(c, &l, &pokes);
    if (queue_ops < 0) {
        info->status = WF_LIVE_CASE_TOO_MANY_POKES;
        return 0;
    }
    info->stack_bytes = (uint32_t)(l.top - l.lo);
    info->pokes = pokes;
    struct wf_vm_thread thread = {.state = sig->state,
                                  .flags = sig->flags,
                                  .anchor = {.sp = reloc(&l, sig->anchor_sp),
                                             .fp = reloc(&l, sig->anchor_fp),
                                             .pc = sig->anchor_pc}};
    wf_case context = {.pc = sig->pc,
                       .sp = reloc(&l, sig->sp),
                       .fp = reloc(&l, sig->fp),
                       .options = mode == WF_LIVE_MODE_THREAD ? 0 : ASGST_WALK_SAME_THREAD,
                       .entry = WF_ENTRY_UCONTEXT};
    wf_vm_stack_run run;
    if (c->signal.deep && wf_vm_stack_repeat_find(image, info->stack_bytes, RUN_MAX, &run)) {
        /* a recursion's levels alike: STACK with RUNS, a few hundred KiB less of case */
        context.run_offset = run.offset;
        context.run_size = run.size;
        context.run_times = run.times;
    }
    fill_expected(c, mode);
    wf_case_parts parts = {.thread = &thread,
                           .stack = image,
                           .stack_size = info->stack_bytes,
                           .c = &context,
                           .has_queue = queue_ops > 0,
                           .queue = ops,
                           .queue_count = (uint32_t)queue_ops,
                           .expected = &expected};
    parts.patch_count = code_patches();
    parts.patches = patches;
    return wf_case_encode_parts(&parts, out, cap);
}
