/* wf_live_stubs.h — the live VM's fixed machine code for x86-64: the interpreter and the entry
 * stub, included once, by native/src/live/live_stubs.c.
 *
 * Both are written here as position-independent assembly between begin/end labels and are
 * never executed where the linker put them: live_vm.c copies the bytes into the code heap
 * (WF_VM_CODE_HEAP) so that their pcs lie in the INTERPRETER and ENTRY blobs. Only relative
 * jumps inside each piece and register-indirect calls are used, so the copy runs as is. The
 * labels inside mark the transition windows (wf_live_vm.h) as offsets from `begin`.
 *
 * INTERPRETER frame (entry: rbx = struct wf_live_method *, [rsp] = return address; the frame
 * is complete after the `enter` that ends the prologue: the blob's frame_complete):
 *
 *      caller's frame ...                 <- caller sp = fp + 16
 *      fp+8    return address
 *      fp+0    caller's rbp               <- rbp = fp
 *      fp-8    method handle              (wf_vm.h INTERPRETED layout)
 *      fp-16   bcp = code_base + bci      (stored at every dispatch)
 *      fp-24   ip: the current struct wf_live_insn (readable; the bcp is never read)
 *      fp-32   loop counter
 *      fp-40   struct wf_live_method * of this frame
 *      fp-48   padding (keeps rsp 16-aligned at calls)   <- rsp
 *
 * ENTRY frame (C -> Java; called as void entry(struct wf_live_thread *, wf_live_method *)):
 *
 *      fp+8    return address into C
 *      fp+0    caller's rbp               <- rbp = fp
 *      fp-8    saved anchor sp    \  the thread's last Java frame when C called Java
 *      fp-16   saved anchor fp     } (sp 0: no older Java frame)
 *      fp-24   saved anchor pc    /
 *      fp-32 .. fp-64  rbx r12 r13 r14 r15 (C callee-saved)  <- rsp
 *
 * The entry stub switches the thread to IN_JAVA only once its frame is complete (so a walker
 * that then starts at the entry frame finds the saved anchor) and restores the anchor before
 * going back to IN_NATIVE.
 */
#ifndef WF_LIVE_STUBS_X86_64_H
#define WF_LIVE_STUBS_X86_64_H

#include "wf_live_vm.h"

#define WF_STR2(x) #x
#define WF_STR(x) WF_STR2(x)
#define T_DEPTH WF_STR(WF_LIVE_T_DEPTH)
#define T_POLL WF_STR(WF_LIVE_T_POLL)
#define T_SAFEPOINT WF_STR(WF_LIVE_T_SAFEPOINT)
/* shadow record fields of the record at depth (push) and depth-1 (top), with r = depth*16 */
#define PUSH_METHOD WF_STR(WF_LIVE_T_SHADOW + WF_LIVE_S_METHOD)
#define PUSH_BCI WF_STR(WF_LIVE_T_SHADOW + WF_LIVE_S_BCI)
#define PUSH_TYPE WF_STR(WF_LIVE_T_SHADOW + WF_LIVE_S_TYPE)
#define TOP_BCI WF_STR(WF_LIVE_T_SHADOW - 16 + WF_LIVE_S_BCI)

/* The assembly below keeps one instruction a line: not for clang-format to reflow. */
/* clang-format off */
/* Push the shadow record of the method in rbx (clobbers rcx, rdx), then publish it. */
#define SHADOW_PUSH_RBX                                   \
    "mov edx, dword ptr [r15+" T_DEPTH "]\n"             \
    "shl edx, 4\n"                                        \
    "mov ecx, dword ptr [rbx+" WF_STR(WF_LIVE_M_INDEX) "]\n" \
    "mov dword ptr [r15+rdx+" PUSH_METHOD "], ecx\n"      \
    "mov ecx, dword ptr [rbx+" WF_STR(WF_LIVE_M_BCI0) "]\n"  \
    "mov dword ptr [r15+rdx+" PUSH_BCI "], ecx\n"         \
    "mov ecx, dword ptr [rbx+" WF_STR(WF_LIVE_M_TYPE) "]\n"  \
    "mov dword ptr [r15+rdx+" PUSH_TYPE "], ecx\n"        \
    "inc dword ptr [r15+" T_DEPTH "]\n"

