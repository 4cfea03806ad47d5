/* wf_vm.h — the simulated VM that walkers of walkfuzz walk: code heap, methods and classes,
 * the thread, and the frame layouts. Normative text: docs/case-format.md.
 *
 * A walker binds to nothing but this header: it reads the root `struct wf_vm` at the fixed
 * address WF_VM_ROOT, like a real walker reads a JVM's globals. The harness maps the span
 * before it calls any walker function, so the root is always readable then; between cases
 * its magic is 0 and its thread NULL. The harness maps one case
 * at a time there (wf_case.h). x86-64: words are 8 bytes, the stack grows down, a call
 * pushes the return address, so everywhere `caller.pc == [caller.sp - 8]`.
 *
 * Address space (span [WF_VM_ROOT, WF_VM_SPAN_END), unlisted parts PROT_NONE):
 *
 *   0x3e0000000000  WF_VM_ROOT         root struct wf_vm; struct wf_vm_thread at +0x800  R/W
 *   0x3e0000001000  WF_VM_LIVE_THREADS live VM only: one struct wf_vm_thread per worker   R/W
 *   0x3e0000010000  WF_VM_CLASSES      class table, stride 64                            R/W
 *   0x3e0000020000  WF_VM_METHODS      method table, stride 64 (= ASGST_Method values)   R/W
 *   0x3e0000040000  WF_VM_BLOBS        blob table, stride 64, sorted by start            R/W
 *   0x3e0000060000  WF_VM_PCDESCS      pc descriptors, stride 144                        R/W
 *   0x3e0000180000  WF_VM_SEGMAP       code heap segment map, u16 per 64-byte segment    R/W
 *   0x3e0000200000  WF_VM_STRINGS      NUL-terminated names, 1 MiB                       R/W
 *   0x3e0001000000  WF_VM_CODE_HEAP    blobs' code, 1 MiB, bytes 0xCC                    R
 *   0x3e0002000000  WF_VM_NATIVE_TEXT  VM/C code outside the heap, 1 MiB, bytes 0xCC     R
 *   0x3e0003000000  WF_VM_STACK        stack region, 1 MiB; stack_hi = WF_VM_STACK_TOP   R/W
 *   0x3e0003100000  (guard)            PROT_NONE above the stack top
 *   0x3e0004000000  WF_VM_BYTECODE     method i's bytecode at +0x10000*i (never mapped)
 *
 * Frame layouts. (sp, fp, pc) is a physical frame; its kind comes from the blob holding pc.
 *
 *  INTERPRETED (pc in the interpreter blob; fp-chained; rbp is the frame pointer)
 *      caller's frame ...                 <- caller sp = fp + 16
 *      fp+8    return address (caller pc)
 *      fp+0    caller's fp                <- fp
 *      fp-8    method handle (ASGST_Method, an entry of WF_VM_METHODS)
 *      fp-16   bcp (bytecode base of method + bci)
 *      ...     locals, expression stack
 *                                         <- sp   (sp <= fp - 16)
 *
 *  COMPILED (pc in a compiled blob; no frame pointer: rbp is a general register whose value
 *  the frame saves for its caller) — also NATIVE WRAPPER and STUB frames:
 *      caller's frame ...                 <- caller sp = sp + frame_size
 *      sp+S-8  return address (caller pc)
 *      sp+S-16 caller's fp (saved rbp)
 *      ...     spills, outgoing arguments
 *                                         <- sp
 *    Before the frame is built (first frame only, pc < start + frame_complete):
 *      sp+0    return address             caller sp = sp + 8, caller fp = fp (unchanged)
 *
 *  INLINED (virtual): a compiled pc inside a pc descriptor stands for a chain of scopes
 *  (method, bci), innermost first; the physical frame is reported once per scope:
 *      scope 0 (innermost)  ASGST_FRAME_JAVA_INLINED  \
 *      ...                                             } same pc, sp, fp
 *      scope n (outermost)  ASGST_FRAME_JAVA          /
 *
 *  NATIVE WRAPPER (Java calling C): a fixed-size frame like COMPILED; it sets rbp to
 *  sp+S-16, so the C frames it calls chain to it. Reported as ASGST_FRAME_JAVA_NATIVE.
 *  While C code runs, the thread's anchor holds this frame's (sp, fp, pc).
 *
 *  ENTRY (pc in the entry blob, the call stub: C calling Java; fp-chained):
 *      fp+8    return address (C caller pc)
 *      fp+0    caller's fp                <- fp
 *      fp-8    saved anchor sp  \  the thread's last Java frame when C called Java:
 *      fp-16   saved anchor fp   } the older Java segment continues there
 *      fp-24   saved anchor pc  /  (sp 0: no older Java frame; pc 0: use [sp - 8])
 *      ...                                <- sp   (sp <= fp - 24)
 *    Java-only walks jump from an entry frame to its saved anchor; walks with
 *    ASGST_INCLUDE_NON_JAVA_FRAMES follow the fp chain into the C caller instead.
 *
 *  C (pc in WF_VM_NATIVE_TEXT; VM and C code keep frame pointers):
 *      fp+8    return address             caller sp = fp + 16
 *      fp+0    caller's fp                <- fp
 *      ...     locals                     <- sp   (sp <= fp)
 *  The outermost frame of a thread has return address 0: the walk ends there.
 *
 * A typical stack, top (callee, low addresses) to bottom (caller):
 *   [C frames] native wrapper, compiled(+inlined), interpreted, ..., entry, [C], native
 *   wrapper, ..., entry (anchor sp 0), C thread start (return address 0).
 */
