/* live_emit.c — x86-64 code generation for the live VM: compiled methods (inlining included),
 * native wrappers and the safepoint stub, with their blobs, pc descriptors and transition
 * windows written into the tables of wf_vm.h.
 *
 * COMPILED blob of method M, frame size S (a multiple of 16, so rsp is 16-aligned at calls):
 *
 *   +0   mov [rsp-8], rbp          <- entry; saves rbp into what becomes sp+S-16 (the kernel
 *                                     never writes the 128-byte red zone below rsp)
 *        sub rsp, S-8
 *   fc   ...body...                <- frame_complete
 *        mov rbp, [rsp+S-16]
 *        add rsp, S-8
 *        ret                       <- the frame is gone: walkers see the `ret` at pc and
 *                                     take the caller from [sp] (case-format §4.3)
 *
 *        caller's frame ...        <- caller sp = sp + S
 *        sp+S-8   return address
 *        sp+S-16  caller's rbp
 *        sp+8*k   loop counter of inline level k (k = 0, 1, 2)
 *                                  <- sp
 *
 * pc descriptors cover every pc of the blob. A descriptor boundary sits exactly after each
 * instruction that changes the shadow stack's top (the bci store, the `inc depth` that
 * publishes an inlined callee, the `dec depth` that drops it), so the walker's view of a pc
 * and the shadow stack agree at every instruction except the CALL windows.
 *
 * C2I ADAPTER (STUB, S = 32): how compiled code calls an interpreted method. It gives the
 * interpreter's first instructions (rbp still the caller's) a frame that walks right: rbp
 * points at the adapter's saved-rbp slot, with the callee's method and bci-0 bcp under it,
 * so a walker at the interpreter's entry sees the callee, then the compiled caller.
 *
 *   +0   mov [rsp-8], rbp ; sub rsp, 24                  fc after this
 *        lea rbp, [rsp+16]             fp-8 = rsp+8, fp-16 = rsp+0
 *        [rsp+8] = callee handle ; [rsp+0] = callee code_base (bci 0)
 *        mov rax, interpreter ; call rax
 *        mov rbp, [rsp+16] ; add rsp, 24 ; ret
 *   The whole blob is a CALL window: the shadow stack has the callee from the caller's
 *   `inc depth` to its `dec depth`, the adapter is all in between.
 *
 * NATIVE WRAPPER / SAFEPOINT STUB (transition frame, S = 32):
 *
 *   +0   mov [rsp-8], rbp ; sub rsp, 24                  fc after this
 *        lea rbp, [rsp+16]            C frames chain to the saved-rbp slot
 *        anchor = (rsp, rbp, ret_point); state = IN_NATIVE (wrapper) / IN_VM (stub)
 *        mov rdi, r15 ; mov rsi, rbx ; mov rax, fn ; call rax
 *   ret_point: state = IN_JAVA ; anchor.sp = 0
 *        mov rbp, [rsp+16] ; add rsp, 24 ; ret
 */
#include <string.h>

#include "asgst.h"
#include "vm/vm_image.h"
#include "wf_live_vm.h"

#define MAX_INLINE_LEVEL 2 /* inline levels below the physical method: 0 = none */
#define TRANSITION_FRAME 32

struct blob_gen { /* one blob being emitted */
    struct wf_live_codegen *g;
    uint32_t start;        /* heap offset of the blob */
    uint32_t region_begin; /* blob offset where the current descriptor starts */
    uint32_t desc_first;
    uint32_t scope_count; /* current inline chain, outermost first */
    struct wf_vm_scope chain[WF_VM_MAX_SCOPES];
    uint32_t frame_size;
    uint32_t type_word; /* shadow type of inlined frames: INLINED | level << 8 */
};

/* ---- bytes -------------------------------------------------------------------------- */

static void put(struct wf_live_codegen *g, const void *bytes, uint32_t n) {
    if (g->used + n > WF_VM_CODE_HEAP_SIZE) {
        g->failed = 1;
        return;
    }
    memcpy(g->heap + g->used, bytes, n);
    g->used += n;
}
static void put8(struct wf_live_codegen *g, uint8_t b) { put(g, &b, 1); }
static void put32(struct wf_live_codegen *g, uint32_t v) { put(g, &v, 4); }
static void put64(struct wf_live_codegen *g, uint64_t v) { put(g, &v, 8); }
static void bytes(struct wf_live_codegen *g, const char *s, uint32_t n) { put(g, s, n); }
static uintptr_t addr(const struct wf_live_codegen *g, uint32_t off) {
    return (uintptr_t)WF_VM_CODE_HEAP + off;
}
static void patch32(struct wf_live_codegen *g, uint32_t at, int32_t v) {
    if (!g->failed) memcpy(g->heap + at, &v, 4);
}

