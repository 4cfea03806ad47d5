/* ref_walker.c — the reference walker: the ASGST iterator API over the simulated VM.
 *
 * It never crashes and never hangs, whatever the case: every word it reads is checked to be
 * an aligned word of the thread's stack (an fp-based frame's slots by one check of its fp,
 * a fixed-size frame's saved fp and return address by one check of the pair), every pc is
 * looked up in the blob table before it is trusted, every method handle is validated, sp
 * strictly grows and at most WF_WALK_MAX_DEPTH physical frames are decoded. Each way out of
 * the walk is an error code of asgst.h with its reason next to it. The rules it implements,
 * and the order of its checks, are docs/case-format.md §4; the Python spec
 * (fuzz/targets/minivm/spec.py) implements the same.
 *
 * In the walkfuzz core the ASGST_* symbols are hidden (a walker library loaded next to the
 * core binds to its own); build with -DWF_REF_EXPORT to make a loadable walker library.
 */
#define _GNU_SOURCE
#ifndef WF_REF_EXPORT
#pragma GCC visibility push(hidden)
#endif
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "asgst.h"
#include "wf_arch.h"
#include "wf_ucontext.h"
#include "wf_vm.h"
#include "wf_queue_walk.h" /* queue: wf_ref_run_at */

/* Sender computations return STEPPED, or the code that ends the walk (0 = end, < 0 error). */
#define STEPPED 1

typedef struct ref_frame {
    uintptr_t sp, fp, pc;
} ref_frame;

struct _ASGST_Iterator {
    const struct wf_vm_thread *thread;
    uintptr_t stack_lo, stack_hi; /* the thread's, copied: read on every step */
    uintptr_t words, pairs;       /* its words, and pairs of adjacent words (word_index) */
    int32_t options;
    ref_frame start; /* for ASGST_RewindIterator */
    ref_frame cur;   /* the current physical frame */
    int first;       /* cur is the first physical frame of the walk */
    int unbuilt;     /* cur is a first frame with only its return address on
                        the stack (docs §4.3): not built yet, or popped */
    int decoded;     /* cur was decoded (and its frames emitted or skipped) */
    int state;       /* 1 walking, 0 ended, < 0 error: sticky */
    uint32_t depth;  /* physical frames decoded */
    /* what decoding cur found */
    int kind; /* wf_frame_kind */
    const struct wf_vm_blob *blob;
    const struct wf_vm_pcdesc *desc;
    const struct wf_vm_method *method;   /* interpreted frame's method */
    int bci;                             /* interpreted frame's bci */
    const struct wf_vm_scope *scope;     /* cur's scopes not emitted yet: scope .. */
    const struct wf_vm_scope *scope_end; /* .. up to scope_end (equal: none) */
    int level;                           /* cur's blob->comp_level, kept for its inlined scopes:
                                            one dependent load less per scope */
    uintptr_t link;                      /* where cur's sender's (fp, pc) pair lies, 0: no link */
    /* queue (wf_queue_walk.h): a resumed queue element's first frame */
    uintptr_t top_method, top_bcp; /* != 0: interpreted first frame's method and bcp */
    int start_error;               /* != 0: born ended with this code */
};

/* ---- checked reads ----------------------------------------------------------------- */

/* The index of the word at addr in the stack, or a number >= it->words if addr is no aligned
   word of it: rotating the offset right by 3 moves a misaligned offset's low bits to the top,
   and an address below the stack wrapped to a huge offset. So one compare checks alignment
   and both bounds (the stack's bounds are 8-aligned, wf_vm.h). */
static inline uintptr_t word_index(const ASGST_Iterator *it, uintptr_t addr) {
    uintptr_t off = addr - it->stack_lo;
    return off >> 3 | off << 61;
}

/* The word at addr if it is an aligned word inside the thread's stack. */
static int stack_word(const ASGST_Iterator *it, uintptr_t addr, uintptr_t *value) {
    if (word_index(it, addr) >= it->words) return 0;
    *value = *(const uintptr_t *)addr;
    return 1;
}

/* addr and addr + 8 are aligned words inside the thread's stack. */
static inline int pair_in_stack(const ASGST_Iterator *it, uintptr_t addr) {
    return word_index(it, addr) < it->pairs;
}

