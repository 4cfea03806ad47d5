/* The llvm backend: LLVM's libunwind 14 (Debian libunwind-14, /usr/lib/llvm-14/lib/
 * libunwind.so.1), unw_init_local then unw_step, every frame fed to wf_uw_record.
 *
 * Debian ships the runtime without headers (libunwind-14-dev conflicts with libunwind-dev), so
 * the few functions and LLVM's x86-64 types are declared here, as its libunwind.h and
 * __libunwind_config.h define them. Its unw_context_t is not a ucontext_t but its
 * Registers_x86_64 as saved by unw_getcontext:
 *
 *   word  0    1    2    3    4    5    6    7    8..15   16   17      18  19  20
 *         rax  rbx  rcx  rdx  rdi  rsi  rbp  rsp  r8..r15 rip  rflags  cs  fs  gs
 *
 * so a walk from a ucontext fills one from the ucontext's registers. The names are the ones the
 * library exports (unw_step, not libunwind 1.6's _ULx86_64_step): the two never meet in one
 * process, each unwinder has its own extension.
 */
#define _GNU_SOURCE
#include <string.h>

#include "wf_ucontext.h"
#include "wf_unwinder.h"
#include "wf_uw_targets.h"

#define LLVM_CONTEXT_WORDS 21 /* _LIBUNWIND_CONTEXT_SIZE on x86-64 (not Windows) */
#define LLVM_CURSOR_WORDS 33  /* _LIBUNWIND_CURSOR_SIZE */
#define LLVM_REG_IP (-1)      /* UNW_REG_IP */
#define LLVM_REG_SP (-2)      /* UNW_REG_SP */
#define LLVM_X86_64_RBP 6     /* UNW_X86_64_RBP */

typedef struct llvm_context {
    uint64_t data[LLVM_CONTEXT_WORDS];
} llvm_context;
typedef struct llvm_cursor {
    uint64_t data[LLVM_CURSOR_WORDS];
} llvm_cursor;

/* LLVM libunwind's API (libunwind.h), under its exported names. */
int unw_getcontext(llvm_context *context);
int unw_init_local(llvm_cursor *cursor, llvm_context *context);
int unw_step(llvm_cursor *cursor);
int unw_get_reg(llvm_cursor *cursor, int reg, uint64_t *value);

/* Registers_x86_64's word of each register the ucontext has. */
static const struct {
    int word;
    wf_uc_reg reg;
} CONTEXT_WORDS[] = {
    {0, WF_UC_RAX},  {1, WF_UC_RBX},  {2, WF_UC_RCX},  {3, WF_UC_RDX},  {4, WF_UC_RDI},
    {5, WF_UC_RSI},  {6, WF_UC_FP},   {7, WF_UC_SP},   {8, WF_UC_R8},   {9, WF_UC_R9},
    {10, WF_UC_R10}, {11, WF_UC_R11}, {12, WF_UC_R12}, {13, WF_UC_R13}, {14, WF_UC_R14},
    {15, WF_UC_R15}, {16, WF_UC_PC},
};

const char *wf_unwinder_name(void) { return "llvm"; }
const char *wf_unwinder_library(void) { return "libunwind.so.1 (LLVM 14)"; }
uintptr_t wf_unwinder_code(void) { return (uintptr_t)&unw_step; }
wf_uw_capture_fn *wf_unwinder_capture(void) { return &getcontext; }
int wf_unwinder_needs_frame_pointers(void) { return 0; }

static void context_from(llvm_context *c, const ucontext_t *uc) {
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < sizeof CONTEXT_WORDS / sizeof CONTEXT_WORDS[0]; i++)
        c->data[CONTEXT_WORDS[i].word] = wf_uc_get(uc, CONTEXT_WORDS[i].reg);
}

static int32_t step_stop(wf_uw_walk *w, int rc) {
    w->unw_rc = rc;
    return rc == 0 ? WF_UW_STOP_END : WF_UW_STOP_STEP_ERROR;
}

static uintptr_t reg(llvm_cursor *cursor, int r) {
    uint64_t value = 0;
    unw_get_reg(cursor, r, &value);
    return (uintptr_t)value;
}

/* `exact`: the first frame's pc is where the thread stopped, not a return address. */
static int32_t record_frames(wf_uw_walk *w, llvm_cursor *cursor, int exact) {
    for (;;) {
        int32_t stop = wf_uw_record(w, reg(cursor, LLVM_REG_IP), reg(cursor, LLVM_REG_SP),
                                    reg(cursor, LLVM_X86_64_RBP), exact, exact);
        if (stop != WF_UW_STOP_NONE) return stop;
        exact = 0;
        w->steps++;
        int rc = unw_step(cursor);
        if (rc <= 0) return step_stop(w, rc);
    }
}

/* From here through the handler's frames: glibc's __restore_rt carries CFI that restores the
   interrupted registers from the ucontext, so one step past the frame whose pc is the
   trampoline is the interrupted frame. */
static int32_t from_signal_frame(wf_uw_walk *w) {
    uintptr_t trampoline = wf_uw_targets_get()->restore_rt;
    llvm_context here;
    llvm_cursor cursor;
    unw_getcontext(&here);
    int rc = unw_init_local(&cursor, &here);
    if (rc < 0) {
        w->unw_rc = rc;
        return WF_UW_STOP_INIT_ERROR;
    }
    for (int i = 0; i < WF_UW_MAX_HANDLER_FRAMES; i++) {
        uintptr_t pc = reg(&cursor, LLVM_REG_IP);
        w->steps++;
        rc = unw_step(&cursor);
        if (rc <= 0) return step_stop(w, rc);
        if (trampoline != 0 && pc == trampoline) return record_frames(w, &cursor, 1);
    }
    return WF_UW_STOP_BUDGET;
}

int32_t wf_unwinder_walk(wf_uw_walk *w) {
    if (w->uc == NULL) return from_signal_frame(w);
    llvm_context context;
    llvm_cursor cursor;
    context_from(&context, w->uc);
    int rc = unw_init_local(&cursor, &context);
    if (rc < 0) {
        w->unw_rc = rc;
        return WF_UW_STOP_INIT_ERROR;
    }
    return record_frames(w, &cursor, w->signal_frame);
}