/* ---- instructions (encodings spelled out; r15 = thread, rbx = callee) ------------------ */

static void x_ret(struct wf_live_codegen *g) { put8(g, 0xC3); }
static void x_save_rbp_below_rsp(struct wf_live_codegen *g) { bytes(g, "\x48\x89\x6C\x24\xF8", 5); }
static void x_sub_rsp(struct wf_live_codegen *g, uint32_t n) {
    bytes(g, "\x48\x81\xEC", 3);
    put32(g, n);
}
static void x_add_rsp(struct wf_live_codegen *g, uint32_t n) {
    bytes(g, "\x48\x81\xC4", 3);
    put32(g, n);
}
static void x_load_rbp_rsp(struct wf_live_codegen *g, uint32_t d) {
    bytes(g, "\x48\x8B\xAC\x24", 4);
    put32(g, d);
}
static void x_lea_rbp_rsp(struct wf_live_codegen *g, uint32_t d) {
    bytes(g, "\x48\x8D\xAC\x24", 4);
    put32(g, d);
}
static void x_jmp_to(struct wf_live_codegen *g, uint32_t target) {
    put8(g, 0xE9);
    put32(g, target - (g->used + 4));
}
static uint32_t x_jz_forward(struct wf_live_codegen *g) { /* returns where to patch */
    bytes(g, "\x0F\x84", 2);
    put32(g, 0);
    return g->used - 4;
}
static void land(struct wf_live_codegen *g, uint32_t patch_at) {
    patch32(g, patch_at, (int32_t)(g->used - (patch_at + 4)));
}
/* eax = depth * 16 */
static void x_depth_times16(struct wf_live_codegen *g) {
    bytes(g, "\x41\x8B\x47\x08\xC1\xE0\x04", 7);
}
/* mov dword [r15 + rax + d], imm */
static void x_store_shadow(struct wf_live_codegen *g, int32_t d, uint32_t imm) {
    bytes(g, "\x41\xC7\x84\x07", 4);
    put32(g, (uint32_t)d);
    put32(g, imm);
}
static void x_inc_depth(struct wf_live_codegen *g) { bytes(g, "\x41\xFF\x47\x08", 4); }
static void x_dec_depth(struct wf_live_codegen *g) { bytes(g, "\x41\xFF\x4F\x08", 4); }
static void x_mov_rbx(struct wf_live_codegen *g, uintptr_t v) {
    bytes(g, "\x48\xBB", 2);
    put64(g, v);
}
/* mov rax, target ; call rax */
static void x_call_abs(struct wf_live_codegen *g, uintptr_t target) {
    bytes(g, "\x48\xB8", 2);
    put64(g, target);
    bytes(g, "\xFF\xD0", 2);
}
static void x_call_rbx_entry(struct wf_live_codegen *g) {
    bytes(g, "\xFF\x53", 2);
    put8(g, WF_LIVE_M_ENTRY);
}
/* cmp dword [r15+POLL], 0 ; je +4 ; call [r15+SAFEPOINT] */
static void x_poll(struct wf_live_codegen *g) {
    bytes(g, "\x41\x83\x7F", 3);
    put8(g, WF_LIVE_T_POLL);
    bytes(g, "\x00\x74\x04\x41\xFF\x57", 6);
    put8(g, WF_LIVE_T_SAFEPOINT);
}
/* mov ecx, n ; 1: dec ecx ; jnz 1b */
static void x_spin(struct wf_live_codegen *g, uint32_t n) {
    put8(g, 0xB9);
    put32(g, n ? n : 1);
    bytes(g, "\xFF\xC9\x75\xFC", 4);
}
static void x_store_counter(struct wf_live_codegen *g, uint8_t slot, uint32_t v) {
    bytes(g, "\xC7\x44\x24", 3);
    put8(g, slot);
    put32(g, v);
}
static void x_dec_counter(struct wf_live_codegen *g, uint8_t slot) {
    bytes(g, "\xFF\x4C\x24", 3);
    put8(g, slot);
}

/* ---- blobs, descriptors, windows --------------------------------------------------- */