/* A slot of an fp-based frame whose decode passed check_fp (below): that check put every
   slot of the frame, fp - below .. fp + 8, inside the stack and aligned, so it was the one
   range check of all of them and the slot is read as it is. */
static inline uintptr_t frame_slot(uintptr_t fp, int offset) {
    return *(const uintptr_t *)(fp + offset);
}

/* The segment map as if it started at address 0, so that pc >> shift indexes it. */
#define SEGMAP_OF_ADDRESS_0 \
    (WF_VM_SEGMAP - (WF_VM_CODE_HEAP >> WF_VM_SEGMENT_SHIFT) * sizeof(uint16_t))
_Static_assert(WF_VM_CODE_HEAP % (1 << WF_VM_SEGMENT_SHIFT) == 0 &&
                   sizeof(struct wf_vm_blob) == WF_VM_BLOB_STRIDE,
               "the heap starts a segment; the blob table is an array of struct wf_vm_blob");

/* The blob holding pc, through the VM's segment map (wf_vm.h); NULL if none. Bounded: at
   most one step back per blob starting inside pc's 64-byte segment. A pc below the code heap
   wraps to a segment number above 2^57, far beyond any 32-bit segmap_count: one compare
   rejects both sides of the heap. Inlined: gcc kept it a call, and the call, its return and
   the moves around it showed in the walk bench's time per physical frame. */
static inline __attribute__((always_inline)) const struct wf_vm_blob *find_blob(uintptr_t pc) {
    const struct wf_vm *vm = WF_VM;
    if ((pc - WF_VM_CODE_HEAP) >> WF_VM_SEGMENT_SHIFT >= vm->segmap_count) return NULL;
    /* segmap[(pc - heap) >> shift], then blobs[started - 1]: both tables lie at fixed
       addresses (wf_vm.h). wf_arch_opaque_pair makes gcc keep the two bases in registers rather
       than fold the constants into each address, which put an add on the walk's chain of
       dependent loads (pc -> segment -> blob -> frame size): 1% of the bench. */
    uintptr_t segmap = SEGMAP_OF_ADDRESS_0, blobs_before = WF_VM_BLOBS - WF_VM_BLOB_STRIDE;
    wf_arch_opaque_pair(&segmap, &blobs_before);
    uintptr_t started =
        *(const uint16_t *)(segmap + (pc >> WF_VM_SEGMENT_SHIFT) * sizeof(uint16_t));
    if (started == 0) return NULL;
    const struct wf_vm_blob *b =
        (const struct wf_vm_blob *)(blobs_before + started * WF_VM_BLOB_STRIDE);
    while (pc < b->start) {
        if (b == (const struct wf_vm_blob *)WF_VM_BLOBS) return NULL;
        b--;
    }
    return pc < b->end ? b : NULL; /* b->start <= pc here */
}

/* The pc descriptor of a compiled blob holding pc; NULL if none. The descriptors are sorted
   and disjoint, so the only one that can hold pc is the first that ends above it: a binary
   search for it whose halving steps are conditional moves, not branches (which descriptor a
   return address hits is data, and mispredicted branches are most of a walk's cost). */
static const struct wf_vm_pcdesc *find_desc(const struct wf_vm_blob *b, uintptr_t pc) {
    uintptr_t off = pc - b->start;
    const struct wf_vm_pcdesc *d = b->descs;
    uint32_t n = b->desc_count;
    if (n == 0) return NULL;
    while (n > 1) {
        uint32_t half = n / 2;
        const struct wf_vm_pcdesc *upper = d + half;
        /* the hint asks for a conditional move: without it gcc emits a branch */
        d = __builtin_expect_with_probability(upper[-1].pc_end <= off, 1, 0.5) ? upper : d;
        n -= half;
    }
    return d->pc_begin <= off && off < d->pc_end ? d : NULL;
}

/* A frame in a blob has the blob's kind: wf_vm.h numbers the two kinds alike. */
#define SAME_KIND(frame, blob) ((int)(frame) == (int)(blob))
_Static_assert(SAME_KIND(WF_FRAME_INTERPRETED, WF_BLOB_INTERPRETER) &&
                   SAME_KIND(WF_FRAME_COMPILED, WF_BLOB_COMPILED) &&
                   SAME_KIND(WF_FRAME_NATIVE, WF_BLOB_NATIVE_WRAPPER) &&
                   SAME_KIND(WF_FRAME_STUB, WF_BLOB_STUB) &&
                   SAME_KIND(WF_FRAME_ENTRY, WF_BLOB_ENTRY),
               "the frame kind of a blob's frame is the blob's kind");
