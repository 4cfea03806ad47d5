/* live_program.c — the live workload: methods and their programs, generated from a seed.
 *
 * Method 0 is the root every worker calls in a loop. Calls go from method i to methods j > i
 * only (a DAG), so the depth is bounded by the method count (plus native upcalls, which also
 * go to higher indexes). A cost model (spin iterations per call, callees included) keeps one
 * root call around WF_LIVE_ROOT_COST iterations whatever the shape.
 *
 * Program of a Java method (bci = 3 * instruction index):
 *   WORK a, [LOOP n, CALL j, [WORK], ENDLOOP], [CALL k], [WORK], RET
 *
 * The `calls` workload spins a few iterations per WORK only, so most of its time goes to
 * calls, prologues, epilogues and returns: the instructions where walkers go wrong.
 *
 * The `recursive` workload is the one exception to the DAG: compiled method 0 calls native
 * method 1, whose C body calls method 0 back (or method 2, compiled, which calls 0) while the
 * shadow stack is shallower than WF_LIVE_RECURSION_RECORDS, so one root call recurses past the
 * walker's depth limit (WF_WALK_MAX_DEPTH physical frames: the Java frames, N and an entry
 * frame a level, live_depth.c) and comes back down. Its C body spins only in the levels around the
 * limit, so most samples land there, below, at and above it.
 */
#include <string.h>

#include "asgst.h"
#include "wf_live.h"
#include "wf_live_vm.h"

#define ROOT_COST 60000.0 /* spin iterations per root call, roughly */
#define BCI_STRIDE 3

typedef struct rng {
    uint64_t s;
} rng;

static uint32_t next(rng *r, uint32_t bound) { /* splitmix64, uniform enough for shapes */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return bound ? (uint32_t)(z % bound) : 0;
}

struct shape {
    uint32_t methods;
    uint32_t pct_interpreted, pct_compiled; /* the rest native */
    uint32_t pct_upcall;                    /* native methods calling back into Java */
    uint32_t fanout;                        /* callees are i+1 .. i+fanout */
    uint32_t tiny_work;                     /* WORK spins 1..4 iterations, not 10..220 */
};

static const struct shape SHAPES[] = {
    [WF_LIVE_WORKLOAD_MIXED] = {32, 40, 40, 30, 4, 0},
    [WF_LIVE_WORKLOAD_INTERPRETED] = {24, 100, 0, 0, 3, 0},
    [WF_LIVE_WORKLOAD_COMPILED] = {24, 0, 100, 0, 3, 0},
    [WF_LIVE_WORKLOAD_NATIVE] = {32, 30, 30, 60, 3, 0},
    [WF_LIVE_WORKLOAD_DEEP] = {96, 45, 45, 30, 1, 0},
    [WF_LIVE_WORKLOAD_CALLS] = {32, 40, 40, 30, 3, 1},
};

/* Spin iterations of one WORK: `base` plus up to `spread`, or 1..4 in a calls workload. */
static uint32_t work_of(rng *r, const struct shape *s, uint32_t base, uint32_t spread) {
    return s->tiny_work ? 1 + next(r, 4) : base + next(r, spread);
}

static uint32_t pick_kind(rng *r, const struct shape *s, uint32_t i) {
    uint32_t p = next(r, 100);
    if (p < s->pct_interpreted) return WF_LIVE_INTERPRETED;
    if (p < s->pct_interpreted + s->pct_compiled || i == 0) return WF_LIVE_COMPILED;
    return WF_LIVE_NATIVE;
}

static void add(struct wf_live_method *m, uint8_t op, uint32_t a, uint64_t b) {
    struct wf_live_insn *in = &m->insns[m->insn_count];
    *in = (struct wf_live_insn){
        .op = op, .bci = (uint16_t)(BCI_STRIDE * m->insn_count), .a = a, .b = b};
    m->insn_count++;
}

/* A callee of method i, or NULL when i is the last one. */
static struct wf_live_method *callee(rng *r, struct wf_live_method *ms, uint32_t n,
                                     const struct shape *s, uint32_t i) {
    if (i + 1 >= n) return NULL;
    uint32_t span = n - 1 - i < s->fanout ? n - 1 - i : s->fanout;
    return &ms[i + 1 + next(r, span)];
}

/* Fill the program of Java method i; cost[] of higher methods is known. Returns its cost. */
static double java_program(rng *r, struct wf_live_method *ms, uint32_t n, const struct shape *s,
                           uint32_t i, const double *cost, double budget) {
    struct wf_live_method *m = &ms[i];
    uint32_t work = work_of(r, s, 20, 200);
    double c = work;
    add(m, WF_LIVE_OP_WORK, work, 0);
    struct wf_live_method *a = callee(r, ms, n, s, i);
    if (a != NULL && cost[a->index] * 2 < budget) {
        uint32_t times = 2 + next(r, 3);
        while (times > 1 && cost[a->index] * times > budget) times--;
        add(m, WF_LIVE_OP_LOOP, times, 0);
        const struct wf_live_insn *body = &m->insns[m->insn_count];
        add(m, WF_LIVE_OP_CALL, 0, (uintptr_t)a);
        uint32_t more = next(r, 2) ? work_of(r, s, 10, 60) : 0;
        if (more) add(m, WF_LIVE_OP_WORK, more, 0);
        add(m, WF_LIVE_OP_ENDLOOP, 0, (uintptr_t)body);
        c += times * (cost[a->index] + more);
    }
    struct wf_live_method *b = callee(r, ms, n, s, i);
    if (b != NULL && c + cost[b->index] < budget * 1.5) {
        add(m, WF_LIVE_OP_CALL, 0, (uintptr_t)b);
        c += cost[b->index];
    }
    uint32_t tail = next(r, 2) ? work_of(r, s, 10, 100) : 0;
    if (tail) add(m, WF_LIVE_OP_WORK, tail, 0);
    add(m, WF_LIVE_OP_RET, 0, 0);
    return c;
}