void wf_live_add_window(struct wf_live_codegen *g, uintptr_t lo, uintptr_t hi, uint32_t kind) {
    struct wf_live_vm *vm = g->vm;
    if (vm->window_count >= WF_LIVE_MAX_WINDOWS) {
        g->failed = 1;
        return;
    }
    vm->windows[vm->window_count++] = (struct wf_live_window){.lo = lo, .hi = hi, .kind = kind};
}

static void window_here(struct wf_live_codegen *g, uint32_t lo_off, uint32_t kind) {
    wf_live_add_window(g, addr(g, lo_off), addr(g, g->used), kind);
}

static struct wf_vm_blob *new_blob(struct wf_live_codegen *g, uint32_t kind, uint32_t start) {
    if (g->blob_count >= WF_VM_MAX_BLOBS) {
        g->failed = 1;
        return NULL;
    }
    struct wf_vm_blob *b = WF_VM_BLOB_MUT(g->blob_count);
    memset(b, 0, sizeof *b);
    b->start = addr(g, start);
    b->kind = kind;
    b->index = g->blob_count++;
    return b;
}

static void finish_blob(struct wf_live_codegen *g, struct wf_vm_blob *b) {
    if (b != NULL) b->end = addr(g, g->used);
    while (g->used % 16 != 0 && !g->failed) x_ret(g); /* align the next blob; never run */
}

uintptr_t wf_live_emit_fixed(struct wf_live_codegen *g, const uint8_t *begin, const uint8_t *end,
                             uint32_t kind, uint32_t complete) {
    uint32_t start = g->used;
    struct wf_vm_blob *b = new_blob(g, kind, start);
    put(g, begin, (uint32_t)(end - begin));
    if (b != NULL) b->frame_complete = complete;
    finish_blob(g, b);
    return addr(g, start);
}

/* Close the current descriptor region at the current pc (if it is not empty). */
static void boundary(struct blob_gen *bg) {
    struct wf_live_codegen *g = bg->g;
    uint32_t here = g->used - bg->start;
    if (here == bg->region_begin) return;
    if (g->desc_count >= WF_VM_MAX_PCDESCS) {
        g->failed = 1;
        return;
    }
    struct wf_vm_pcdesc *d = WF_VM_PCDESC_MUT(g->desc_count++);
    memset(d, 0, sizeof *d);
    d->pc_begin = bg->region_begin;
    d->pc_end = here;
    d->scope_count = bg->scope_count;
    for (uint32_t i = 0; i < bg->scope_count; i++) /* innermost first */
        d->scopes[i] = bg->chain[bg->scope_count - 1 - i];
    bg->region_begin = here;
}

static int32_t top_bci(const struct blob_gen *bg) { return bg->chain[bg->scope_count - 1].bci; }

/* Make the shadow's top bci (and, after the store, the descriptors) say `bci`. */
static void set_bci(struct blob_gen *bg, int32_t bci) {
    if (top_bci(bg) == bci) return;
    x_depth_times16(bg->g);
    x_store_shadow(bg->g, WF_LIVE_T_SHADOW - 16 + WF_LIVE_S_BCI, (uint32_t)bci);
    boundary(bg);
    bg->chain[bg->scope_count - 1].bci = bci;
}

/* Write the shadow record of `callee` at depth (not yet published). */
static void shadow_record(struct wf_live_codegen *g, const struct wf_live_method *callee,
                          int32_t bci, uint32_t type) {
    x_depth_times16(g);
    x_store_shadow(g, WF_LIVE_T_SHADOW + WF_LIVE_S_METHOD, callee->index);
    x_store_shadow(g, WF_LIVE_T_SHADOW + WF_LIVE_S_BCI, (uint32_t)bci);
    x_store_shadow(g, WF_LIVE_T_SHADOW + WF_LIVE_S_TYPE, type);
}

static void emit_body(struct blob_gen *bg, const struct wf_live_method *m, uint32_t level);

static int can_inline(const struct blob_gen *bg, const struct wf_live_method *caller, uint32_t k,
                      const struct wf_live_method *callee, uint32_t level) {
    return (caller->inline_mask >> k & 1u) && callee->kind != WF_LIVE_NATIVE &&
           level < MAX_INLINE_LEVEL && bg->scope_count < WF_VM_MAX_SCOPES;
}