#undef SAME_KIND

/* pc lies where a blob is still building its frame (frame_complete is 0 for ENTRY blobs). */
static int building_frame(const struct wf_vm_blob *b, uintptr_t pc) {
    return pc < b->start + b->frame_complete;
}

static int has_fixed_frame(int kind) {
    return kind == WF_FRAME_COMPILED || kind == WF_FRAME_NATIVE || kind == WF_FRAME_STUB;
}

/* The blob kinds whose frame_complete counts (ENTRY's is 0): INTERPRETER .. STUB. */
static int builds_frame(uint32_t kind) {
    return kind >= WF_BLOB_INTERPRETER && kind <= WF_BLOB_STUB;
}

/* x86-64 `ret`: at it, the frame is popped and sp points at the return address. */
#define RET_OPCODE 0xC3

/* A first frame in a COMPILED, NATIVE, STUB or INTERPRETER blob is unbuilt while its prologue
   has not built the frame (pc before frame_complete) or once its epilogue has popped it (the
   instruction at pc is a `ret`, as async-profiler checks before trusting a frame): only the
   return address is at sp. pc lies in a blob, so in the mapped code heap: the read is safe.
   Callers' pcs are return addresses and never lie before frame_complete (decode checks). */
static int first_frame_unbuilt(const struct wf_vm_blob *b, uint32_t kind, uintptr_t pc) {
    if (!builds_frame(kind)) return 0;
    return building_frame(b, pc) || *(const volatile uint8_t *)pc == RET_OPCODE;
}

/* The current frame is unbuilt: its sender is at sp (docs §4.4). */
static int frame_not_built(const ASGST_Iterator *it) { return it->unbuilt; }

/* ---- decoding one physical frame (docs §4.3) ----------------------------------------- */

/* The range check of an fp-based frame's slots: fp must leave `below` bytes of frame above
   sp (itself checked to be inside the stack) and two words (saved fp, return address) under
   stack_hi. Once it passed, the frame's slots are read with frame_slot. */
static int check_fp(const ASGST_Iterator *it, uintptr_t below) {
    uintptr_t fp = it->cur.fp;
    return pair_in_stack(it, fp) && fp >= it->cur.sp + below;
}

static int decode_interpreted(ASGST_Iterator *it) {
    if (!check_fp(it, 16)) return ASGST_WF_BAD_FP; /* slots outside the frame */
    uintptr_t method = frame_slot(it->cur.fp, -8), bcp = frame_slot(it->cur.fp, -16);
    if (it->first && it->top_method != 0) { /* queue element: its slots moved on since */
        method = it->top_method;
        bcp = it->top_bcp;
    }
    it->method = wf_vm_method_at(method);
    if (it->method == NULL) return ASGST_WF_BAD_METHOD; /* slot holds no method */
    uintptr_t bci = bcp - it->method->code_base;
    if (bcp < it->method->code_base || bci >= it->method->code_size)
        return ASGST_WF_BAD_BCP; /* bcp outside the bytecode */
    it->bci = (int)bci;
    return 0;
}

/* ---- the sender of a decoded frame (docs §4.4) --------------------------------------- */

static int sender_from_fp(const ASGST_Iterator *it, ref_frame *s) {
    s->sp = it->cur.fp + 16;
    s->pc = frame_slot(it->cur.fp, 8);
    s->fp = frame_slot(it->cur.fp, 0);
    return STEPPED;
}

/* The sender's sp of a built fixed-size frame at sp. */
static uintptr_t fixed_sender_sp(const struct wf_vm_blob *b, uintptr_t sp) {
    return sp + b->frame_size;
}

static int sender_of_fixed_frame(const ASGST_Iterator *it, ref_frame *s) {
    if (frame_not_built(it)) {
        s->sp = it->cur.sp + 8;
        s->fp = it->cur.fp;
        stack_word(it, it->cur.sp, &s->pc);
        return STEPPED;
    }
    s->sp = fixed_sender_sp(it->blob, it->cur.sp);
    /* A built frame comes here only when the pair at its link, sp + frame_size - 16, is not
       inside the stack (step_to_sender). sp is an aligned word of the stack (decode_and_emit)
       and frame sizes are multiples of 8 and at least 16 (the decoder's check_blob; the live
       VM's are 48 + 16k and 32): the pair is aligned and not below sp, so it runs off the top. */
    return ASGST_WF_BAD_SP;
}