#ifndef WALKFUZZ_WF_VM_H
#define WALKFUZZ_WF_VM_H

#include <stddef.h>
#include <stdint.h>

/* cffi:begin */
#define WF_VM_ROOT 0x3e0000000000
#define WF_VM_THREAD 0x3e0000000800
#define WF_VM_LIVE_THREADS 0x3e0000001000
#define WF_VM_MAX_LIVE_THREADS 64
#define WF_VM_CLASSES 0x3e0000010000
#define WF_VM_METHODS 0x3e0000020000
#define WF_VM_BLOBS 0x3e0000040000
#define WF_VM_PCDESCS 0x3e0000060000
#define WF_VM_SEGMAP 0x3e0000180000
#define WF_VM_SEGMENT_SHIFT 6
#define WF_VM_STRINGS 0x3e0000200000
#define WF_VM_STRINGS_SIZE 0x100000
#define WF_VM_TABLES_END 0x3e0000300000
#define WF_VM_CODE_HEAP 0x3e0001000000
#define WF_VM_CODE_HEAP_SIZE 0x100000
#define WF_VM_NATIVE_TEXT 0x3e0002000000
#define WF_VM_NATIVE_TEXT_SIZE 0x100000
#define WF_VM_STACK 0x3e0003000000
#define WF_VM_STACK_SIZE 0x100000
#define WF_VM_STACK_TOP 0x3e0003100000
#define WF_VM_BYTECODE 0x3e0004000000
#define WF_VM_BYTECODE_STRIDE 0x10000
#define WF_VM_SPAN_END 0x3e0008000000

#define WF_VM_MAGIC 0x314d56465755
#define WF_VM_CLASS_STRIDE 64
#define WF_VM_METHOD_STRIDE 64
#define WF_VM_BLOB_STRIDE 64
#define WF_VM_PCDESC_STRIDE 144

#define WF_VM_MAX_CLASSES 256
#define WF_VM_MAX_METHODS 1024
#define WF_VM_MAX_BLOBS 1024
#define WF_VM_MAX_PCDESCS 8192
#define WF_VM_MAX_SCOPES 8
#define WF_VM_MAX_NAME 1024
#define WF_VM_MIN_FRAME_SIZE 16
#define WF_VM_MAX_FRAME_SIZE 16384
#define WF_VM_NO_METHOD 0xFFFFFFFF

/* The walk of one thread decodes at most this many physical frames (ASGST_WF_DEPTH_LIMIT). */
#define WF_WALK_MAX_DEPTH 8192

enum wf_blob_kind {
    WF_BLOB_INTERPRETER = 1,
    WF_BLOB_COMPILED = 2,
    WF_BLOB_NATIVE_WRAPPER = 3,
    WF_BLOB_STUB = 4,
    WF_BLOB_ENTRY = 5
};

