/* queue_gen.c — the queue harness's program generator (wf_queue_fuzz.h): bytes -> a queue
 * program over the physical frames the generator laid out, so that most enqueues and
 * safepoints name real frames (the truth oracle applies to them) and coverage feedback can
 * reach full queues, resizes inside handlers, compression and the like without luck. */
#include <string.h>

#include "gen/gen_provider.h"
#include "queue_fuzz.h"
#include "wf_gen.h"
#include "wf_vm.h"

#define POOL_MAX 64        /* physical frames an op may name */
#define SMALL_QUEUE 5      /* sizes 0..5: full queues are common */
#define MAX_INNER 3        /* ops inside one handler */
#define ARG_ENQUEUE 0x1000 /* enqueue args: ARG_ENQUEUE + op index (tells elements apart) */
#define ARG_SET 0x2000     /* SET_ARG args: ARG_SET + op index */

typedef struct gen {
    gen_provider p;
    int wild;
    uint32_t frames;
    wf_gen_frame pool[POOL_MAX]; /* top first */
    uint32_t registrations;
    uint32_t options; /* the case's walk options */
    const struct wf_vm_thread *thread;
} gen;

/* ---- operands ---------------------------------------------------------------------------- */

static uint8_t queue_operand(gen *g) {
    uint32_t n = g->registrations + (g->wild ? 1 : 0); /* wild: one past the last: NULL */
    return (uint8_t)(n == 0 ? 0 : provider_byte(&g->p) % n);
}

static int32_t queue_size(gen *g) {
    if (g->wild && provider_chance(&g->p, 16))
        return provider_chance(&g->p, 128) ? -1 : WF_QUEUE_MAX_CAPACITY + 1;
    return (int32_t)provider_range(&g->p, 0, SMALL_QUEUE);
}

/* A register context mutated like the registers harness does: a small offset, a bit flip,
   misalignment or another frame's value. */
static uint64_t wild_value(gen *g, uint64_t v) {
    switch (provider_byte(&g->p) % 4) {
    case 0: return v + 8 * (provider_range(&g->p, 0, 8) - 4);
    case 1: return v ^ (1ULL << provider_range(&g->p, 0, 47));
    case 2: return v + provider_range(&g->p, 1, 7);
    default: return g->pool[provider_byte(&g->p) % g->frames].sp;
    }
}

/* Mostly the top frames: that is where samples land. */
static const wf_gen_frame *some_frame(gen *g) {
    uint32_t b = provider_byte(&g->p);
    return &g->pool[(b < 128 ? b % 2 : b) % g->frames];
}

static void frame_operand(gen *g, wf_queue_op *op) {
    const wf_gen_frame *f = some_frame(g);
    op->pc = f->pc;
    op->sp = f->sp;
    op->fp = f->fp;
    if (!g->wild || !provider_chance(&g->p, 48)) return;
    switch (provider_byte(&g->p) % 3) {
    case 0: op->pc = wild_value(g, op->pc); break;
    case 1: op->sp = wild_value(g, op->sp); break;
    default: op->fp = wild_value(g, op->fp); break;
    }
}

/* An aligned word of the stack near a frame (its slots: return pc, saved fp, bcp, method),
   changed the way a running thread or a stray write would. */
static void poke(gen *g, wf_queue_op *op) {
    const wf_gen_frame *f = some_frame(g);
    uint64_t base = provider_chance(&g->p, 128) ? f->fp : f->sp;
    uint64_t addr = (base & ~7ULL) + 8 * (provider_range(&g->p, 0, 5) - 2);
    const struct wf_vm_thread *t = g->thread;
    if (addr < t->stack_lo || addr > t->stack_hi - 8) addr = t->stack_hi - 8;
    uint64_t old = *(const uint64_t *)(uintptr_t)addr;
    op->code = WF_QOP_POKE;
    op->pc = addr;
    op->arg = provider_chance(&g->p, 128) ? old ^ (1ULL << provider_range(&g->p, 0, 11))
                                          : g->pool[provider_byte(&g->p) % g->frames].pc;
}

/* ---- ops --------------------------------------------------------------------------------- */