static int sender_of_entry(const ASGST_Iterator *it, ref_frame *s) {
    if (it->options & ASGST_INCLUDE_NON_JAVA_FRAMES) return sender_from_fp(it, s);
    uintptr_t fp = it->cur.fp;
    s->sp = frame_slot(fp, -8);
    if (s->sp == 0) return ASGST_NO_FRAME; /* no older Java segment */
    s->fp = frame_slot(fp, -16);
    s->pc = frame_slot(fp, -24);
    if (s->pc == 0 && !stack_word(it, s->sp - 8, &s->pc))
        return ASGST_WF_BAD_SP; /* saved anchor sp off the stack */
    return STEPPED;
}

/* Step from the decoded cur (*at, its registers) to its sender: into it->cur and *at.
   The decode found the frame's link, where its sender's saved fp and return pc lie: fp for
   an fp-based frame (INTERPRETED, C), sp + frame_size - 16 for a built fixed-size frame.
   One range check of that pair takes both rules of §4.4 with no branch on the kind: which
   kind a frame has is data, and a mispredicted branch costs as much as the rest of a step.
   A frame without a link (ENTRY, a first frame not built yet) or whose
   pair is not inside the stack takes its kind's rule. */
static int step_to_sender(ASGST_Iterator *it, ref_frame *at) {
    ref_frame s = {0, 0, 0};
    int rc = STEPPED;
    uintptr_t link = it->link;
    if (pair_in_stack(it, link)) {
        s.sp = link + 16;
        s.fp = *(const uintptr_t *)link; /* range checked just above */
        s.pc = *(const uintptr_t *)(link + 8);
    } else if (it->kind == WF_FRAME_ENTRY) {
        rc = sender_of_entry(it, &s);
    } else {
        rc = sender_of_fixed_frame(it, &s); /* COMPILED, NATIVE, STUB */
    }
    if (rc != STEPPED) return rc;
    if (s.pc == 0) return ASGST_NO_FRAME;       /* outermost frame: the end */
    if (s.sp <= at->sp) return ASGST_WF_BAD_SP; /* sp must strictly grow */
    it->cur = s;
    *at = s;
    it->first = 0;
    it->unbuilt = 0;
    it->decoded = 0;
    return STEPPED;
}

/* ---- emitting frames ----------------------------------------------------------------- */

static void fill(const ASGST_Iterator *it, ASGST_Frame *f, int type, int level, int bci,
                 const void *method) {
    f->type = (uint8_t)type;
    f->comp_level = level;
    f->bci = bci;
    f->method = (ASGST_Method)method;
    f->pc = (void *)it->cur.pc;
    f->sp = (void *)it->cur.sp;
    f->fp = (void *)it->cur.fp;
}

/* The scopes of a pc descriptor in the order they are reported: innermost first, as the
   descriptor lists them; the outermost one is the JAVA frame, the others are inlined into it. */
#define FIRST_SCOPE(d) (&(d)->scopes[0])
#define NEXT_SCOPE(s) ((s) + 1)
#define END_SCOPE(d) (&(d)->scopes[(d)->scope_count])

/* Scope s of cur's pc descriptor, with next the scope after it (scope_end: none). */
static void fill_scope(const ASGST_Iterator *it, ASGST_Frame *f, const struct wf_vm_scope *s,
                       const struct wf_vm_scope *next) {
    int type = next != it->scope_end ? ASGST_FRAME_JAVA_INLINED : ASGST_FRAME_JAVA;
    fill(it, f, type, it->level, s->bci, s->method);
}

/* A stub, entry or C frame: reported only with ASGST_INCLUDE_NON_JAVA_FRAMES. */
static int emit_non_java(const ASGST_Iterator *it, ASGST_Frame *f) {
    if (!(it->options & ASGST_INCLUDE_NON_JAVA_FRAMES)) return 0; /* Java-only: walk through */
    fill(it, f, ASGST_FRAME_NON_JAVA, -1, -1, NULL);
    return 1;
}

/* A compiled frame: its outermost scope, or with a pc descriptor its innermost scope (the
   others are left in scope .. scope_end); 0 for a descriptor without scopes. */