/* Physical frame kinds: a blob kind, or C for a pc in WF_VM_NATIVE_TEXT. */
enum wf_frame_kind {
    WF_FRAME_INTERPRETED = 1,
    WF_FRAME_COMPILED = 2,
    WF_FRAME_NATIVE = 3,
    WF_FRAME_STUB = 4,
    WF_FRAME_ENTRY = 5,
    WF_FRAME_C = 6
};

enum wf_thread_state {
    WF_THREAD_NOT_JAVA = 0,      /* not a Java thread (GC, compiler, foreign) */
    WF_THREAD_NEW = 1,           /* created, not started */
    WF_THREAD_IN_JAVA = 2,       /* running Java code: registers are trustworthy */
    WF_THREAD_IN_VM = 3,         /* in the VM: walk from the anchor */
    WF_THREAD_IN_NATIVE = 4,     /* in C via a native wrapper: walk from the anchor */
    WF_THREAD_BLOCKED = 5,       /* blocked on a monitor: walk from the anchor */
    WF_THREAD_IN_TRANSITION = 6, /* between two states: unsafe */
    WF_THREAD_EXITING = 7        /* dying */
};

enum wf_thread_flags {
    WF_THREAD_SUSPENDED = 1, /* halted by a sampler: may be walked from another thread */
    WF_THREAD_CURRENT = 2    /* the walk runs on this thread (ASGST_WALK_SAME_THREAD) */
};

struct wf_vm_class {  /* 64 bytes; handle = its address */
    const char *name; /* NUL-terminated */
    uint32_t name_length;
    int32_t modifiers;
    const char *generic_name;
    uint32_t generic_name_length;
    uint32_t index;
    uint8_t reserved[32];
};

struct wf_vm_method { /* 64 bytes; ASGST_Method = its address */
    const struct wf_vm_class *klass;
    uintptr_t code_base; /* WF_VM_BYTECODE + index * WF_VM_BYTECODE_STRIDE */
    uint32_t code_size;  /* valid bci: 0 .. code_size-1 */
    int32_t modifiers;
    const char *name;
    const char *signature;
    const char *generic_signature;
    uint32_t name_length;
    uint32_t signature_length;
    uint32_t generic_signature_length;
    uint32_t index;
};

struct wf_vm_scope { /* one inlining level */
    const struct wf_vm_method *method;
    int32_t bci;
    uint32_t reserved;
};

struct wf_vm_pcdesc {  /* 144 bytes: pc range -> scopes, innermost first */
    uint32_t pc_begin; /* offsets from the blob's start, begin < end */
    uint32_t pc_end;
    uint32_t scope_count; /* 1 .. WF_VM_MAX_SCOPES */
    uint32_t reserved;
    struct wf_vm_scope scopes[8];
};

struct wf_vm_blob {  /* 64 bytes */
    uintptr_t start; /* [start, end) inside the code heap */
    uintptr_t end;
    uint32_t kind;                     /* wf_blob_kind */
    int32_t comp_level;                /* COMPILED: 1..4, else 0 */
    uint32_t frame_size;               /* COMPILED, NATIVE_WRAPPER, STUB: bytes incl. return pc */
    uint32_t frame_complete;           /* pc offset from which the frame is built */
    const struct wf_vm_method *method; /* COMPILED, NATIVE_WRAPPER; else NULL */
    const struct wf_vm_pcdesc *descs;  /* sorted, disjoint */
    uint32_t desc_count;
    uint32_t index;
    uint64_t reserved;
};

struct wf_vm_anchor { /* last Java frame, set on Java -> VM/native transitions */
    uintptr_t sp;     /* 0: not set */
    uintptr_t fp;
    uintptr_t pc; /* 0: the return address at [sp - 8] */
};

struct wf_vm_thread {   /* at WF_VM_THREAD */
    uint32_t state;     /* wf_thread_state */
    uint32_t flags;     /* wf_thread_flags */
    uintptr_t stack_lo; /* the stack is [stack_lo, stack_hi), both 8-aligned */
    uintptr_t stack_hi; /* == WF_VM_STACK_TOP */
    struct wf_vm_anchor anchor;
};