enum {
    PICK_REGISTER,
    PICK_ENQUEUE,
    PICK_COMPRESS,
    PICK_SET_ARG,
    PICK_RESIZE,
    PICK_SIZE_INFO,
    PICK_HANDLER,
    PICK_SAFEPOINT,
    PICK_DEREGISTER,
    PICK_THREAD_EXIT,
    PICK_POKE,
    PICK_MISC /* the rare calls: FILL, ALIAS, MISUSE */
};

/* Weights out of 32: enqueues and safepoints dominate, thread exit is rare. */
static int pick(gen *g) {
    static const uint8_t TABLE[32] = {
        PICK_REGISTER,  PICK_REGISTER,   PICK_ENQUEUE,     PICK_ENQUEUE,   PICK_ENQUEUE,
        PICK_ENQUEUE,   PICK_ENQUEUE,    PICK_ENQUEUE,     PICK_ENQUEUE,   PICK_ENQUEUE,
        PICK_ENQUEUE,   PICK_ENQUEUE,    PICK_COMPRESS,    PICK_COMPRESS,  PICK_SET_ARG,
        PICK_SET_ARG,   PICK_RESIZE,     PICK_RESIZE,      PICK_SIZE_INFO, PICK_HANDLER,
        PICK_HANDLER,   PICK_SAFEPOINT,  PICK_SAFEPOINT,   PICK_SAFEPOINT, PICK_SAFEPOINT,
        PICK_SAFEPOINT, PICK_DEREGISTER, PICK_THREAD_EXIT, PICK_POKE,      PICK_POKE,
        PICK_POKE,      PICK_MISC,
    };
    int k = TABLE[provider_byte(&g->p) % 32];
    if (k == PICK_REGISTER && g->registrations >= WF_QUEUE_FUZZ_MAX_REGISTRATIONS) k = PICK_ENQUEUE;
    if (k == PICK_POKE && !g->wild) k = PICK_ENQUEUE;
    return k;
}

/* A handle that is no queue: misaligned, inside a pool slot or a megabyte off. */
static int32_t alias_offset(gen *g) {
    int32_t small = (int32_t)provider_range(&g->p, 1, 7);
    switch (provider_byte(&g->p) % 3) {
    case 0: return small;
    case 1: return (1 << 20) + small;
    default: return -(1 << 20) - small;
    }
}

/* FILL registers a thousand queues: rare, it costs as much as a hundred other ops. */
static void misc_op(gen *g, wf_queue_op *op) {
    int can_register = g->registrations < WF_QUEUE_FUZZ_MAX_REGISTRATIONS;
    uint32_t b = provider_byte(&g->p);
    if (b < 16) {
        op->code = WF_QOP_FILL;
        return;
    }
    op->queue = queue_operand(g);
    if (b < 96 && can_register) {
        op->code = WF_QOP_ALIAS;
        op->n = alias_offset(g);
        g->registrations++;
        return;
    }
    op->code = WF_QOP_MISUSE;
    op->which = (uint8_t)(provider_byte(&g->p) % WF_QUEUE_MISUSE_KINDS);
    if (wf_queue_op_registers(op)) {
        if (can_register) g->registrations++;
        else op->which = WF_MISUSE_NO_CONTEXT;
    }
}

