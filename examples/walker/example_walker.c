/* example_walker.c — a complete walker for walkfuzz's simulated VM, written the way a user
 * would write their own: from docs/case-format.md alone, in one file, as a shared library
 * that `walkfuzz fuzz --walker`, `walkfuzz stress --walker` and `walkfuzz replay --walker`
 * load. docs/writing-a-walker.md walks through it.
 *
 * THE API. A walker library exports the ASGST functions of native/include/asgst.h that the
 * harness binds with dlsym (wf_walker_load, wf_walker.h; a missing one is named on load):
 *   ASGST_RunWithIterator  ASGST_RunWithIteratorFromFrame  ASGST_NextFrame
 *   ASGST_RewindIterator   ASGST_State  ASGST_ThreadState
 *   ASGST_GetMethodInfo    ASGST_GetClassInfo  ASGST_Capabilities
 * Run* creates an iterator on its own stack and calls the handler with it; the handler pulls
 * frames with NextFrame (1 = a frame, 0 = end, < 0 = error; the end is sticky). The queue
 * API is optional: this walker's ASGST_Capabilities() says it has none.
 *
 * THE VM. Nothing is linked in: the walker reads the VM like a JVM's globals, at the fixed
 * address WF_VM_ROOT (`WF_VM`, a `struct wf_vm *`, wf_vm.h): the blob table (code heap), the
 * method and class tables, and the thread record (its stack bounds, state, flags and
 * last-Java-frame anchor; wf_vm_thread_for(sp) picks it, also among live worker threads).
 *
 * SAFETY. It runs in signal handlers on stacks caught mid-call, so: no malloc, no locks, no
 * stdio, and no read that is not first shown to lie inside the thread's stack or the tables.
 * Every physical frame is checked before its slots are read (decode_frame), sp must grow, and
 * the depth is bounded: every way out is an ASGST code (the closed list in asgst.h).
 *
 * Build it standalone:
 *   cc -shared -fPIC -O2 -Wall -Wextra -Werror -Inative/include \
 *      examples/walker/example_walker.c -o example-walker.so
 * WF_EXAMPLE_OMIT_<SYMBOL> (e.g. -DWF_EXAMPLE_OMIT_ASGST_NextFrame) leaves one function out:
 * the tests use it to show that a library missing a symbol is refused by name.
 */
#define _GNU_SOURCE /* REG_RSP, REG_RBP, REG_RIP of <ucontext.h> */
#include <stdint.h>
#include <ucontext.h>

#include "asgst.h"
#include "wf_vm.h"

typedef struct {
    uintptr_t sp, fp, pc;
} physical;

/* The iterator: where the walk started, where it is, and what the current frame reports. */
struct _ASGST_Iterator {
    const struct wf_vm_thread *thread;
    int32_t options;
    physical start, cur;
    int first;                         /* cur is the start frame */
    int unbuilt;                       /* cur is a start frame with only its return address
                                          on the stack: prologue not done, or at its `ret` */
    int decoded;                       /* cur has been decoded (the fields below are valid) */
    int code;                          /* 1 while walking, then the sticky end/error code */
    uint32_t depth;                    /* physical frames decoded */
    int kind;                          /* wf_frame_kind of cur */
    const struct wf_vm_blob *blob;     /* cur's blob; NULL for C frames */
    const struct wf_vm_pcdesc *desc;   /* COMPILED: the descriptor holding pc, or NULL */
    const struct wf_vm_method *method; /* INTERPRETED: from the fp-8 slot */
    int32_t bci;                       /* INTERPRETED: from the fp-16 slot */
    uint32_t frames, emitted;          /* frames cur reports (1, or its scopes), and so far */
};

/* ---- reading the VM -------------------------------------------------------------------- */

static const struct wf_vm_thread *thread_of(uintptr_t sp) {
    return WF_VM->magic == WF_VM_MAGIC ? wf_vm_thread_for(sp) : 0;
}

static uintptr_t word(uintptr_t addr) { return *(const uintptr_t *)addr; }

/* An aligned word inside the walked thread's stack. */
static int stack_word_ok(const ASGST_Iterator *it, uintptr_t addr) {
    return addr % 8 == 0 && addr >= it->thread->stack_lo && addr <= it->thread->stack_hi - 8;
}