static void emit_inlined_call(struct blob_gen *bg, const struct wf_live_method *callee,
                              uint32_t level) {
    struct wf_live_codegen *g = bg->g;
    shadow_record(g, callee, 0, bg->type_word);
    x_inc_depth(g);
    boundary(bg);
    bg->chain[bg->scope_count++] =
        (struct wf_vm_scope){.method = (const struct wf_vm_method *)callee->handle, .bci = 0};
    emit_body(bg, callee, level + 1);
    x_dec_depth(g);
    boundary(bg);
    bg->scope_count--;
}

static void emit_real_call(struct blob_gen *bg, const struct wf_live_method *callee) {
    struct wf_live_codegen *g = bg->g;
    shadow_record(g, callee, callee->shadow_bci0, callee->shadow_type);
    x_mov_rbx(g, (uintptr_t)callee);
    x_inc_depth(g);
    uint32_t lo = g->used;
    if (callee->kind == WF_LIVE_INTERPRETED) x_call_abs(g, g->vm->c2i_entry);
    else x_call_rbx_entry(g);
    x_dec_depth(g);
    window_here(g, lo, WF_LIVE_WIN_CALL);
}

static void emit_return(struct blob_gen *bg) {
    struct wf_live_codegen *g = bg->g;
    x_poll(g);
    x_load_rbp_rsp(g, bg->frame_size - 16);
    x_add_rsp(g, bg->frame_size - 8);
    x_ret(g);
}

/* ENDLOOP: --counter; if nonzero: poll, set the loop body's bci, jump past its bci store. */
static void emit_endloop(struct blob_gen *bg, uint8_t slot, uint32_t body_at, int32_t body_bci) {
    struct wf_live_codegen *g = bg->g;
    int32_t own = top_bci(bg);
    x_dec_counter(g, slot);
    uint32_t done = x_jz_forward(g);
    x_poll(g);
    set_bci(bg, body_bci);
    x_jmp_to(g, body_at);
    boundary(bg);
    bg->chain[bg->scope_count - 1].bci = own; /* the fall-through path never left it */
    land(g, done);
}

static void emit_body(struct blob_gen *bg, const struct wf_live_method *m, uint32_t level) {
    struct wf_live_codegen *g = bg->g;
    uint32_t after_store[WF_LIVE_MAX_INSNS] = {0};
    uint8_t slot = (uint8_t)(8 * level);
    for (uint32_t k = 0; k < m->insn_count && !g->failed; k++) {
        const struct wf_live_insn *in = &m->insns[k];
        set_bci(bg, in->bci);
        after_store[k] = g->used;
        switch (in->op) {
        case WF_LIVE_OP_WORK: x_spin(g, in->a); break;
        case WF_LIVE_OP_LOOP: x_store_counter(g, slot, in->a); break;
        case WF_LIVE_OP_ENDLOOP: {
            uint32_t body = (uint32_t)((const struct wf_live_insn *)(uintptr_t)in->b - m->insns);
            emit_endloop(bg, slot, after_store[body], m->insns[body].bci);
            break;
        }
        case WF_LIVE_OP_CALL: {
            const struct wf_live_method *callee = (const struct wf_live_method *)(uintptr_t)in->b;
            if (can_inline(bg, m, k, callee, level)) emit_inlined_call(bg, callee, level);
            else emit_real_call(bg, callee);
            break;
        }
        default: /* RET: the physical return; an inlined one just falls out of the body */
            if (level == 0) emit_return(bg);
            break;
        }
    }
}

uintptr_t wf_live_emit_compiled(struct wf_live_codegen *g, struct wf_live_method *m) {
    struct blob_gen bg = {.g = g,
                          .start = g->used,
                          .desc_first = g->desc_count,
                          .frame_size = m->frame_size,
                          .type_word =
                              ASGST_FRAME_JAVA_INLINED | ((uint32_t)(uint8_t)m->comp_level << 8)};
    struct wf_vm_blob *b = new_blob(g, WF_BLOB_COMPILED, g->used);
    if (b == NULL) return 0;
    m->blob = b->index;
    bg.scope_count = 1; /* entry: the caller pushed bci 0 */
    bg.chain[0] = (struct wf_vm_scope){.method = (const struct wf_vm_method *)m->handle, .bci = 0};
    x_save_rbp_below_rsp(g);
    x_sub_rsp(g, m->frame_size - 8);
    uint32_t fc = g->used - bg.start;
    emit_body(&bg, m, 0);
    boundary(&bg);
    b->comp_level = m->comp_level;
    b->frame_size = m->frame_size;
    b->frame_complete = fc;
    b->method = (const struct wf_vm_method *)m->handle;
    b->descs = WF_VM_PCDESC_MUT(bg.desc_first);
    b->desc_count = g->desc_count - bg.desc_first;
    finish_blob(g, b);
    return addr(g, bg.start);
}

