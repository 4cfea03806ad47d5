/* wf_live_vm.h — internal: the LIVE simulated VM. Worker threads execute real frames of every
 * kind of wf_vm.h on their own pthread stacks: an interpreter loop, compiled methods with fixed
 * frame sizes and pc descriptors (inlining included), native wrappers calling C with the
 * anchor set, a safepoint stub, and the entry stub (C -> Java). All of it is machine code
 * placed in WF_VM_CODE_HEAP, described by the root's tables, so any walker of wf_vm.h walks
 * it from a signal handler's ucontext. Not cffi-visible (the API is wf_live.h).
 *
 * Register conventions of generated code (the "Java ABI" of the live VM):
 *   r15  the current struct wf_live_thread (never changed while Java code runs)
 *   rbx  the callee's struct wf_live_method at every Java call; caller-saved
 *   rbp  every frame saves its caller's rbp and restores it (interpreter and entry frames use
 *        it as their frame pointer, native wrappers point it at their saved-rbp slot)
 *   rax, rcx, rdx, rdi, rsi, r8  scratch; rsp is 16-aligned at every call instruction
 *
 * Shadow stack (the live oracle): frames[0 .. depth) of struct wf_live_shadow, outermost
 * first. The CALLER pushes the callee's record right before its call instruction (write the
 * record, then `inc depth`: a signal sees either the old depth or the complete record) and pops
 * it with one `dec depth` right after the return. The top record's bci is kept current by the
 * code (interpreter at each dispatch, compiled code at each pc-descriptor boundary), so outside
 * the transition windows below the walked trace equals the shadow stack exactly.
 *
 * Transition windows (pc ranges recorded in wf_live_window while code is generated): where
 * the shadow stack is one step ahead of or behind the machine, so the oracle's expected trace
 * is the shadow stack adjusted by that step (wf_live_expect, docs/stress.md):
 *   CALL      the call instruction and the `dec depth` after the return: the shadow has the
 *             callee, the stack does not (yet / any more): expected = shadow minus its top
 *   PROLOGUE  interpreter entry before its `enter` built the frame (the interpreter blob's
 *             frame_complete): the callee has no frame holding its method yet: minus its top
 *   EPILOGUE  the interpreter's `ret` after `leave` popped the frame: minus its top
 *   BCI       the one instruction between the interpreter's bcp store and its shadow bci
 *             store: the top record's bci is the one that store is about to write (ecx)
 */
#ifndef WALKFUZZ_WF_LIVE_VM_H
#define WALKFUZZ_WF_LIVE_VM_H

#include <stdint.h>

#include "wf_vm.h"

/* Layout constants shared by C and the hand-written stubs (live_stubs.c); checked with
   _Static_assert against offsetof in live_vm.c. */
#define WF_LIVE_T_VM 0         /* struct wf_live_thread: -> struct wf_vm_thread */
#define WF_LIVE_T_DEPTH 8      /*   u32 shadow depth */
#define WF_LIVE_T_POLL 12      /*   u32 safepoint poll word (nonzero: take the slow path) */
#define WF_LIVE_T_SAFEPOINT 16 /*   entry of the safepoint stub */
#define WF_LIVE_T_SHADOW 64    /*   shadow frames, 16 bytes each */
#define WF_LIVE_S_METHOD 0     /* struct wf_live_shadow: u32 method index */
#define WF_LIVE_S_BCI 4        /*   s32 bci */
#define WF_LIVE_S_TYPE 8       /*   u32 ASGST frame type | (u8)comp_level << 8 */
#define WF_LIVE_M_HANDLE 0     /* struct wf_live_method: method handle */
#define WF_LIVE_M_CODE_BASE 8  /*   bytecode base */
#define WF_LIVE_M_PROGRAM 16   /*   first instruction */
#define WF_LIVE_M_ENTRY 24     /*   where callers call */
#define WF_LIVE_M_INDEX 32     /*   u32 method index */
#define WF_LIVE_M_TYPE 36      /*   u32 shadow type word of a call to it */
#define WF_LIVE_M_BCI0 40      /*   s32 shadow bci at entry (0, or -1 for native) */
#define WF_LIVE_V_STATE 0      /* struct wf_vm_thread */
#define WF_LIVE_V_ANCHOR_SP 24
#define WF_LIVE_V_ANCHOR_FP 32
#define WF_LIVE_V_ANCHOR_PC 40
#define WF_LIVE_I_OP 0              /* struct wf_live_insn: u8 op */
#define WF_LIVE_I_BCI 2             /*   u16 bci */
#define WF_LIVE_I_A 4               /*   u32 operand */
#define WF_LIVE_I_B 8               /*   u64 operand */
#define WF_THREAD_IN_JAVA_VALUE 2   /* WF_THREAD_IN_JAVA, for the assembly */
#define WF_THREAD_IN_NATIVE_VALUE 4 /* WF_THREAD_IN_NATIVE */
#define WF_THREAD_IN_VM_VALUE 3     /* WF_THREAD_IN_VM */