/* The blob holding pc (binary search of the sorted blob table), or NULL. */
static const struct wf_vm_blob *blob_at(uintptr_t pc) {
    const struct wf_vm *vm = WF_VM;
    uint32_t lo = 0, hi = vm->blob_count;
    while (lo < hi) {                  /* first blob that starts after pc */
        uint32_t mid = lo + (hi - lo) / 2;
        if (vm->blobs[mid].start <= pc) lo = mid + 1; else hi = mid;
    }
    if (lo == 0 || pc >= vm->blobs[lo - 1].end) return 0;
    return &vm->blobs[lo - 1];
}

static const struct wf_vm_pcdesc *desc_at(const struct wf_vm_blob *b, uintptr_t pc) {
    for (uint32_t i = 0; i < b->desc_count; i++)
        if (b->start + b->descs[i].pc_begin <= pc && pc < b->start + b->descs[i].pc_end)
            return &b->descs[i];
    return 0;
}

static int fixed_size_kind(int kind) {
    return kind == WF_FRAME_COMPILED || kind == WF_FRAME_NATIVE || kind == WF_FRAME_STUB;
}

/* Kinds whose blob's frame_complete counts: the fixed-size ones and the interpreter. */
static int builds_frame(int kind) { return fixed_size_kind(kind) || kind == WF_FRAME_INTERPRETED; }

/* The instruction at pc (in the code heap: readable) is `ret`: the frame is already popped. */
static int at_ret(uintptr_t pc) { return *(const uint8_t *)pc == 0xC3; }

/* ---- decoding one physical frame (docs §4.3) --------------------------------------------- */

/* The kind of pc, or ASGST_WF_BAD_PC. Sets it->blob. */
static int classify(ASGST_Iterator *it, uintptr_t pc) {
    const struct wf_vm *vm = WF_VM;
    it->blob = 0;
    if (pc >= vm->native_text_lo && pc < vm->native_text_hi) return WF_FRAME_C;
    if (pc < vm->code_heap_lo || pc >= vm->code_heap_hi) return ASGST_WF_BAD_PC;
    it->blob = blob_at(pc);
    if (it->blob == 0) return ASGST_WF_BAD_PC;
    switch (it->blob->kind) {          /* blob kinds and frame kinds share their numbers */
    case WF_BLOB_INTERPRETER: case WF_BLOB_COMPILED: case WF_BLOB_NATIVE_WRAPPER:
    case WF_BLOB_STUB: case WF_BLOB_ENTRY:
        return (int)it->blob->kind;
    default:
        return ASGST_WF_BAD_PC;
    }
}

/* fp-chained frames: fp aligned, `below` bytes of slots between sp and fp, fp+16 in the stack. */
static int fp_ok(const ASGST_Iterator *it, uintptr_t below) {
    uintptr_t fp = it->cur.fp;
    return fp % 8 == 0 && fp >= it->cur.sp + below && fp <= it->thread->stack_hi - 16;
}

static int decode_interpreted(ASGST_Iterator *it) {
    if (!fp_ok(it, 16)) return ASGST_WF_BAD_FP;
    it->method = wf_vm_method_at(word(it->cur.fp - 8));
    if (it->method == 0) return ASGST_WF_BAD_METHOD;
    uintptr_t bci = word(it->cur.fp - 16) - it->method->code_base; /* wraps if below base */
    if (bci >= it->method->code_size) return ASGST_WF_BAD_BCP;
    it->bci = (int32_t)bci;
    return 0;
}

/* Check cur and learn what it reports; 0 or an ASGST_WF_* error. */
static int decode_frame(ASGST_Iterator *it) {
    physical f = it->cur;
    if (f.sp % 8 != 0 || f.sp < it->thread->stack_lo || f.sp >= it->thread->stack_hi)
        return ASGST_WF_BAD_SP;
    int kind = classify(it, f.pc);
    if (kind < 0) return kind;
    int building = builds_frame(kind) && f.pc < it->blob->start + it->blob->frame_complete;
    if (!it->first && building)
        return ASGST_WF_BAD_PC;        /* a return address never points into a prologue */
    it->kind = kind;
    it->desc = 0;
    it->frames = 1;
    it->unbuilt = it->first && builds_frame(kind) && (building || at_ret(f.pc));
    if (it->unbuilt && kind == WF_FRAME_INTERPRETED) {
        it->frames = 0;                /* no frame holds its method and bcp yet (or still) */
        return 0;
    }
    switch (kind) {
    case WF_FRAME_INTERPRETED: return decode_interpreted(it);
    case WF_FRAME_ENTRY: return fp_ok(it, 24) ? 0 : ASGST_WF_BAD_FP;
    case WF_FRAME_C: return fp_ok(it, 0) ? 0 : ASGST_WF_BAD_FP;
    case WF_FRAME_COMPILED:
        it->desc = desc_at(it->blob, f.pc);
        if (it->desc != 0) it->frames = it->desc->scope_count;
        return 0;
    default: return 0;                 /* NATIVE, STUB: nothing more to check */
    }
}

