/* Perturbations: offset grids, bit flips, zero, random, non-canonical, page edges, pointers
 * into other stacks, the heap and code, glibc's signal trampoline with a fake signal frame,
 * values and pointers from the live stack, a pc in the middle of a known function.
 */
#define _GNU_SOURCE
#include <string.h>

#include "wf_uw_perturb.h"
#include "wf_ucontext.h"

/* Registers a selector picks: pc, sp and fp three times as often as the callee-saved ones
   the CFI may restore, and two scratch registers. */
static const wf_uc_reg SELECTABLE[16] = {
    WF_UC_PC, WF_UC_SP,  WF_UC_FP,  WF_UC_PC,  WF_UC_SP,  WF_UC_FP,  WF_UC_PC,  WF_UC_SP,
    WF_UC_FP, WF_UC_RBX, WF_UC_R12, WF_UC_R13, WF_UC_R14, WF_UC_R15, WF_UC_RAX, WF_UC_RDI,
};
#define SELECTABLE_COUNT 16

/* First address of the non-canonical hole and its size. */
#define NONCANONICAL_LOW 0x0000800000000000ull
#define NONCANONICAL_SPAN 0xffff000000000000ull
/* Words of the live stack above sp a STACK_VALUE may copy. */
#define STACK_VALUE_WORDS 64

static greg_t *reg(ucontext_t *uc, uint8_t selector) {
    return wf_uc_slot(uc, SELECTABLE[selector % SELECTABLE_COUNT]);
}

static uintptr_t page_edge(const wf_uw_perturb_env *env, uint64_t op) {
    const wf_uw_targets *t = env->targets;
    uintptr_t end = t->edge_page[(op >> 8) % WF_UW_EDGE_PAGES] + t->page_size;
    /* unaligned just below the edge, or one of the last 32 words */
    return (op >> 10) & 1 ? end - 1 - (op & 0xff) : end - 8 * ((op & 0x1f) + 1);
}

static uintptr_t stack_edge(const wf_uw_perturb_env *env, uint64_t op) {
    return (op >> 8) & 1 ? env->stack_hi - 8 - (op & 0x3ff) : env->stack_lo + (op & 0x3ff);
}

static uintptr_t other_stack(const wf_uw_perturb_env *env, uint64_t op) {
    const wf_uw_targets *t = env->targets;
    switch ((op >> 12) % 3) {
    case 0: return t->other_sp + 8 * (op & 0xff);
    case 1: return t->other_fp + 8 * (uintptr_t)(int8_t)op;
    default: return t->other_pc;
    }
}

static uintptr_t heap_pointer(const wf_uw_perturb_env *env, uint64_t op) {
    const wf_uw_targets *t = env->targets;
    uintptr_t offset = t->heap_size ? op % t->heap_size : 0;
    return t->heap + ((op >> 40) & 1 ? offset : offset & ~(uintptr_t)7);
}

static uintptr_t within(const wf_uw_range *r, uint64_t offset) {
    return r->start + offset % (r->end - r->start);
}

static uintptr_t code_pointer(const wf_uw_perturb_env *env, uint64_t op) {
    const wf_uw_targets *t = env->targets;
    switch ((op >> 16) % 3) {
    case 0: return within(&wf_uw_chain_ranges[(op >> 8) % WF_UW_CHAIN_FUNCTIONS], op & 0xff);
    case 1: return t->libc_code + (op & 0xfff);
    default: return t->unwind_code + (op & 0xfff);
    }
}

/* pc at the trampoline, sp at a fake signal frame: a copy of the captured context with one
   register nudged, as if the bottom had been interrupted by a signal whose handler returned. */
static void trampoline(ucontext_t *uc, const wf_uw_perturbation *p, const wf_uw_perturb_env *env) {
    uint64_t op = p->operand;
    memcpy(env->fake_frame, env->captured, sizeof *env->fake_frame);
    if ((op >> 20) & 1) *reg(env->fake_frame, p->reg_selector) += 8 * (greg_t)(int8_t)(op >> 24);
    wf_uc_set_pc(uc, env->targets->restore_rt + ((op >> 8) & 1 ? (op & 0xf) : 0));
    wf_uc_set_sp(uc, (uintptr_t)env->fake_frame);
}

/* Reads any word of the live stack above the captured sp, as a walker would: in the ASan
   build some are the redzones of instrumented frames, which this read must not report. */
__attribute__((no_sanitize("address"))) static uintptr_t stack_value(const wf_uw_perturb_env *env,
                                                                     uint64_t op) {
    uintptr_t slot = wf_uc_sp(env->captured) + 8 * (op % STACK_VALUE_WORDS);
    return slot + 8 <= env->stack_hi ? *(const uintptr_t *)slot : 0;
}

/* A pc anywhere inside a chain function (mid-prologue, mid-instruction) and a nearby sp. */
static void mid_function(ucontext_t *uc, uint64_t op) {
    const wf_uw_range *fn = &wf_uw_chain_ranges[(op >> 8) % WF_UW_CHAIN_FUNCTIONS];
    wf_uc_set_pc(uc, within(fn, op & 0xffff));
    *wf_uc_slot(uc, WF_UC_SP) += 8 * (greg_t)(int8_t)(op >> 24);
}

int wf_uw_perturb(ucontext_t *uc, const wf_uw_perturbation *p, const wf_uw_perturb_env *env) {
    greg_t *r = reg(uc, p->reg_selector);
    uint64_t op = p->operand;
    switch (p->kind % WF_UW_KINDS) {
    case WF_UW_K_NONE: return 0;
    case WF_UW_K_ADD_SMALL: *r += (int8_t)op; break;
    case WF_UW_K_ADD_GRID: *r += 8 * (greg_t)(int16_t)op; break;
    case WF_UW_K_BITFLIP: *r ^= (greg_t)(1ull << (op & 63)); break;
    case WF_UW_K_ZERO: *r = 0; break;
    case WF_UW_K_RANDOM: *r = (greg_t)op; break;
    case WF_UW_K_NONCANONICAL: *r = (greg_t)(NONCANONICAL_LOW + op % NONCANONICAL_SPAN); break;
    case WF_UW_K_PAGE_EDGE: *r = (greg_t)page_edge(env, op); break;
    case WF_UW_K_STACK_EDGE: *r = (greg_t)stack_edge(env, op); break;
    case WF_UW_K_OTHER_STACK: *r = (greg_t)other_stack(env, op); break;
    case WF_UW_K_HEAP: *r = (greg_t)heap_pointer(env, op); break;
    case WF_UW_K_CODE: *r = (greg_t)code_pointer(env, op); break;
    case WF_UW_K_TRAMPOLINE: trampoline(uc, p, env); break;
    case WF_UW_K_SWAP: *r = *wf_uc_slot(uc, SELECTABLE[op % SELECTABLE_COUNT]); break;
    case WF_UW_K_STACK_VALUE: *r = (greg_t)stack_value(env, op); break;
    case WF_UW_K_STACK_POINTER:
        *r = (greg_t)(wf_uc_sp(env->captured) + 8 * (uintptr_t)(int8_t)op);
        break;
    case WF_UW_K_MID_FUNCTION: mid_function(uc, op); break;
    }
    return 1;
}
