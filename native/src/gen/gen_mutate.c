/* gen_mutate.c — mutation operators over the mapped case (wf_mutate.h). */
#include <string.h>

#include "gen_provider.h"
#include "vm/vm_image.h"
#include "wf_gen.h"
#include "wf_mutate.h"
#include "wf_vm.h"

static const struct {
    const char *name;
    uint32_t class;
} OPS[WF_OP_COUNT] = {
    [WF_OP_REG_OFFSET] = {"reg-offset", WF_MUTATE_REGISTERS},
    [WF_OP_REG_BITFLIP] = {"reg-bitflip", WF_MUTATE_REGISTERS},
    [WF_OP_REG_REGION] = {"reg-region", WF_MUTATE_REGISTERS},
    [WF_OP_REG_MISALIGN] = {"reg-misalign", WF_MUTATE_REGISTERS},
    [WF_OP_STACK_BITFLIP] = {"stack-bitflip", WF_MUTATE_STACK},
    [WF_OP_STACK_REGION] = {"stack-region", WF_MUTATE_STACK},
    [WF_OP_STACK_SMALL] = {"stack-small", WF_MUTATE_STACK},
    [WF_OP_FRAME_REMOVE] = {"frame-remove", WF_MUTATE_LAYOUT},
    [WF_OP_FRAME_RESIZE] = {"frame-resize", WF_MUTATE_LAYOUT},
    [WF_OP_KIND_CHANGE] = {"kind-change", WF_MUTATE_LAYOUT},
    [WF_OP_RETURN_PC_MOVE] = {"return-pc-move", WF_MUTATE_LAYOUT},
    [WF_OP_SAVED_FP] = {"saved-fp", WF_MUTATE_LAYOUT},
    [WF_OP_ANCHOR] = {"anchor", WF_MUTATE_THREAD},
    [WF_OP_STATE] = {"state", WF_MUTATE_THREAD},
    [WF_OP_WALK] = {"walk", WF_MUTATE_THREAD},
    [WF_OP_CODE] = {"code", WF_MUTATE_LAYOUT},
};

const char *wf_mutation_name(int op) {
    return op > 0 && op < WF_OP_COUNT ? OPS[op].name : "unknown";
}

static struct wf_vm_thread *thread(void) { return WF_VM_THREAD_MUT; }

/* An address somewhere interesting: other regions, edges, the null page, non-canonical. */
static uint64_t region_pointer(gen_provider *p) {
    const struct wf_vm_thread *t = thread();
    uint64_t r = provider_u64(p);
    switch (provider_byte(p) % 12) {
    case 0: return 0;
    case 1: return t->stack_lo + 8 * (r % ((t->stack_hi - t->stack_lo) / 8));
    case 2: return t->stack_hi + (r % 64);         /* guard page above */
    case 3: return t->stack_lo - 8 - 8 * (r % 64); /* zeroed area below */
    case 4: return WF_VM_CODE_HEAP + r % WF_VM_CODE_HEAP_SIZE;
    case 5: {
        uint32_t n = WF_VM->blob_count;
        return n ? WF_VM->blobs[r % n].start + (r >> 32) % 64 : WF_VM_CODE_HEAP;
    }
    case 6: return WF_VM_NATIVE_TEXT + r % WF_VM_NATIVE_TEXT_SIZE;
    case 7: return wf_vm_method_handle((uint32_t)(r % 2048));
    case 8: return WF_VM_BYTECODE + r % 0x100000;
    case 9: return 0x8000000000000000ULL | r; /* non-canonical */
    case 10: return WF_VM_ROOT + r % 0x1000;
    default: return r;
    }
}

static uint64_t *pick_register(wf_case *c, gen_provider *p) {
    switch (provider_byte(p) % 3) {
    case 0: return &c->pc;
    case 1: return &c->sp;
    default: return &c->fp;
    }
}

/* A word of the stack image, or NULL if there is none. */
static uint64_t *pick_stack_word(const wf_case *c, gen_provider *p) {
    if (c->stack_size < 8) return NULL;
    return (uint64_t *)(thread()->stack_lo + 8 * provider_range(p, 0, c->stack_size / 8 - 1));
}

static int small_delta(gen_provider *p) {
    int d = (int)provider_range(p, 1, 64);
    return provider_byte(p) & 1 ? d : -d;
}

/* A physical frame of the last generation that still lies in this case's stack. */
static int pick_layout_frame(gen_provider *p, wf_gen_frame *f) {
    uint32_t n = wf_gen_layout_count();
    if (n == 0 || wf_gen_layout_frame((uint32_t)provider_range(p, 0, n - 1), f) != 0) return 0;
    const struct wf_vm_thread *t = thread();
    return f->sp >= t->stack_lo + 8 && f->sp < t->stack_hi;
}

static struct wf_vm_blob *pick_blob(gen_provider *p) {
    uint32_t n = WF_VM->blob_count;
    return n ? WF_VM_BLOB_MUT(provider_range(p, 0, n - 1)) : NULL;
}

