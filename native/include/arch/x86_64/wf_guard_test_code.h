/* wf_guard_test_code.h — the guard's fault instruments for x86-64 (wf_guard_testing.h declares
 * them): included once, by native/testing/guard_testing.c.
 */
#ifndef WF_GUARD_TEST_CODE_X86_64_H
#define WF_GUARD_TEST_CODE_X86_64_H

/* Assembly, so that the faulting instruction is known exactly and no sanitizer or optimizer
   touches a deliberately wild pointer. */
__asm__(".text\n"
        ".globl wf_guard_test_read\n"
        ".type wf_guard_test_read, @function\n"
        "wf_guard_test_read:\n"
        "    movq (%rdi), %rax\n"
        "    ret\n"
        ".size wf_guard_test_read, .-wf_guard_test_read\n"

        ".globl wf_guard_test_illegal\n"
        ".type wf_guard_test_illegal, @function\n"
        "wf_guard_test_illegal:\n"
        "    ud2\n"
        ".size wf_guard_test_illegal, .-wf_guard_test_illegal\n"

        ".globl wf_guard_test_divide_by_zero\n"
        ".type wf_guard_test_divide_by_zero, @function\n"
        "wf_guard_test_divide_by_zero:\n"
        "    movq %rdi, %rax\n"
        "    cqto\n"
        "    xorl %ecx, %ecx\n"
        "    idivq %rcx\n"
        "    ret\n"
        ".size wf_guard_test_divide_by_zero, .-wf_guard_test_divide_by_zero\n"

        ".globl wf_guard_test_safefetch\n"
        ".type wf_guard_test_safefetch, @function\n"
        "wf_guard_test_safefetch:\n"
        "    movq (%rdi), %rax\n"
        "    ret\n"
        ".size wf_guard_test_safefetch, .-wf_guard_test_safefetch\n"

        ".type safefetch_continuation, @function\n"
        "safefetch_continuation:\n"
        "    movq $-1, %rax\n"
        "    ret\n"
        ".size safefetch_continuation, .-safefetch_continuation\n");

#endif /* WF_GUARD_TEST_CODE_X86_64_H */