/* ---- stepping to the sender (docs §4.4) -------------------------------------------------- */

static int step_entry_java_only(ASGST_Iterator *it, physical *s) {
    uintptr_t fp = it->cur.fp, anchor_sp = word(fp - 8);
    if (anchor_sp == 0) return ASGST_NO_FRAME;         /* no older Java segment */
    *s = (physical){anchor_sp, word(fp - 16), word(fp - 24)};
    if (s->pc == 0) {
        if (!stack_word_ok(it, anchor_sp - 8)) return ASGST_WF_BAD_SP;
        s->pc = word(anchor_sp - 8);
    }
    return 1;
}

/* Move cur to its caller: 1, or the end (0) or an error. */
static int step_to_sender(ASGST_Iterator *it) {
    physical f = it->cur, s;
    int non_java = it->options & ASGST_INCLUDE_NON_JAVA_FRAMES;
    if (it->unbuilt) {
        s = (physical){f.sp + 8, f.fp, word(f.sp)};    /* only the return address is there */
    } else if (it->kind == WF_FRAME_INTERPRETED || it->kind == WF_FRAME_C ||
               (it->kind == WF_FRAME_ENTRY && non_java)) {
        s = (physical){f.fp + 16, word(f.fp), word(f.fp + 8)};
    } else if (it->kind == WF_FRAME_ENTRY) {
        int rc = step_entry_java_only(it, &s);
        if (rc <= 0) return rc;
    } else {
        uintptr_t sp = f.sp + it->blob->frame_size;
        if (sp > it->thread->stack_hi) return ASGST_WF_BAD_SP;
        s = (physical){sp, word(sp - 16), word(sp - 8)};
    }
    if (s.pc == 0) return ASGST_NO_FRAME;              /* outermost frame */
    if (s.sp <= f.sp) return ASGST_WF_BAD_SP;          /* sp must grow: no cycles */
    it->cur = s;
    it->first = 0;
    it->unbuilt = 0;
    it->decoded = 0;
    return 1;
}

/* ---- emitting frames (docs §4.3, the table) ---------------------------------------------- */

static int reported(const ASGST_Iterator *it) {
    int java = it->kind == WF_FRAME_INTERPRETED || it->kind == WF_FRAME_COMPILED ||
               it->kind == WF_FRAME_NATIVE;
    return java || (it->options & ASGST_INCLUDE_NON_JAVA_FRAMES);
}

static void emit(ASGST_Iterator *it, ASGST_Frame *out) {
    uint32_t i = it->emitted++;
    ASGST_Frame f = {.type = ASGST_FRAME_NON_JAVA, .comp_level = -1, .bci = -1,
                     .pc = (void *)it->cur.pc, .sp = (void *)it->cur.sp,
                     .fp = (void *)it->cur.fp};
    if (it->kind == WF_FRAME_INTERPRETED) {
        f.type = ASGST_FRAME_JAVA;
        f.comp_level = 0;
        f.bci = it->bci;
        f.method = (ASGST_Method)it->method;
    } else if (it->kind == WF_FRAME_COMPILED) {
        f.comp_level = it->blob->comp_level;
        f.type = i + 1 < it->frames ? ASGST_FRAME_JAVA_INLINED : ASGST_FRAME_JAVA;
        f.method = (ASGST_Method)(it->desc ? it->desc->scopes[i].method : it->blob->method);
        f.bci = it->desc ? it->desc->scopes[i].bci : -1;  /* scopes: innermost first */
    } else if (it->kind == WF_FRAME_NATIVE) {
        f.type = ASGST_FRAME_JAVA_NATIVE;
        f.method = (ASGST_Method)it->blob->method;
    }
    *out = f;
}

/* ---- the iterator API (docs §4.2, §4.5) -------------------------------------------------- */

static int finish(ASGST_Iterator *it, int code) { return it->code = code; }