/* Turn a blob into another kind, keeping every field legal for the new kind. */
static int change_kind(gen_provider *p) {
    struct wf_vm_blob *b = pick_blob(p);
    if (b == NULL) return 0;
    uint32_t kind = (uint32_t)provider_range(p, WF_BLOB_INTERPRETER, WF_BLOB_ENTRY);
    if (kind == b->kind) return 0;
    int fixed = kind == WF_BLOB_COMPILED || kind == WF_BLOB_NATIVE_WRAPPER || kind == WF_BLOB_STUB;
    b->kind = kind;
    b->comp_level = kind == WF_BLOB_COMPILED ? (int32_t)provider_range(p, 1, 4) : 0;
    b->frame_size =
        fixed ? (b->frame_size ? b->frame_size : 8 * (uint32_t)provider_range(p, 2, 32)) : 0;
    uint32_t size = (uint32_t)(b->end - b->start);
    b->frame_complete = fixed && b->frame_complete <= size ? b->frame_complete : 0;
    if (kind == WF_BLOB_COMPILED || kind == WF_BLOB_NATIVE_WRAPPER) {
        if (b->method == NULL) b->method = (const struct wf_vm_method *)wf_vm_method_handle(0);
    } else {
        b->method = NULL;
    }
    if (kind != WF_BLOB_COMPILED) b->desc_count = 0;
    return 1;
}

static int resize_frame(gen_provider *p) {
    struct wf_vm_blob *b = pick_blob(p);
    if (b == NULL || b->frame_size == 0) return 0;
    int64_t size = (int64_t)b->frame_size + 8 * small_delta(p) / 8 * 8;
    if (size < WF_VM_MIN_FRAME_SIZE) size = WF_VM_MIN_FRAME_SIZE;
    if (size > WF_VM_MAX_FRAME_SIZE) size = WF_VM_MAX_FRAME_SIZE;
    if ((uint32_t)size == b->frame_size) return 0;
    b->frame_size = (uint32_t)size;
    return 1;
}

/* Make a frame return straight to its caller's caller: copy the caller's return slots down. */
static int remove_frame(gen_provider *p) {
    uint32_t n = wf_gen_layout_count();
    if (n < 3) return 0;
    uint32_t i = (uint32_t)provider_range(p, 0, n - 3);
    wf_gen_frame callee, caller, grand;
    wf_gen_layout_frame(i, &callee);
    wf_gen_layout_frame(i + 1, &caller);
    wf_gen_layout_frame(i + 2, &grand);
    const struct wf_vm_thread *t = thread();
    if (caller.sp < t->stack_lo + 16 || grand.sp > t->stack_hi || grand.sp < t->stack_lo + 16)
        return 0;
    *(uint64_t *)(caller.sp - 8) = grand.pc;
    *(uint64_t *)(caller.sp - 16) = grand.fp;
    return 1;
}

static int move_return_pc(gen_provider *p) {
    wf_gen_frame f;
    struct wf_vm_blob *b = pick_blob(p);
    if (b == NULL || !pick_layout_frame(p, &f)) return 0;
    *(uint64_t *)(f.sp - 8) = b->start + provider_range(p, 0, b->end - b->start - 1);
    return 1;
}

static int corrupt_saved_fp(gen_provider *p) {
    wf_gen_frame f;
    if (!pick_layout_frame(p, &f) || f.sp < thread()->stack_lo + 16) return 0;
    uint64_t *slot = (uint64_t *)(f.sp - 16);
    *slot = provider_byte(p) & 1 ? region_pointer(p) : *slot + (uint64_t)(int64_t)small_delta(p);
    return 1;
}

static int corrupt_anchor(gen_provider *p) {
    struct wf_vm_anchor *a = &thread()->anchor;
    uint64_t *field = provider_byte(p) % 3 == 0 ? &a->sp : provider_byte(p) & 1 ? &a->fp : &a->pc;
    switch (provider_byte(p) % 3) {
    case 0: *field += (uint64_t)(int64_t)small_delta(p); break;
    case 1: *field = region_pointer(p); break;
    default: *field = 0; break;
    }
    return 1;
}

static int change_state(gen_provider *p) {
    struct wf_vm_thread *t = thread();
    if (provider_byte(p) & 1) t->state = (uint32_t)provider_range(p, 0, WF_THREAD_EXITING);
    else t->flags = (uint32_t)provider_range(p, 0, 3);
    return 1;
}

static int change_walk(wf_case *c, gen_provider *p) {
    if (provider_byte(p) & 1) c->options ^= 1u << provider_range(p, 0, 1);
    else c->entry = (uint32_t)provider_range(p, 0, 2);
    return 1;
}

/* What a walker reads of the code itself (docs/case-format.md §4.3): a `ret` at the context's
   pc (the one a walker looks at) or at a pc of some blob, or a blob's frame_complete moved
   (the interpreter's included). */