/* One op; *inner gets the size of the handler block a SAFEPOINT opens (room: ops left). */
static void make_op(gen *g, wf_queue_op *op, uint32_t index, int allow_inner, uint32_t room,
                    uint32_t *inner) {
    memset(op, 0, sizeof *op);
    *inner = 0;
    switch (pick(g)) {
    case PICK_REGISTER:
        op->code = WF_QOP_REGISTER;
        op->n = queue_size(g);
        op->options = provider_chance(&g->p, 200) ? g->options : provider_range(&g->p, 0, 3);
        g->registrations++;
        return;
    case PICK_ENQUEUE:
        op->code = WF_QOP_ENQUEUE;
        op->queue = queue_operand(g);
        op->arg = ARG_ENQUEUE + index;
        frame_operand(g, op);
        return;
    case PICK_COMPRESS:
        op->code = WF_QOP_COMPRESS;
        op->queue = queue_operand(g);
        frame_operand(g, op);
        return;
    case PICK_SET_ARG:
        op->code = WF_QOP_SET_ARG;
        op->queue = queue_operand(g);
        op->n = (int32_t)provider_range(&g->p, 0, 2 * SMALL_QUEUE + 2) - SMALL_QUEUE - 1;
        op->arg = ARG_SET + index;
        return;
    case PICK_RESIZE:
        op->code = WF_QOP_RESIZE;
        op->queue = queue_operand(g);
        op->n = queue_size(g);
        return;
    case PICK_SIZE_INFO:
        op->code = WF_QOP_SIZE_INFO;
        op->queue = queue_operand(g);
        return;
    case PICK_HANDLER:
        op->code = WF_QOP_HANDLER;
        op->queue = queue_operand(g);
        op->which = (uint8_t)(provider_byte(&g->p) % 2);
        op->mode = (uint8_t)(provider_byte(&g->p) % 3);
        op->options = provider_chance(&g->p, 200) ? g->options : provider_range(&g->p, 0, 3);
        return;
    case PICK_SAFEPOINT: {
        const wf_gen_frame *f = provider_chance(&g->p, 160) ? &g->pool[0] : some_frame(g);
        op->code = WF_QOP_SAFEPOINT;
        op->pc = f->pc;
        op->sp = f->sp;
        op->fp = f->fp;
        if (allow_inner && room > 0 && provider_chance(&g->p, 64)) {
            op->inner_count =
                (uint16_t)provider_range(&g->p, 1, room < MAX_INNER ? room : MAX_INNER);
            op->inner_at = (uint16_t)provider_range(&g->p, 0, 2);
            *inner = op->inner_count;
        }
        return;
    }
    case PICK_DEREGISTER:
        op->code = WF_QOP_DEREGISTER;
        op->queue = queue_operand(g);
        return;
    case PICK_THREAD_EXIT:
        op->code = provider_chance(&g->p, 64) ? WF_QOP_THREAD_EXIT : WF_QOP_SIZE_INFO;
        return;
    case PICK_MISC: misc_op(g, op); return;
    default: poke(g, op); return;
    }
}

static void collect_frames(gen *g) {
    g->frames = 0;
    uint32_t n = wf_gen_layout_count();
    for (uint32_t i = 0; i < n && g->frames < POOL_MAX; i++)
        if (wf_gen_layout_frame(i, &g->pool[g->frames]) == 0) g->frames++;
    if (g->frames == 0) { /* no layout: the top of the stack stands for one */
        g->pool[0] = (wf_gen_frame){WF_FRAME_C, g->thread->stack_hi - 64, g->thread->stack_hi - 32,
                                    WF_VM_NATIVE_TEXT};
        g->frames = 1;
    }
}

uint32_t wf_queue_gen_program(const wf_case *c, const uint8_t *data, size_t len, int wild,
                              wf_queue_op *ops) {
    gen g = {.wild = wild,
             .options = c->options,
             .thread = (const struct wf_vm_thread *)(uintptr_t)WF_VM_THREAD};
    provider_bytes(&g.p, data, len);
    collect_frames(&g);
    uint32_t want = (uint32_t)provider_range(&g.p, 4, WF_QUEUE_FUZZ_MAX_OPS - 1), n = 0;
    uint32_t inner_left = 0;
    ops[n++] = (wf_queue_op){.code = WF_QOP_REGISTER,
                             .n = (int32_t)provider_range(&g.p, 0, SMALL_QUEUE),
                             .options = g.options};
    g.registrations = 1;
    while (n < want && (inner_left > 0 || !provider_exhausted(&g.p))) {
        uint32_t inner;
        make_op(&g, &ops[n], n, inner_left == 0, want - n - 1, &inner);
        n++;
        inner_left = inner > 0 ? inner : inner_left > 0 ? inner_left - 1 : 0;
    }
    /* End with a poll at the top frame, so every element is walked. */
    ops[n++] = (wf_queue_op){
        .code = WF_QOP_SAFEPOINT, .pc = g.pool[0].pc, .sp = g.pool[0].sp, .fp = g.pool[0].fp};
    return n;
}