__asm__(
    ".intel_syntax noprefix\n"
    ".text\n"
    ".p2align 4\n"
    ".globl wf_live_interp_begin\n.hidden wf_live_interp_begin\n"
    ".globl wf_live_interp_frame_done\n.hidden wf_live_interp_frame_done\n"
    ".globl wf_live_interp_bci_lo\n.hidden wf_live_interp_bci_lo\n"
    ".globl wf_live_interp_bci_hi\n.hidden wf_live_interp_bci_hi\n"
    ".globl wf_live_interp_epi_lo\n.hidden wf_live_interp_epi_lo\n"
    ".globl wf_live_interp_epi_hi\n.hidden wf_live_interp_epi_hi\n"
    ".globl wf_live_interp_call_lo\n.hidden wf_live_interp_call_lo\n"
    ".globl wf_live_interp_call_hi\n.hidden wf_live_interp_call_hi\n"
    ".globl wf_live_interp_end\n.hidden wf_live_interp_end\n"
    "wf_live_interp_begin:\n"
    /* The slots go below rsp first (the red zone: the kernel never writes it), then one
       `enter` saves rbp, points rbp at it and moves rsp past the slots: the frame appears
       whole in one instruction, so a walker sees either no frame or a complete one. */
    "mov rax, qword ptr [rbx+" WF_STR(WF_LIVE_M_HANDLE) "]\n"
    "mov qword ptr [rsp-16], rax\n"
    "mov rax, qword ptr [rbx+" WF_STR(WF_LIVE_M_CODE_BASE) "]\n"
    "mov qword ptr [rsp-24], rax\n"
    "mov rax, qword ptr [rbx+" WF_STR(WF_LIVE_M_PROGRAM) "]\n"
    "mov qword ptr [rsp-32], rax\n"
    "mov qword ptr [rsp-40], 0\n"
    "mov qword ptr [rsp-48], rbx\n"
    "mov qword ptr [rsp-56], 0\n"
    "enter 48, 0\n"
    "wf_live_interp_frame_done:\n"
    "1:\n" /* dispatch: bcp and the shadow's top bci follow the instruction */
    "mov rax, qword ptr [rbp-24]\n"
    "movzx ecx, word ptr [rax+" WF_STR(WF_LIVE_I_BCI) "]\n"
    "mov rdx, qword ptr [rbp-40]\n"
    "mov rdx, qword ptr [rdx+" WF_STR(WF_LIVE_M_CODE_BASE) "]\n"
    "add rdx, rcx\n"
    "mov r8d, dword ptr [r15+" T_DEPTH "]\n"
    "shl r8d, 4\n"
    "mov qword ptr [rbp-16], rdx\n"
    /* BCI window: the frame says the new bci, the shadow store is next; the oracle reads the
       bci it will store from ecx (wf_live_expect), so ecx must hold it here */
    "wf_live_interp_bci_lo:\n"
    "mov dword ptr [r15+r8+" TOP_BCI "], ecx\n"
    "wf_live_interp_bci_hi:\n"
    "movzx ecx, byte ptr [rax+" WF_STR(WF_LIVE_I_OP) "]\n"
    "cmp ecx, " WF_STR(WF_LIVE_OP_WORK) "\n"
    "je 2f\n"
    "cmp ecx, " WF_STR(WF_LIVE_OP_CALL) "\n"
    "je 3f\n"
    "cmp ecx, " WF_STR(WF_LIVE_OP_LOOP) "\n"
    "je 4f\n"
    "cmp ecx, " WF_STR(WF_LIVE_OP_ENDLOOP) "\n"
    "je 5f\n"
    /* RET: safepoint poll, then tear the frame down */
    "cmp dword ptr [r15+" T_POLL "], 0\n"
    "je 6f\n"
    "call qword ptr [r15+" T_SAFEPOINT "]\n"
    "6:\n"
    "leave\n"
    "wf_live_interp_epi_lo:\n"
    "ret\n"
    "wf_live_interp_epi_hi:\n"
    "2:\n" /* WORK a */
    "mov ecx, dword ptr [rax+" WF_STR(WF_LIVE_I_A) "]\n"
    "7:\n"
    "dec ecx\n"
    "jnz 7b\n"
    "add qword ptr [rbp-24], 16\n"
    "jmp 1b\n"
    "4:\n" /* LOOP a */
    "mov ecx, dword ptr [rax+" WF_STR(WF_LIVE_I_A) "]\n"
    "mov qword ptr [rbp-32], rcx\n"
    "add qword ptr [rbp-24], 16\n"
    "jmp 1b\n"
    "5:\n" /* ENDLOOP b: back-edge with a safepoint poll */
    "dec qword ptr [rbp-32]\n"
    "jz 8f\n"
    "mov rcx, qword ptr [rax+" WF_STR(WF_LIVE_I_B) "]\n"
    "mov qword ptr [rbp-24], rcx\n"
    "cmp dword ptr [r15+" T_POLL "], 0\n"
    "je 1b\n"
    "call qword ptr [r15+" T_SAFEPOINT "]\n"
    "jmp 1b\n"
    "8:\n"
    "add qword ptr [rbp-24], 16\n"
    "jmp 1b\n"
    "3:\n" /* CALL b */
    "mov rbx, qword ptr [rax+" WF_STR(WF_LIVE_I_B) "]\n"
    SHADOW_PUSH_RBX
    "wf_live_interp_call_lo:\n"
    "call qword ptr [rbx+" WF_STR(WF_LIVE_M_ENTRY) "]\n"
    "dec dword ptr [r15+" T_DEPTH "]\n"
    "wf_live_interp_call_hi:\n"
    "mov rbx, qword ptr [rbp-40]\n"
    "add qword ptr [rbp-24], 16\n"
    "jmp 1b\n"
    "wf_live_interp_end:\n"
    ".att_syntax prefix\n");