static int emit_compiled(ASGST_Iterator *it, ASGST_Frame *f) {
    const struct wf_vm_pcdesc *d = it->desc;
    if (d == NULL) {
        fill(it, f, ASGST_FRAME_JAVA, it->blob->comp_level, -1, it->blob->method);
        return 1;
    }
    if (d->scope_count == 0) return 0;
    const struct wf_vm_scope *s = FIRST_SCOPE(d);
    it->level = it->blob->comp_level;
    it->scope = NEXT_SCOPE(s);
    it->scope_end = END_SCOPE(d);
    fill_scope(it, f, s, it->scope);
    return 1;
}

/* ---- decoding one physical frame (docs §4.3) and emitting its first frame ----------- */

/* Decode cur and, if its frames are reported, emit the first one: 1 emitted, 0 walked
   through (a non-Java frame of a Java-only walk, or a descriptor without scopes), < 0 the
   error that ends the walk. One chain of tests on the frame kind serves both: tests, not a
   switch: gcc makes a switch an indirect jump through a table, and with it the walk's speed
   swung with code layout (one 3-cycle instruction added on the walk's chain cost the bench
   40% with the switch, 5% with the tests). */
static inline __attribute__((always_inline)) int decode_and_emit(ASGST_Iterator *it, ASGST_Frame *f,
                                                                 const ref_frame *at) {
    uintptr_t sp = at->sp, pc = at->pc;
    if (word_index(it, sp) >= it->words) return ASGST_WF_BAD_SP; /* sp outside the stack */
    /* The code heap and the native text are disjoint, and every blob lies in the heap: the
       blob lookup first, as most frames are Java frames; a pc in no blob may be C code. */
    const struct wf_vm_blob *b = find_blob(pc);
    if (b == NULL) {
        if (pc < WF_VM_NATIVE_TEXT || pc >= WF_VM_NATIVE_TEXT + WF_VM_NATIVE_TEXT_SIZE)
            return ASGST_WF_BAD_PC; /* pc is no code we know */
        it->kind = WF_FRAME_C;
        if (!check_fp(it, 0)) return ASGST_WF_BAD_FP; /* fp chain broken */
        it->link = at->fp;
        return emit_non_java(it, f);
    }
    it->blob = b;
    uint32_t kind = b->kind;
    it->kind = (int)kind;
    uintptr_t link = kind == WF_BLOB_INTERPRETER ? at->fp : fixed_sender_sp(b, sp) - 16;
    if (it->first) {
        it->unbuilt = first_frame_unbuilt(b, kind, pc);
        if (it->unbuilt) link = 0; /* the sender is at sp */
    } else if (building_frame(b, pc) && builds_frame(kind)) {
        return ASGST_WF_BAD_PC; /* return address in a prologue */
    }
    it->link = link;
    /* The next step reads the pair at link, after this call returns and the next one loads
       link back from the iterator: start its cache miss now. A prefetch reads nothing (it
       cannot fault, whatever link is); 2% of the bench. */
    __builtin_prefetch((const void *)link);
    if (kind == WF_BLOB_COMPILED) {
        it->desc = find_desc(b, pc);
        return emit_compiled(it, f);
    }
    if (kind == WF_BLOB_INTERPRETER) {
        if (it->unbuilt) return 0; /* no frame holds its method and bcp: walk through */
        int rc = decode_interpreted(it);
        if (rc != 0) return rc;
        fill(it, f, ASGST_FRAME_JAVA, 0, it->bci, it->method);
        return 1;
    }
    if (kind == WF_BLOB_NATIVE_WRAPPER) {
        fill(it, f, ASGST_FRAME_JAVA_NATIVE, -1, -1, b->method);
        return 1;
    }
    if (kind == WF_BLOB_STUB) {
        return emit_non_java(it, f);
    }
    /* ENTRY: the decoder refuses any other kind (check_blob) and the live VM writes none; a
       kind that were anything else would still only read the anchor slots check_fp bounds. */
    it->link = 0;
    if (!check_fp(it, 24)) return ASGST_WF_BAD_FP; /* anchor slots out of the frame */
    return emit_non_java(it, f);
}