static void rewind_to_start(ASGST_Iterator *it) {
    it->cur = it->start;
    it->first = 1;
    it->unbuilt = 0;
    it->decoded = 0;
    it->code = 1;
    it->depth = 0;
}

#ifndef WF_EXAMPLE_OMIT_ASGST_NextFrame
int ASGST_NextFrame(ASGST_Iterator *it, ASGST_Frame *frame) {
    if (it == 0 || frame == 0) return ASGST_WF_BAD_ARGUMENT;
    if (it->code != 1) return it->code;
    if (it->decoded && it->emitted < it->frames) {     /* more scopes of this frame */
        emit(it, frame);
        return 1;
    }
    for (;;) {
        if (it->decoded) {
            int rc = step_to_sender(it);
            if (rc <= 0) return finish(it, rc);
        }
        if (it->depth >= WF_WALK_MAX_DEPTH) return finish(it, ASGST_WF_DEPTH_LIMIT);
        int rc = decode_frame(it);
        if (rc < 0) return finish(it, rc);
        it->depth++;
        it->decoded = 1;
        it->emitted = 0;
        if (reported(it) && it->frames > 0) {
            emit(it, frame);
            return 1;
        }
    }
}
#endif

#ifndef WF_EXAMPLE_OMIT_ASGST_RewindIterator
void ASGST_RewindIterator(ASGST_Iterator *it) {
    if (it != 0) rewind_to_start(it);
}
#endif

#ifndef WF_EXAMPLE_OMIT_ASGST_State
int ASGST_State(ASGST_Iterator *it) { return it == 0 ? 0 : it->code; }
#endif

/* The thread checks of docs §4.1 (steps 2-4): 0, or the code Run* returns. */
static int check_thread(const struct wf_vm_thread *t, int32_t options) {
    if (t == 0) return ASGST_NO_THREAD;
    if (t->state == WF_THREAD_NOT_JAVA && !(options & ASGST_INCLUDE_NON_JAVA_FRAMES))
        return ASGST_NO_THREAD;
    uint32_t mode = options & ASGST_WALK_SAME_THREAD ? WF_THREAD_CURRENT : WF_THREAD_SUSPENDED;
    if (!(t->flags & mode)) return ASGST_NO_THREAD;
    if (t->state == WF_THREAD_EXITING) return ASGST_THREAD_EXIT;
    if (t->state == WF_THREAD_NEW || t->state == WF_THREAD_IN_TRANSITION)
        return ASGST_UNSAFE_STATE;
    return 0;
}

/* Steps 5-6: create the iterator at `start`, hand it to fun, return the trace kind. */
static int walk(const struct wf_vm_thread *t, physical start, int32_t options,
                ASGST_IteratorHandler fun, void *arg) {
    ASGST_Iterator it = {.thread = t, .options = options, .start = start};
    rewind_to_start(&it);
    fun(&it, arg);
    return t->state == WF_THREAD_NOT_JAVA ? ASGST_CPP_TRACE : ASGST_JAVA_TRACE;
}

/* A thread outside Java starts at its last-Java-frame anchor (pc 0: the word below sp). */
static int anchor_start(const struct wf_vm_thread *t, physical *start) {
    if (t->anchor.sp == 0) return ASGST_NO_TOP_JAVA_FRAME;
    *start = (physical){t->anchor.sp, t->anchor.fp, t->anchor.pc};
    if (start->pc != 0) return 0;
    uintptr_t slot = t->anchor.sp - 8;
    if (slot % 8 != 0 || slot < t->stack_lo || slot > t->stack_hi - 8) return ASGST_WF_BAD_SP;
    start->pc = word(slot);
    return 0;
}

#ifndef WF_EXAMPLE_OMIT_ASGST_RunWithIterator
int ASGST_RunWithIterator(void *ucontext, int32_t options, ASGST_IteratorHandler fun,
                          void *argument) {
    if (fun == 0) return ASGST_WF_BAD_ARGUMENT;
    const greg_t *regs = ucontext ? ((const ucontext_t *)ucontext)->uc_mcontext.gregs : 0;
    uintptr_t sp = regs ? (uintptr_t)regs[REG_RSP] : (uintptr_t)__builtin_frame_address(0);
    const struct wf_vm_thread *t = thread_of(sp);
    int rc = check_thread(t, options);
    if (rc != 0) return rc;
    physical start;
    if (t->state == WF_THREAD_IN_JAVA || t->state == WF_THREAD_NOT_JAVA) {
        if (regs == 0) return ASGST_WF_BAD_ARGUMENT;   /* its registers are the only start */
        start = (physical){(uintptr_t)regs[REG_RSP], (uintptr_t)regs[REG_RBP],
                           (uintptr_t)regs[REG_RIP]};
    } else if ((rc = anchor_start(t, &start)) != 0) {
        return rc;
    }
    return walk(t, start, options, fun, argument);
}
#endif