__asm__(
    ".intel_syntax noprefix\n"
    ".text\n"
    ".p2align 4\n"
    ".globl wf_live_entry_begin\n.hidden wf_live_entry_begin\n"
    ".globl wf_live_entry_call_lo\n.hidden wf_live_entry_call_lo\n"
    ".globl wf_live_entry_call_hi\n.hidden wf_live_entry_call_hi\n"
    ".globl wf_live_entry_end\n.hidden wf_live_entry_end\n"
    "wf_live_entry_begin:\n"
    "push rbp\n"
    "mov rbp, rsp\n"
    "mov rax, qword ptr [rdi+" WF_STR(WF_LIVE_T_VM) "]\n"
    "push qword ptr [rax+" WF_STR(WF_LIVE_V_ANCHOR_SP) "]\n"
    "push qword ptr [rax+" WF_STR(WF_LIVE_V_ANCHOR_FP) "]\n"
    "push qword ptr [rax+" WF_STR(WF_LIVE_V_ANCHOR_PC) "]\n"
    "push rbx\n"
    "push r12\n"
    "push r13\n"
    "push r14\n"
    "push r15\n"
    "mov r15, rdi\n"
    "mov rbx, rsi\n"
    "mov dword ptr [rax+" WF_STR(WF_LIVE_V_STATE) "], " WF_STR(WF_THREAD_IN_JAVA_VALUE) "\n"
    "mov qword ptr [rax+" WF_STR(WF_LIVE_V_ANCHOR_SP) "], 0\n"
    SHADOW_PUSH_RBX
    "wf_live_entry_call_lo:\n"
    "call qword ptr [rbx+" WF_STR(WF_LIVE_M_ENTRY) "]\n"
    "dec dword ptr [r15+" T_DEPTH "]\n"
    "wf_live_entry_call_hi:\n"
    "mov rax, qword ptr [r15+" WF_STR(WF_LIVE_T_VM) "]\n"
    "mov rcx, qword ptr [rbp-24]\n"
    "mov qword ptr [rax+" WF_STR(WF_LIVE_V_ANCHOR_PC) "], rcx\n"
    "mov rcx, qword ptr [rbp-16]\n"
    "mov qword ptr [rax+" WF_STR(WF_LIVE_V_ANCHOR_FP) "], rcx\n"
    "mov rcx, qword ptr [rbp-8]\n"
    "mov qword ptr [rax+" WF_STR(WF_LIVE_V_ANCHOR_SP) "], rcx\n"
    "mov dword ptr [rax+" WF_STR(WF_LIVE_V_STATE) "], " WF_STR(WF_THREAD_IN_NATIVE_VALUE) "\n"
    "pop r15\n"
    "pop r14\n"
    "pop r13\n"
    "pop r12\n"
    "pop rbx\n"
    "leave\n"
    "ret\n"
    "wf_live_entry_end:\n"
    ".att_syntax prefix\n");
/* clang-format on */

#endif /* WF_LIVE_STUBS_X86_64_H */