struct wf_vm {        /* at WF_VM_ROOT */
    uint64_t magic;   /* WF_VM_MAGIC when a case is mapped, else 0 */
    uint32_t version; /* 1 */
    uint32_t class_count;
    uint32_t method_count;
    uint32_t blob_count;
    uint32_t desc_count;
    uint32_t segmap_count;              /* segments covered by the segment map */
    const struct wf_vm_class *classes;  /* == WF_VM_CLASSES */
    const struct wf_vm_method *methods; /* == WF_VM_METHODS */
    const struct wf_vm_blob *blobs;     /* == WF_VM_BLOBS */
    uintptr_t code_heap_lo, code_heap_hi;
    uintptr_t native_text_lo, native_text_hi;
    struct wf_vm_thread *thread; /* == WF_VM_THREAD; NULL when nothing is mapped */
    /* The live VM (wf_live_vm.h) has one record per worker thread and `thread` NULL: a walker
       picks the record whose [stack_lo, stack_hi) holds the walked sp (the ucontext's RSP,
       FromFrame's sp, or its own stack for calls without either). 0/NULL for synthetic cases. */
    uint32_t live_thread_count; /* <= WF_VM_MAX_LIVE_THREADS */
    uint32_t live_reserved;
    struct wf_vm_thread *live_threads; /* == WF_VM_LIVE_THREADS, stride sizeof(wf_vm_thread) */
    const uint16_t *segmap;            /* == WF_VM_SEGMAP; see below */
};

/* The segment map (like HotSpot's CodeHeap segmap) finds a pc's blob in O(1): for segment s
   (code heap bytes [s*64, s*64+64)), s < segmap_count, segmap[s] is the number of blobs whose
   start is at or before the segment's last byte, so the blob holding a pc of segment s, if
   any, is blobs[segmap[s]-1] or one of the few before it that start inside the segment.
   Derived from the blob table when a case is mapped; not part of the case file. */

/* Reserve the span and map the regions (idempotent). 0, or -errno. Not signal-safe. */
int wf_vm_map_init(void);
/* 1 if the span is mapped in this process. Async-signal-safe. */
int wf_vm_is_mapped(void);
/* cffi:end */

/* The root, for C walkers. Valid after wf_vm_map_init(). */
#define WF_VM ((const struct wf_vm *)(uintptr_t)WF_VM_ROOT)

/* The handle of method i / class i (valid if i < count). */
static inline uintptr_t wf_vm_method_handle(uint32_t i) {
    return (uintptr_t)WF_VM_METHODS + (uintptr_t)i * WF_VM_METHOD_STRIDE;
}
static inline uintptr_t wf_vm_class_handle(uint32_t i) {
    return (uintptr_t)WF_VM_CLASSES + (uintptr_t)i * WF_VM_CLASS_STRIDE;
}
/* The method behind a handle, or NULL if it is not one. Async-signal-safe. */
static inline const struct wf_vm_method *wf_vm_method_at(uintptr_t h) {
    const struct wf_vm *vm = WF_VM;
    uintptr_t off = h - (uintptr_t)WF_VM_METHODS;
    if (h < (uintptr_t)WF_VM_METHODS || off % WF_VM_METHOD_STRIDE != 0 ||
        off / WF_VM_METHOD_STRIDE >= vm->method_count)
        return NULL;
    return (const struct wf_vm_method *)h;
}
/* The thread record a walk of `sp` reads: the synthetic case's one thread, else the live
   worker whose stack holds sp; NULL if none. Async-signal-safe. */
static inline const struct wf_vm_thread *wf_vm_thread_for(uintptr_t sp) {
    const struct wf_vm *vm = WF_VM;
    if (vm->thread != NULL) return vm->thread;
    for (uint32_t i = 0; i < vm->live_thread_count && i < WF_VM_MAX_LIVE_THREADS; i++) {
        const struct wf_vm_thread *t = &vm->live_threads[i];
        if (sp >= t->stack_lo && sp < t->stack_hi) return t;
    }
    return NULL;
}
/* The class behind a handle, or NULL. Async-signal-safe. */
static inline const struct wf_vm_class *wf_vm_class_at(uintptr_t h) {
    const struct wf_vm *vm = WF_VM;
    uintptr_t off = h - (uintptr_t)WF_VM_CLASSES;
    if (h < (uintptr_t)WF_VM_CLASSES || off % WF_VM_CLASS_STRIDE != 0 ||
        off / WF_VM_CLASS_STRIDE >= vm->class_count)
        return NULL;
    return (const struct wf_vm_class *)h;
}

#endif /* WALKFUZZ_WF_VM_H */