/* A TRANSITION_FRAME frame built with rbp pointing at its saved rbp (fp-chained for walkers);
 * returns frame_complete, the offset where the frame is built. */
static uint32_t transition_prologue(struct wf_live_codegen *g, uint32_t start) {
    x_save_rbp_below_rsp(g);
    x_sub_rsp(g, TRANSITION_FRAME - 8);
    uint32_t fc = g->used - start;
    x_lea_rbp_rsp(g, TRANSITION_FRAME - 16);
    return fc;
}

/* Tear down what transition_prologue built: restore the caller's rbp, pop the frame, return. */
static void transition_epilogue(struct wf_live_codegen *g) {
    x_load_rbp_rsp(g, TRANSITION_FRAME - 16);
    x_add_rsp(g, TRANSITION_FRAME - 8);
    x_ret(g);
}

uintptr_t wf_live_emit_transition(struct wf_live_codegen *g, uint32_t kind,
                                  const struct wf_vm_method *method, uint32_t state, uintptr_t fn) {
    uint32_t start = g->used;
    struct wf_vm_blob *b = new_blob(g, kind, start);
    if (b == NULL) return 0;
    uint32_t fc = transition_prologue(g, start);
    bytes(g, "\x48\x8D\x05", 3); /* lea rax, [rip + ret_point] */
    uint32_t rel_at = g->used;
    put32(g, 0);
    bytes(g, "\x49\x8B\x0F", 3); /* mov rcx, [r15]      (the VM record) */
    bytes(g, "\x48\x89\x41", 3);
    put8(g, WF_LIVE_V_ANCHOR_PC); /* anchor.pc = rax */
    bytes(g, "\x48\x89\x69", 3);
    put8(g, WF_LIVE_V_ANCHOR_FP); /* anchor.fp = rbp */
    bytes(g, "\x48\x89\x61", 3);
    put8(g, WF_LIVE_V_ANCHOR_SP); /* anchor.sp = rsp */
    bytes(g, "\xC7\x01", 2);
    put32(g, state);                         /* state = IN_NATIVE/IN_VM */
    bytes(g, "\x4C\x89\xFF\x48\x89\xDE", 6); /* mov rdi, r15 ; mov rsi, rbx */
    bytes(g, "\x48\xB8", 2);
    put64(g, fn);                                          /* mov rax, fn */
    bytes(g, "\xFF\xD0", 2);                               /* call rax */
    patch32(g, rel_at, (int32_t)(g->used - (rel_at + 4))); /* ret_point */
    bytes(g, "\x49\x8B\x0F", 3);                           /* mov rcx, [r15] */
    bytes(g, "\xC7\x01", 2);
    put32(g, WF_THREAD_IN_JAVA); /* state = IN_JAVA */
    bytes(g, "\x48\xC7\x41", 3);
    put8(g, WF_LIVE_V_ANCHOR_SP);
    put32(g, 0); /* anchor.sp = 0 */
    transition_epilogue(g);
    b->frame_size = TRANSITION_FRAME;
    b->frame_complete = fc;
    b->method = method;
    finish_blob(g, b);
    return addr(g, start);
}

uintptr_t wf_live_emit_c2i(struct wf_live_codegen *g, uintptr_t interpreter) {
    uint32_t start = g->used;
    struct wf_vm_blob *b = new_blob(g, WF_BLOB_STUB, start);
    if (b == NULL) return 0;
    uint32_t fc = transition_prologue(g, start);
    bytes(g, "\x48\x8B\x03\x48\x89\x44\x24\x08", 8); /* mov rax,[rbx] ; mov [rsp+8],rax */
    bytes(g, "\x48\x8B\x43\x08\x48\x89\x04\x24", 8); /* mov rax,[rbx+8] ; mov [rsp],rax */
    x_call_abs(g, interpreter);
    transition_epilogue(g);
    window_here(g, start, WF_LIVE_WIN_CALL);
    b->frame_size = TRANSITION_FRAME;
    b->frame_complete = fc;
    finish_blob(g, b);
    return addr(g, start);
}