/* The next inlined scope of the decoded compiled frame (scope != scope_end). */
static int emit_next_scope(ASGST_Iterator *it, ASGST_Frame *f) {
    const struct wf_vm_scope *s = it->scope;
    it->scope = NEXT_SCOPE(s);
    fill_scope(it, f, s, it->scope);
    return 1;
}

/* ---- the iterator API ---------------------------------------------------------------- */

static int finish(ASGST_Iterator *it, int code) {
    it->state = code;
    return code;
}

/* Step to the next physical frame that reports a frame and emit its first one (docs §4.2
   step 2). `restrict`: the frame is never the iterator, so its fields stay in registers.
   The registers of the frame being decoded are kept in `at` too: a walk is a chain of
   dependent loads (pc -> blob -> frame size -> the sender's pc), and reading them back from
   the iterator would add a store-to-load forwarding to every link of it. */
static int next_physical(ASGST_Iterator *restrict it, ASGST_Frame *restrict frame) {
    ref_frame at = it->cur;
    for (;;) {
        if (it->decoded) {
            int rc = step_to_sender(it, &at);
            if (rc != STEPPED) return finish(it, rc); /* end of stack, or bad sender */
        }
        if (it->depth >= WF_WALK_MAX_DEPTH)
            return finish(it, ASGST_WF_DEPTH_LIMIT); /* too deep: stop, don't hang */
        int rc = decode_and_emit(it, frame, &at);
        if (rc < 0) return finish(it, rc); /* the frame itself is bad */
        it->depth++;
        it->decoded = 1;
        if (rc == 1) return 1;
        /* not reported (a non-Java frame in a Java-only walk): walk through it */
    }
}

int ASGST_NextFrame(ASGST_Iterator *it, ASGST_Frame *frame) {
    if (it == NULL || frame == NULL) return ASGST_WF_BAD_ARGUMENT; /* nothing to walk or fill */
    /* Scopes are left only after a frame was just emitted, so only while the state is 1:
       asking for them first answers as the sticky check first would, a test sooner. */
    if (it->scope != it->scope_end) return emit_next_scope(it, frame); /* next inlined scope */
    if (it->state != 1) return it->state;                              /* ended before: sticky */
    return next_physical(it, frame);
}

void ASGST_RewindIterator(ASGST_Iterator *it) {
    if (it == NULL) return;
    it->cur = it->start;
    it->first = 1;
    it->unbuilt = 0;
    it->decoded = 0;
    it->scope = it->scope_end = NULL;
    it->link = 0;
    it->state = it->start_error != 0 ? it->start_error : 1;
    it->depth = 0;
}

int ASGST_State(ASGST_Iterator *it) { return it == NULL ? ASGST_NO_FRAME : it->state; }

/* The words of t's stack, and the pairs of adjacent ones. */
static uintptr_t stack_words(const struct wf_vm_thread *t) {
    return t->stack_hi > t->stack_lo ? (t->stack_hi - t->stack_lo) / 8 : 0;
}
static uintptr_t stack_pairs(const struct wf_vm_thread *t) {
    return stack_words(t) > 0 ? stack_words(t) - 1 : 0;
}

/* Thread checks of docs §4.1 steps 2-4; 0 if the thread may be walked. */
static int check_thread(const struct wf_vm_thread *t, int32_t options) {
    if (t == NULL) return ASGST_NO_THREAD; /* nothing mapped */
    if (t->state == WF_THREAD_NOT_JAVA && !(options & ASGST_INCLUDE_NON_JAVA_FRAMES))
        return ASGST_NO_THREAD; /* not a Java thread */
    uint32_t needed = (options & ASGST_WALK_SAME_THREAD) ? WF_THREAD_CURRENT : WF_THREAD_SUSPENDED;
    if (!(t->flags & needed)) return ASGST_NO_THREAD; /* running elsewhere / not ours */
    if (t->state == WF_THREAD_EXITING) return ASGST_THREAD_EXIT;
    if (t->state == WF_THREAD_NEW || t->state == WF_THREAD_IN_TRANSITION)
        return ASGST_UNSAFE_STATE; /* frames in flux */
    return 0;
}

/* The thread whose stack holds `sp` (wf_vm_thread_for: the synthetic case's only thread). */
static const struct wf_vm_thread *mapped_thread(uintptr_t sp) {
    return WF_VM->magic == WF_VM_MAGIC ? wf_vm_thread_for(sp)
                                       : NULL; /* span mapped by the harness */
}