#ifndef WF_EXAMPLE_OMIT_ASGST_RunWithIteratorFromFrame
int ASGST_RunWithIteratorFromFrame(void *sp, void *fp, void *pc, int32_t options,
                                   ASGST_IteratorHandler fun, void *argument) {
    if (fun == 0) return ASGST_WF_BAD_ARGUMENT;
    const struct wf_vm_thread *t = thread_of((uintptr_t)sp);
    int rc = check_thread(t, options);
    if (rc != 0) return rc;
    return walk(t, (physical){(uintptr_t)sp, (uintptr_t)fp, (uintptr_t)pc}, options, fun,
                argument);
}
#endif

/* ---- thread state, method and class info, capabilities (docs §4.5) ----------------------- */

#ifndef WF_EXAMPLE_OMIT_ASGST_ThreadState
int ASGST_ThreadState(void) {
    const struct wf_vm_thread *t = thread_of((uintptr_t)__builtin_frame_address(0));
    if (t == 0 || t->state == WF_THREAD_NOT_JAVA) return -1;
    static const int jvmti[] = {
        [WF_THREAD_NEW] = 0x0, [WF_THREAD_IN_JAVA] = 0x5, [WF_THREAD_IN_VM] = 0x5,
        [WF_THREAD_IN_TRANSITION] = 0x5, [WF_THREAD_IN_NATIVE] = 0x400005,
        [WF_THREAD_BLOCKED] = 0x401, [WF_THREAD_EXITING] = 0x2};
    int bits = t->state <= WF_THREAD_EXITING ? jvmti[t->state] : 0;
    return t->flags & WF_THREAD_SUSPENDED ? bits | 0x100000 : bits;
}
#endif

/* Copy name into (buffer, *length = capacity), truncated plus NUL; *length = full length. */
static void copy_name(char *buffer, int32_t *length, const char *name, uint32_t name_length) {
    if (buffer != 0 && *length > 0) {
        uint32_t n = name_length < (uint32_t)*length - 1 ? name_length : (uint32_t)*length - 1;
        for (uint32_t i = 0; i < n; i++) buffer[i] = name[i];
        buffer[n] = '\0';
    }
    *length = (int32_t)name_length;
}

#ifndef WF_EXAMPLE_OMIT_ASGST_GetMethodInfo
void ASGST_GetMethodInfo(ASGST_Method method, ASGST_MethodInfo *info) {
    const struct wf_vm_method *m = wf_vm_method_at((uintptr_t)method);
    static const struct wf_vm_method none = {.name = "", .signature = "",
                                             .generic_signature = ""};
    const struct wf_vm_method *src = m ? m : &none;   /* invalid handle: empty, zero, NULL */
    copy_name(info->method_name, &info->method_name_length, src->name, src->name_length);
    copy_name(info->signature, &info->signature_length, src->signature,
              src->signature_length);
    copy_name(info->generic_signature, &info->generic_signature_length,
              src->generic_signature, src->generic_signature_length);
    info->modifiers = src->modifiers;
    info->klass = (ASGST_Class)src->klass;
}
#endif

#ifndef WF_EXAMPLE_OMIT_ASGST_GetClassInfo
void ASGST_GetClassInfo(ASGST_Class klass, ASGST_ClassInfo *info) {
    const struct wf_vm_class *c = wf_vm_class_at((uintptr_t)klass);
    static const struct wf_vm_class none = {.name = "", .generic_name = ""};
    const struct wf_vm_class *src = c ? c : &none;
    copy_name(info->class_name, &info->class_name_length, src->name, src->name_length);
    copy_name(info->generic_class_name, &info->generic_class_name_length, src->generic_name,
              src->generic_name_length);
    info->modifiers = src->modifiers;
}
#endif

#ifndef WF_EXAMPLE_OMIT_ASGST_Capabilities
int ASGST_Capabilities(void) { return 0; } /* iterator API only: no safepoint queue */
#endif