/* Shadow frames per thread: the recursive workload's Java -> native -> Java recursion goes
   up to WF_LIVE_RECURSION_RECORDS records (7 physical frames per 5 records: about 9200
   physical frames, past WF_WALK_MAX_DEPTH); the other workloads stay under a few hundred. */
#define WF_LIVE_SHADOW_MAX 6656
#define WF_LIVE_RECURSION_RECORDS 6600
#define WF_LIVE_MAX_METHODS 96
#define WF_LIVE_MAX_INSNS 24 /* per method */
#define WF_LIVE_MAX_WINDOWS 4096

/* Program instructions, run by the interpreter and compiled by live_emit.c (plain numbers:
   the assembly of live_stubs.c uses them). */
#define WF_LIVE_OP_WORK 1    /* spin a iterations */
#define WF_LIVE_OP_CALL 2    /* call method b (struct wf_live_method *) */
#define WF_LIVE_OP_LOOP 3    /* loop counter = a (one loop level per method) */
#define WF_LIVE_OP_ENDLOOP 4 /* --counter != 0: safepoint poll, jump to insn b (pointer) */
#define WF_LIVE_OP_RET 5     /* safepoint poll, return */

enum wf_live_window_kind {
    WF_LIVE_WIN_NONE = 0,
    WF_LIVE_WIN_CALL = 1,
    WF_LIVE_WIN_PROLOGUE = 2,
    WF_LIVE_WIN_EPILOGUE = 3,
    WF_LIVE_WIN_BCI = 4,
    WF_LIVE_WIN_KINDS = 5
};

struct wf_live_insn { /* 16 bytes */
    uint8_t op;
    uint8_t reserved;
    uint16_t bci;
    uint32_t a;
    uint64_t b;
};

enum wf_live_method_kind { WF_LIVE_INTERPRETED = 0, WF_LIVE_COMPILED = 1, WF_LIVE_NATIVE = 2 };

struct wf_live_method {
    uintptr_t handle; /* WF_LIVE_M_HANDLE ... (layout fixed, see above) */
    uintptr_t code_base;
    const struct wf_live_insn *program;
    uintptr_t entry;
    uint32_t index;
    uint32_t shadow_type;
    int32_t shadow_bci0;
    uint32_t reserved;
    /* not read by generated code */
    uint32_t kind;      /* wf_live_method_kind */
    int32_t comp_level; /* compiled: 1..4 */
    uint32_t insn_count;
    uint32_t frame_size;               /* compiled: bytes */
    uint32_t native_work;              /* native: spin iterations in C */
    struct wf_live_method *upcall;     /* native: Java method the C code calls back, or NULL */
    uint32_t recurse_below;            /* native: call upcall only while the shadow depth is below
                                          this (0: always) */
    uint32_t busy_from;                /* native: spin native_work only from this shadow depth on */
    struct wf_live_method *upcall_alt; /* native: called back instead of upcall at every shadow
                                          depth that is a multiple of 3, or NULL */
    uint32_t inline_mask;              /* compiled: bit k set = inline the callee of insn k */
    uint32_t blob;                     /* index of its blob (compiled, native) */
    struct wf_live_insn insns[WF_LIVE_MAX_INSNS];
};

struct wf_live_shadow { /* 16 bytes */
    uint32_t method;
    int32_t bci;
    uint32_t type; /* ASGST_FrameTypeId | (uint8_t)comp_level << 8 */
    uint32_t reserved;
};