/* An iterator over t's stack from start, not rewound yet. */
static ASGST_Iterator iterator_on(const struct wf_vm_thread *t, int32_t options, ref_frame start) {
    return (ASGST_Iterator){.thread = t,
                            .stack_lo = t->stack_lo,
                            .stack_hi = t->stack_hi,
                            .words = stack_words(t),
                            .pairs = stack_pairs(t),
                            .options = options,
                            .start = start};
}

static int run(const struct wf_vm_thread *t, ref_frame start, int32_t options,
               ASGST_IteratorHandler fun, void *argument) {
    ASGST_Iterator it = iterator_on(t, options, start);
    ASGST_RewindIterator(&it);
    fun(&it, argument);
    return t->state == WF_THREAD_NOT_JAVA ? ASGST_CPP_TRACE : ASGST_JAVA_TRACE;
}

/* The start frame from the anchor (docs §4.1 step 5). */
static int anchor_frame(const struct wf_vm_thread *t, ref_frame *f) {
    if (t->anchor.sp == 0) return ASGST_NO_TOP_JAVA_FRAME; /* outside Java, no anchor */
    f->sp = t->anchor.sp;
    f->fp = t->anchor.fp;
    f->pc = t->anchor.pc;
    uintptr_t slot = f->sp - 8;
    if (f->pc == 0) {
        if (slot % 8 != 0 || slot < t->stack_lo || slot > t->stack_hi - 8)
            return ASGST_WF_BAD_SP; /* can't fetch the anchor's pc */
        f->pc = *(const uintptr_t *)slot;
    }
    return 0;
}

int ASGST_RunWithIterator(void *ucontext, int32_t options, ASGST_IteratorHandler fun,
                          void *argument) {
    if (fun == NULL) return ASGST_WF_BAD_ARGUMENT;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0); /* no ucontext: our own stack */
    const struct wf_vm_thread *t = mapped_thread(ucontext ? wf_uc_sp(ucontext) : here);
    int rc = check_thread(t, options);
    if (rc != 0) return rc;
    ref_frame start;
    if (t->state == WF_THREAD_IN_JAVA || t->state == WF_THREAD_NOT_JAVA) {
        if (ucontext == NULL) return ASGST_WF_BAD_ARGUMENT; /* registers needed */
        start = (ref_frame){wf_uc_sp(ucontext), wf_uc_fp(ucontext), wf_uc_pc(ucontext)};
    } else {
        rc = anchor_frame(t, &start);
        if (rc != 0) return rc;
    }
    return run(t, start, options, fun, argument);
}

int ASGST_RunWithIteratorFromFrame(void *sp, void *fp, void *pc, int32_t options,
                                   ASGST_IteratorHandler fun, void *argument) {
    if (fun == NULL) return ASGST_WF_BAD_ARGUMENT;
    const struct wf_vm_thread *t = mapped_thread((uintptr_t)sp);
    int rc = check_thread(t, options);
    if (rc != 0) return rc;
    ref_frame start = {(uintptr_t)sp, (uintptr_t)fp, (uintptr_t)pc};
    return run(t, start, options, fun, argument);
}

/* queue: resume a queue element at a safepoint (wf_queue_walk.h). */
void wf_ref_run_at(const struct wf_vm_thread *t, const wf_walk_start *start, int32_t options,
                   ASGST_IteratorHandler fun, void *arg) {
    ASGST_Iterator it = iterator_on(t, options, (ref_frame){start->sp, start->fp, start->pc});
    it.top_method = start->top_method;
    it.top_bcp = start->top_bcp;
    it.start_error = start->error;
    ASGST_RewindIterator(&it);
    fun(&it, arg);
}

/* queue: find_blob for Enqueue's caller checks (wf_queue_walk.h). */
const struct wf_vm_blob *wf_ref_find_blob(uintptr_t pc) { return find_blob(pc); }

/* queue: where the decoded current frame keeps its return address (wf_queue_walk.h):
   the word a return pops, so a changed word means another frame lives there now. */
uintptr_t wf_ref_return_slot(const ASGST_Iterator *it) {
    if (!it->decoded) return 0;
    if (frame_not_built(it)) return it->cur.sp;
    if (!has_fixed_frame(it->kind)) return it->cur.fp + 8; /* fp-chained kinds */
    return it->cur.sp + it->blob->frame_size - 8;
}
