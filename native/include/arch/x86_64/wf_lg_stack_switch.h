/* wf_lg_stack_switch.h — the stack switch of the libgcc backend (wf_unw_libgcc.c, which
 * includes it once and draws the fake signal frame it builds), for x86-64.
 */
#ifndef WF_LG_STACK_SWITCH_X86_64_H
#define WF_LG_STACK_SWITCH_X86_64_H

#include <stdint.h>

/* Switch rsp to `sp` and jump to fn(arg), so that fn's return address is *sp; save the
   callee-saved registers and the old rsp in *saved for wf_lg_resume. */
intptr_t wf_lg_run_on(void *sp, void (*fn)(void *), void *arg, void **saved);
/* Back to the wf_lg_run_on call that saved `saved`, which returns `value`. */
__attribute__((noreturn)) void wf_lg_resume(void *saved, intptr_t value);

/* clang-format off */
__asm__(
    ".text\n"
    ".globl wf_lg_run_on\n"
    ".hidden wf_lg_run_on\n"
    ".type wf_lg_run_on, @function\n"
    "wf_lg_run_on:\n"
    "    push %rbp\n"
    "    push %rbx\n"
    "    push %r12\n"
    "    push %r13\n"
    "    push %r14\n"
    "    push %r15\n"
    "    mov %rsp, (%rcx)\n"
    "    mov %rdi, %rsp\n"
    "    mov %rdx, %rdi\n"
    "    jmp *%rsi\n"
    ".size wf_lg_run_on, .-wf_lg_run_on\n"
    ".globl wf_lg_resume\n"
    ".hidden wf_lg_resume\n"
    ".type wf_lg_resume, @function\n"
    "wf_lg_resume:\n"
    "    mov %rsi, %rax\n"
    "    mov %rdi, %rsp\n"
    "    pop %r15\n"
    "    pop %r14\n"
    "    pop %r13\n"
    "    pop %r12\n"
    "    pop %rbx\n"
    "    pop %rbp\n"
    "    ret\n"
    ".size wf_lg_resume, .-wf_lg_resume\n");
/* clang-format on */

#endif /* WF_LG_STACK_SWITCH_X86_64_H */