struct wf_live_thread {
    struct wf_vm_thread *vm;   /* WF_LIVE_T_VM */
    volatile uint32_t depth;   /* WF_LIVE_T_DEPTH */
    volatile uint32_t poll;    /* WF_LIVE_T_POLL */
    uintptr_t safepoint_entry; /* WF_LIVE_T_SAFEPOINT */
    uint8_t reserved[40];
    struct wf_live_shadow shadow[WF_LIVE_SHADOW_MAX]; /* WF_LIVE_T_SHADOW */
};

/* A transition window [lo, hi) of code-heap pcs. */
struct wf_live_window {
    uintptr_t lo, hi;
    uint32_t kind;
    uint32_t reserved;
};

/* The generated VM: methods and where its fixed stubs are. */
struct wf_live_vm {
    uint32_t method_count;
    struct wf_live_method *methods; /* method_count entries */
    uintptr_t interp_entry, entry_stub, safepoint_entry;
    uintptr_t c2i_entry; /* compiled code calls interpreted methods here */
    uint32_t window_count;
    struct wf_live_window windows[WF_LIVE_MAX_WINDOWS]; /* sorted by lo, disjoint */
};

/* Code generation (live_emit.c): blobs, pc descriptors and windows written into the fixed
   tables of wf_vm.h while the code heap is writable. */
struct wf_live_codegen {
    uint8_t *heap; /* WF_VM_CODE_HEAP, writable during generation */
    uint32_t used; /* bytes of the heap used */
    uint32_t blob_count, desc_count;
    int failed; /* a table or the heap ran out */
    struct wf_live_vm *vm;
};

/* Copy fixed code [begin, end) into the heap as a blob of `kind` whose frame is complete
   from offset `complete` on; its address. */
uintptr_t wf_live_emit_fixed(struct wf_live_codegen *g, const uint8_t *begin, const uint8_t *end,
                             uint32_t kind, uint32_t complete);
/* A transition frame blob (native wrapper or safepoint stub) that calls fn(thread, rbx) in
   `state` with the anchor set; returns its entry. method NULL for the stub. */
uintptr_t wf_live_emit_transition(struct wf_live_codegen *g, uint32_t kind,
                                  const struct wf_vm_method *method, uint32_t state, uintptr_t fn);
/* The compiled blob of m (its inlined callees' code included); returns its entry. */
uintptr_t wf_live_emit_compiled(struct wf_live_codegen *g, struct wf_live_method *m);
/* The c2i adapter through which compiled code calls the interpreter; returns its entry. */
uintptr_t wf_live_emit_c2i(struct wf_live_codegen *g, uintptr_t interpreter);
/* Record a transition window. */
void wf_live_add_window(struct wf_live_codegen *g, uintptr_t lo, uintptr_t hi, uint32_t kind);

/* Generate the methods of a workload (live_program.c): fills ms[0..n), returns n (0: bad
   workload). Programs point at their own insns; entries are set by wf_live_vm_build. */
uint32_t wf_live_generate(struct wf_live_method *ms, uint32_t max, uint32_t workload,
                          uint64_t seed);

/* Map the VM, generate the code of `n` methods and publish the root with `threads` live
   thread records (stack bounds filled in by each worker). `native_fn` is the C body of native
   methods, `safepoint_fn` what the safepoint stub calls. 0, or -1 with err set. */
int wf_live_vm_build(struct wf_live_vm *vm, struct wf_live_method *ms, uint32_t n, uint32_t threads,
                     uintptr_t native_fn, uintptr_t safepoint_fn, char *err, size_t errlen);
/* The VM record of live thread i. */
struct wf_vm_thread *wf_live_vm_thread(uint32_t i);
/* Unpublish the root (magic 0, no threads) so nothing walks the live VM any more. */
void wf_live_vm_unpublish(void);

/* The transition window holding pc (WF_LIVE_WIN_NONE if none). Async-signal-safe. */
uint32_t wf_live_window_at(const struct wf_live_vm *vm, uintptr_t pc);

/* Call into Java: the entry stub, as a C function (the thread is in native with its anchor
   set, or at its outermost C frame with the anchor clear). */
typedef void (*wf_live_entry_fn)(struct wf_live_thread *t, const struct wf_live_method *m);

#endif /* WALKFUZZ_WF_LIVE_VM_H */