static int change_code(wf_case *c, gen_provider *p) {
    static const uint8_t ret = 0xC3;
    uint32_t choice = provider_byte(p) % 4;
    struct wf_vm_blob *b = pick_blob(p);
    if (choice == 3) {
        if (b == NULL || b->kind == WF_BLOB_ENTRY) return 0;
        uint32_t size = (uint32_t)(b->end - b->start);
        b->frame_complete = (uint32_t)provider_range(p, 0, size < 64 ? size : 64);
        return 1;
    }
    uint64_t pc = c->pc;
    if (choice == 2) {
        if (b == NULL) return 0;
        pc = b->start + provider_range(p, 0, b->end - b->start - 1);
    }
    if (pc < WF_VM_CODE_HEAP || pc >= WF_VM_CODE_HEAP + WF_VM_CODE_HEAP_SIZE) return 0;
    return wf_vm_image_code((uint32_t)(pc - WF_VM_CODE_HEAP), &ret, 1) == 0;
}

/* Every operand that consumes bytes is read in a statement of its own (pick the register or
   word first, then the value): the operands of one expression, `*pick_register(c, p) =
   region_pointer(p)` say, are evaluated in an unspecified order (gcc and clang differ), and
   the same bytes must give the same case in every build (a finding of the cov build replays
   on the plain one). */
static int apply(wf_case *c, int op, gen_provider *p) {
    uint64_t *reg, *word;
    switch (op) {
    case WF_OP_REG_OFFSET:
        reg = pick_register(c, p);
        *reg += (uint64_t)(int64_t)(8 * small_delta(p));
        return 1;
    case WF_OP_REG_BITFLIP:
        reg = pick_register(c, p);
        *reg ^= 1ULL << provider_range(p, 0, 63);
        return 1;
    case WF_OP_REG_REGION:
        reg = pick_register(c, p);
        *reg = region_pointer(p);
        return 1;
    case WF_OP_REG_MISALIGN:
        reg = pick_register(c, p);
        *reg += provider_range(p, 1, 7);
        return 1;
    case WF_OP_STACK_BITFLIP:
        if ((word = pick_stack_word(c, p)) == NULL) return 0;
        *word ^= 1ULL << provider_range(p, 0, 63);
        return 1;
    case WF_OP_STACK_REGION:
        if ((word = pick_stack_word(c, p)) == NULL) return 0;
        *word = region_pointer(p);
        return 1;
    case WF_OP_STACK_SMALL:
        if ((word = pick_stack_word(c, p)) == NULL) return 0;
        *word += (uint64_t)(int64_t)small_delta(p);
        return 1;
    case WF_OP_FRAME_REMOVE: return remove_frame(p);
    case WF_OP_FRAME_RESIZE: return resize_frame(p);
    case WF_OP_KIND_CHANGE: return change_kind(p);
    case WF_OP_RETURN_PC_MOVE: return move_return_pc(p);
    case WF_OP_SAVED_FP: return corrupt_saved_fp(p);
    case WF_OP_ANCHOR: return corrupt_anchor(p);
    case WF_OP_STATE: return change_state(p);
    case WF_OP_WALK: return change_walk(c, p);
    case WF_OP_CODE: return change_code(c, p);
    default: return 0;
    }
}

static int mutated(wf_case *c, int applied) {
    if (applied > 0) {
        c->has_truth = 0;
        c->mutations += (uint32_t)applied;
    }
    return applied;
}

static int mutate(wf_case *c, uint32_t classes, gen_provider *p) {
    int allowed[WF_OP_COUNT], n = 0;
    for (int op = 1; op < WF_OP_COUNT; op++)
        if (OPS[op].class & classes) allowed[n++] = op;
    if (n == 0 || !wf_vm_is_mapped() || WF_VM->magic != WF_VM_MAGIC) return 0;
    int applied = 0;
    for (uint64_t k = provider_range(p, 1, 4); k > 0; k--)
        applied += apply(c, allowed[provider_range(p, 0, (uint64_t)n - 1)], p);
    return mutated(c, applied);
}

int wf_mutate_bytes(wf_case *c, uint32_t classes, const uint8_t *data, size_t len) {
    gen_provider p;
    provider_bytes(&p, data, len);
    return mutate(c, classes, &p);
}

int wf_mutate_seed(wf_case *c, uint32_t classes, uint64_t seed) {
    gen_provider p;
    provider_seed(&p, seed);
    return mutate(c, classes, &p);
}

int wf_mutate_one(wf_case *c, int op, const uint8_t *data, size_t len) {
    gen_provider p;
    provider_bytes(&p, data, len);
    if (op <= 0 || op >= WF_OP_COUNT || !wf_vm_is_mapped() || WF_VM->magic != WF_VM_MAGIC) return 0;
    return mutated(c, apply(c, op, &p));
}