static double native_method(rng *r, struct wf_live_method *ms, uint32_t n, const struct shape *s,
                            uint32_t i, const double *cost, double budget) {
    struct wf_live_method *m = &ms[i];
    m->native_work = work_of(r, s, 50, 400);
    double c = m->native_work;
    struct wf_live_method *up = callee(r, ms, n, s, i);
    if (up != NULL && up->kind != WF_LIVE_NATIVE && next(r, 100) < s->pct_upcall &&
        cost[up->index] < budget) {
        m->upcall = up;
        c += cost[up->index];
    }
    add(m, WF_LIVE_OP_RET, 0, 0); /* code_size 1..: bci is always -1 anyway */
    return c;
}

/* Records from where the C body spins: about 1300 below the limit's level (7 physical frames
   per 5 records), so samples land below, at and above it. */
#define RECURSION_BUSY_FROM (WF_WALK_MAX_DEPTH * 5 / 7 - 1300)

/* A compiled method (no inlining): WORK, CALL callee, WORK, RET. */
static void java_caller(rng *r, struct wf_live_method *m, uint32_t index,
                        const struct wf_live_method *callee) {
    *m = (struct wf_live_method){.index = index,
                                 .kind = WF_LIVE_COMPILED,
                                 .comp_level = 1 + (int32_t)next(r, 4),
                                 .frame_size = 48 + 16 * next(r, 4)};
    m->shadow_type = ASGST_FRAME_JAVA | (uint32_t)(uint8_t)m->comp_level << 8;
    add(m, WF_LIVE_OP_WORK, 2 + next(r, 4), 0);
    add(m, WF_LIVE_OP_CALL, 0, (uintptr_t)callee);
    add(m, WF_LIVE_OP_WORK, 2 + next(r, 4), 0);
    add(m, WF_LIVE_OP_RET, 0, 0);
    m->program = m->insns;
}

/* The recursive workload (see the top): J (0) -> N (1) -> J, or -> K (2) -> J at every third
   depth, so a level is 3 or 4 physical frames and the frame at the limit is any of them. */
static uint32_t recursive_methods(struct wf_live_method *ms, uint64_t seed) {
    rng r = {seed * 0x2545F4914F6CDD1Dull + WF_LIVE_WORKLOAD_RECURSIVE};
    struct wf_live_method *j = &ms[0], *n = &ms[1], *k = &ms[2];
    java_caller(&r, j, 0, n);
    java_caller(&r, k, 2, j);
    *n =
        (struct wf_live_method){.index = 1,
                                .kind = WF_LIVE_NATIVE,
                                .frame_size = 48,
                                .native_work = 100 + next(&r, 100),
                                .upcall = j,
                                .upcall_alt = k,
                                .recurse_below = WF_LIVE_RECURSION_RECORDS,
                                .busy_from = RECURSION_BUSY_FROM,
                                .shadow_type = ASGST_FRAME_JAVA_NATIVE | (uint32_t)(uint8_t)-1 << 8,
                                .shadow_bci0 = -1};
    add(n, WF_LIVE_OP_RET, 0, 0);
    n->program = n->insns;
    return 3;
}

uint32_t wf_live_generate(struct wf_live_method *ms, uint32_t max, uint32_t workload,
                          uint64_t seed) {
    if (workload == WF_LIVE_WORKLOAD_RECURSIVE) return max >= 3 ? recursive_methods(ms, seed) : 0;
    if (workload >= sizeof SHAPES / sizeof SHAPES[0]) return 0;
    const struct shape *s = &SHAPES[workload];
    uint32_t n = s->methods < max ? s->methods : max;
    rng r = {seed * 0x2545F4914F6CDD1Dull + workload};
    memset(ms, 0, sizeof *ms * n);
    for (uint32_t i = 0; i < n; i++) {
        struct wf_live_method *m = &ms[i];
        m->index = i;
        m->kind = pick_kind(&r, s, i);
        m->comp_level = m->kind == WF_LIVE_COMPILED ? 1 + (int32_t)next(&r, 4) : 0;
        m->frame_size = 48 + 16 * next(&r, 4);
        m->inline_mask = m->kind == WF_LIVE_COMPILED ? next(&r, 1u << 12) : 0;
    }
    double cost[WF_LIVE_MAX_METHODS] = {0};
    for (uint32_t k = n; k-- > 0;) { /* callees first: their costs are known */
        /* deeper methods get smaller budgets, so the root's total stays near ROOT_COST */
        double budget = ROOT_COST / (1.0 + 0.5 * (double)k * 4.0 / (double)n);
        cost[k] = ms[k].kind == WF_LIVE_NATIVE ? native_method(&r, ms, n, s, k, cost, budget)
                                               : java_program(&r, ms, n, s, k, cost, budget);
    }
    for (uint32_t i = 0; i < n; i++) {
        struct wf_live_method *m = &ms[i];
        switch (m->kind) {
        case WF_LIVE_INTERPRETED: m->shadow_type = ASGST_FRAME_JAVA; break;
        case WF_LIVE_COMPILED:
            m->shadow_type = ASGST_FRAME_JAVA | (uint32_t)(uint8_t)m->comp_level << 8;
            break;
        default:
            m->shadow_type = ASGST_FRAME_JAVA_NATIVE | (uint32_t)(uint8_t)-1 << 8;
            m->shadow_bci0 = -1;
            break;
        }
        m->program = m->insns;
    }
    return n;
}
