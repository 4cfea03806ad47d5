/* wf_ucontext.h — the registers of an interrupted context (ucontext_t, x86-64 Linux): the one
 * place in native/ that names the kernel's register slots, so that another architecture
 * changes this file only. pc, sp and fp have a getter and a setter each; code that needs
 * another register (a perturbation's target, the bci register of the live VM) names it as a
 * wf_uc_reg. Not cffi-visible.
 *
 * glibc names the slots only under _GNU_SOURCE: define it before the first system header.
 */
#ifndef WALKFUZZ_WF_UCONTEXT_H
#define WALKFUZZ_WF_UCONTEXT_H

#include <stdint.h>
#include <ucontext.h>

#ifndef REG_RIP
#error "wf_ucontext.h needs _GNU_SOURCE defined before the first system header"
#endif

/* A general register of a context, by its role (pc, sp, fp) or its x86-64 name. */
typedef enum wf_uc_reg {
    WF_UC_PC = REG_RIP,
    WF_UC_SP = REG_RSP,
    WF_UC_FP = REG_RBP,
    WF_UC_RAX = REG_RAX,
    WF_UC_RBX = REG_RBX,
    WF_UC_RCX = REG_RCX,
    WF_UC_RDX = REG_RDX,
    WF_UC_RSI = REG_RSI,
    WF_UC_RDI = REG_RDI,
    WF_UC_R8 = REG_R8,
    WF_UC_R9 = REG_R9,
    WF_UC_R10 = REG_R10,
    WF_UC_R11 = REG_R11,
    WF_UC_R12 = REG_R12,
    WF_UC_R13 = REG_R13,
    WF_UC_R14 = REG_R14,
    WF_UC_R15 = REG_R15,
    WF_UC_FLAGS = REG_EFL, /* EFLAGS: a test single-steps code with its trap flag */
} wf_uc_reg;

/* The slot of register r in uc, for code that rewrites it in place. Async-signal-safe. */
static inline greg_t *wf_uc_slot(ucontext_t *uc, wf_uc_reg r) { return &uc->uc_mcontext.gregs[r]; }

/* Register r of uc. Async-signal-safe. */
static inline uintptr_t wf_uc_get(const ucontext_t *uc, wf_uc_reg r) {
    return (uintptr_t)uc->uc_mcontext.gregs[r];
}

/* Sets register r of uc to value. Async-signal-safe. */
static inline void wf_uc_set(ucontext_t *uc, wf_uc_reg r, uintptr_t value) {
    uc->uc_mcontext.gregs[r] = (greg_t)value;
}

/* The address of the interrupted instruction. Async-signal-safe. */
static inline uintptr_t wf_uc_pc(const ucontext_t *uc) { return wf_uc_get(uc, WF_UC_PC); }

/* The interrupted stack pointer. Async-signal-safe. */
static inline uintptr_t wf_uc_sp(const ucontext_t *uc) { return wf_uc_get(uc, WF_UC_SP); }

/* The interrupted frame pointer (rbp). Async-signal-safe. */
static inline uintptr_t wf_uc_fp(const ucontext_t *uc) { return wf_uc_get(uc, WF_UC_FP); }

/* Sets the pc a return from the context resumes at. Async-signal-safe. */
static inline void wf_uc_set_pc(ucontext_t *uc, uintptr_t pc) { wf_uc_set(uc, WF_UC_PC, pc); }

/* Sets the context's stack pointer. Async-signal-safe. */
static inline void wf_uc_set_sp(ucontext_t *uc, uintptr_t sp) { wf_uc_set(uc, WF_UC_SP, sp); }

/* Sets the context's frame pointer. Async-signal-safe. */
static inline void wf_uc_set_fp(ucontext_t *uc, uintptr_t fp) { wf_uc_set(uc, WF_UC_FP, fp); }

/* Sets pc, sp and fp at once: a context that resumes in the frame (sp, fp) at pc.
   Async-signal-safe. */
static inline void wf_uc_set_frame(ucontext_t *uc, uintptr_t pc, uintptr_t sp, uintptr_t fp) {
    wf_uc_set_pc(uc, pc);
    wf_uc_set_sp(uc, sp);
    wf_uc_set_fp(uc, fp);
}

#endif /* WALKFUZZ_WF_UCONTEXT_H */
