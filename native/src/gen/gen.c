/* gen.c — the case generator (wf_gen.h): builds code heap, methods, thread and a stack image
 * straight into the mapped VM, outermost frame first, and records the true trace from the
 * frames it laid out (not by walking them). */
#include <stdio.h>
#include <string.h>

#include "gen_provider.h"
#include "vm/vm_image.h"
#include "wf_gen.h"
#include "wf_vm.h"

#define GEN_MAX_PHYSICAL WF_GEN_MAX_PHYSICAL
#define GEN_STACK_MARGIN 8192 /* room kept below the stack for the top frames */
#define GEN_MAX_COMPILED 12
#define GEN_MAX_SMALL 3       /* stubs, native wrappers */
#define GEN_DEEP_ONE_IN 512   /* inputs per deep one: a deep walk costs ~100 shallow ones */
#define GEN_DEEP_UNITS 4      /* units of a deep run */
#define GEN_DEEP_MAX_FRAME 96 /* bytes: 1 MiB of stack holds 8192 + 759 frames of a run */

typedef struct gen_frame {
    int kind; /* wf_frame_kind */
    uintptr_t sp, fp, pc;
    const struct wf_vm_blob *blob;
    const struct wf_vm_pcdesc *desc;
    uint32_t method; /* interpreted: method index */
    uint32_t bci;    /* interpreted: bci */
    int unbuilt;     /* top frame with only its return address on the stack */
    int32_t anchor;  /* entry: frame index of its saved anchor, -1 none */
} gen_frame;

/* One unit of a deep run: a frame, or a Java -> C -> Java crossing (its three frames). */
enum { DEEP_INTERPRETED, DEEP_COMPILED, DEEP_CROSSING };
typedef struct deep_unit {
    int what;
    uint32_t size[3]; /* frame sizes (compiled: the blob's), crossing: wrapper, C, entry */
    uintptr_t pc[3];  /* their pcs */
    const struct wf_vm_blob *blob; /* compiled blob, or the crossing's native wrapper */
    const struct wf_vm_pcdesc *desc;
    uint32_t method, bci; /* interpreted */
    int anchor_pc;        /* crossing: the entry frame saves the wrapper's pc */
} deep_unit;

/* A deep run, read from the bytes after the first pass's and laid by the second pass. */
typedef struct deep_plan {
    uint32_t target; /* physical frames the walk should visit */
    uint32_t n_units;
    deep_unit units[GEN_DEEP_UNITS];
    deep_unit filler; /* one-frame unit that makes up the rest */
    uint32_t copies;  /* whole runs */
    uint32_t rest;    /* filler frames after them */
    uint32_t frames;  /* physical frames of the whole run */
    uint32_t at;      /* frame index where the run begins (above the bottom entry) */
    uint32_t shallow; /* frame count of the first pass (the context pick's range) */
} deep_plan;

typedef struct gen {
    gen_provider *p;
    uint64_t junk; /* splitmix state for filler words */
    wf_case *c;
    wf_gen_params prm;
    uint32_t classes, methods, blobs, descs;
    uint32_t interp, entry;
    uint32_t stubs[GEN_MAX_SMALL], n_stubs;
    uint32_t natives[GEN_MAX_SMALL], n_natives;
    uint32_t compiled[GEN_MAX_COMPILED], n_compiled;
    const deep_plan *deep; /* second pass of a deep case, else NULL */
    uint32_t run_at;       /* frame index above the bottom entry */
    uint32_t walk_depth;   /* physical frames the true walk visits */
    int32_t start;         /* frame index the true walk starts at */
    uintptr_t run_hi;      /* the deep run's repeat pattern (copy 1), 0 none */
    uint32_t run_size, run_times;
    gen_frame frames[GEN_MAX_PHYSICAL]; /* bottom first */
    uint32_t n_frames;
} gen;

static gen G; /* one generation at a time (the VM is one per process) */
static size_t consumed;

/* ---- small helpers --------------------------------------------------------------------- */

static uint64_t junk_word(gen *g) {
    uint64_t z = (g->junk += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    switch (z & 7) { /* filler that looks like what walkers trip over */
    case 0: return 0;
    case 1: return WF_VM_CODE_HEAP + (z >> 12) % WF_VM_CODE_HEAP_SIZE;
    case 2: return WF_VM_STACK_TOP - 8 * ((z >> 12) % 4096);
    case 3: return wf_vm_method_handle((uint32_t)((z >> 12) % 64));
    case 4: return (z >> 8) & 0xffff;
    default: return z;
    }
}

static void poke(uintptr_t addr, uint64_t value) { *(uint64_t *)addr = value; }

static uint64_t pick(gen *g, uint64_t lo, uint64_t hi) { return provider_range(g->p, lo, hi); }

static const gen_frame *top(const gen *g) { return &g->frames[g->n_frames - 1]; }

/* ---- methods, classes, code heap ------------------------------------------------------- */

static void put_string(const char **dst, uint32_t *len, const char *s) {
    *len = (uint32_t)strlen(s);
    *dst = wf_vm_image_string((const uint8_t *)s, *len);
}

static void make_classes_and_methods(gen *g) {
    static const char *const sigs[] = {"()V", "(I)I", "(Ljava/lang/String;)V", "([BII)I", "()J"};
    char buf[64];
    g->classes = (uint32_t)pick(g, 1, 8);
    for (uint32_t i = 0; i < g->classes; i++) {
        struct wf_vm_class *k = WF_VM_CLASS_MUT(i);
        snprintf(buf, sizeof buf, "pkg/C%u", i);
        put_string(&k->name, &k->name_length, buf);
        put_string(&k->generic_name, &k->generic_name_length,
                   i % 3 == 2 ? "<T:Ljava/lang/Object;>" : "");
        k->modifiers = 1;
        k->index = i;
    }
    g->methods = (uint32_t)pick(g, 4, 40);
    for (uint32_t i = 0; i < g->methods; i++) {
        struct wf_vm_method *m = WF_VM_METHOD_MUT(i);
        snprintf(buf, sizeof buf, "m%u", i);
        put_string(&m->name, &m->name_length, buf);
        put_string(&m->signature, &m->signature_length, sigs[i % 5]);
        put_string(&m->generic_signature, &m->generic_signature_length, "");
        m->klass = (const struct wf_vm_class *)wf_vm_class_handle(i % g->classes);
        m->code_base = WF_VM_BYTECODE + (uintptr_t)i * WF_VM_BYTECODE_STRIDE;
        m->code_size = (uint32_t)pick(g, 1, 600);
        m->modifiers = i % 4 == 3 ? 0x101 : 1; /* public [native] */
        m->index = i;
    }
}

static uint32_t add_blob(gen *g, uint32_t *off, int kind, uint32_t size, uint32_t frame_size,
                         uint32_t complete, int method) {
    uint32_t i = g->blobs++;
    struct wf_vm_blob *b = WF_VM_BLOB_MUT(i);
    b->start = WF_VM_CODE_HEAP + *off;
    b->end = b->start + size;
    b->kind = (uint32_t)kind;
    b->frame_size = frame_size;
    b->frame_complete = complete;
    b->method =
        method < 0 ? NULL : (const struct wf_vm_method *)wf_vm_method_handle((uint32_t)method);
    b->descs = WF_VM_PCDESC_MUT(g->descs);
    b->index = i;
    *off += size + (uint32_t)pick(g, 1, 16) * 16; /* gaps: code heap pcs in no blob */
    return i;
}

/* Descriptors cover slices of [complete, size - 16); the last 16 bytes have none. */
static void add_descs(gen *g, struct wf_vm_blob *b, uint32_t blob_method) {
    uint32_t size = (uint32_t)(b->end - b->start), from = b->frame_complete;
    uint32_t count = (uint32_t)pick(g, 0, 5), slice = (size - 16 - from) / (count ? count : 1);
    for (uint32_t d = 0; d < count && slice > 0; d++) {
        struct wf_vm_pcdesc *pd = WF_VM_PCDESC_MUT(g->descs++);
        pd->pc_begin = from + d * slice;
        pd->pc_end = pd->pc_begin + (uint32_t)pick(g, 1, slice);
        pd->scope_count = (uint32_t)pick(g, 1, 4);
        for (uint32_t s = 0; s < pd->scope_count; s++) {
            uint32_t m =
                s + 1 == pd->scope_count ? blob_method : (uint32_t)pick(g, 0, g->methods - 1);
            pd->scopes[s].method = (const struct wf_vm_method *)wf_vm_method_handle(m);
            pd->scopes[s].bci = (int32_t)pick(g, 0, WF_VM_METHOD_MUT(m)->code_size - 1);
        }
        b->desc_count++;
    }
}

static void make_code_heap(gen *g) {
    uint32_t off = 0;
    g->interp = add_blob(g, &off, WF_BLOB_INTERPRETER, 0x1000, 0, 0, -1);
    g->entry = add_blob(g, &off, WF_BLOB_ENTRY, 0x100, 0, 0, -1);
    g->n_stubs = (uint32_t)pick(g, 1, GEN_MAX_SMALL);
    /* Picks go into locals first: the order of evaluation of function arguments is
       unspecified (gcc and clang differ), and the same bytes must give the same case in
       every build (a finding of the cov build replays on the plain one). */
    for (uint32_t i = 0; i < g->n_stubs; i++) {
        uint32_t size = 8 * (uint32_t)pick(g, 2, 16);
        uint32_t complete = (uint32_t)pick(g, 0, 8);
        g->stubs[i] = add_blob(g, &off, WF_BLOB_STUB, 0x100, size, complete, -1);
    }
    g->n_natives = (uint32_t)pick(g, 1, GEN_MAX_SMALL);
    for (uint32_t i = 0; i < g->n_natives; i++) {
        uint32_t size = 8 * (uint32_t)pick(g, 4, 12);
        uint32_t complete = (uint32_t)pick(g, 1, 16);
        int method = (int)(4 * pick(g, 0, g->methods / 4 - 1) + 3);
        g->natives[i] = add_blob(g, &off, WF_BLOB_NATIVE_WRAPPER, 0x200, size, complete, method);
    }
    g->n_compiled = (uint32_t)pick(g, 1, GEN_MAX_COMPILED);
    for (uint32_t i = 0; i < g->n_compiled; i++) {
        uint32_t m = (uint32_t)pick(g, 0, g->methods - 1);
        uint32_t code = 0x200 + 16 * (uint32_t)pick(g, 0, 0xE0);
        uint32_t size = 8 * (uint32_t)pick(g, 2, 64);
        uint32_t complete = (uint32_t)pick(g, 0, 32);
        uint32_t b = add_blob(g, &off, WF_BLOB_COMPILED, code, size, complete, (int)m);
        struct wf_vm_blob *blob = WF_VM_BLOB_MUT(b);
        blob->comp_level = (int32_t)pick(g, 1, 4);
        add_descs(g, blob, m);
        g->compiled[i] = b;
    }
}

/* ---- laying out frames ----------------------------------------------------------------- */

/* Append a frame of `size` bytes below the current bottom-most-so-far (the caller). The
   return address always sits at caller.sp - 8; the caller's fp is saved at caller.sp - 16. */
static gen_frame *push(gen *g, int kind, uint32_t size) {
    gen_frame caller = g->n_frames ? *top(g) : (gen_frame){.sp = WF_VM_STACK_TOP};
    gen_frame *f = &g->frames[g->n_frames++];
    *f = (gen_frame){.kind = kind, .sp = caller.sp - size, .anchor = -1};
    for (uintptr_t a = f->sp; a < caller.sp; a += 8) poke(a, junk_word(g));
    poke(caller.sp - 8, caller.pc);
    if (size >= 16) poke(caller.sp - 16, caller.fp);
    f->fp = caller.fp; /* fixed-size frames pass rbp through */
    if (kind == WF_FRAME_INTERPRETED || kind == WF_FRAME_ENTRY || kind == WF_FRAME_C)
        f->fp = caller.sp - 16; /* fp-based frames: push rbp; mov rbp, rsp */
    return f;
}

static int room_for(const gen *g, uint32_t size) {
    uintptr_t sp = g->n_frames ? top(g)->sp : WF_VM_STACK_TOP;
    return g->n_frames + 8 < GEN_MAX_PHYSICAL && sp - size >= WF_VM_STACK + GEN_STACK_MARGIN;
}

static uintptr_t pc_in(gen *g, const struct wf_vm_blob *b, uint32_t from, uint32_t to) {
    return b->start + from + pick(g, 0, to - from - 1);
}

static void push_c(gen *g) {
    gen_frame *f = push(g, WF_FRAME_C, 16 + 8 * (uint32_t)pick(g, 0, 6));
    f->pc = WF_VM_NATIVE_TEXT + pick(g, 0, WF_VM_NATIVE_TEXT_SIZE - 1);
}

/* An entry frame of `size` at pc whose saved anchor is frame `anchor` (-1: none). */
static void push_entry_at(gen *g, uint32_t size, uintptr_t pc, int32_t anchor_index,
                          int anchor_pc) {
    const gen_frame *anchor = anchor_index >= 0 ? &g->frames[anchor_index] : NULL;
    gen_frame *f = push(g, WF_FRAME_ENTRY, size);
    f->blob = WF_VM_BLOB_MUT(g->entry);
    f->pc = pc;
    f->anchor = anchor_index;
    poke(f->fp - 8, anchor ? anchor->sp : 0);
    poke(f->fp - 16, anchor ? anchor->fp : 0);
    poke(f->fp - 24, anchor && anchor_pc ? anchor->pc : 0);
}

static void push_entry(gen *g, int32_t anchor_index, int anchor_pc) {
    uint32_t size = 40 + 8 * (uint32_t)pick(g, 0, 4);
    uintptr_t pc = pc_in(g, WF_VM_BLOB_MUT(g->entry), 0, 0x100);
    push_entry_at(g, size, pc, anchor_index, anchor_pc);
}

static void push_interpreted(gen *g) {
    gen_frame *f = push(g, WF_FRAME_INTERPRETED, 32 + 8 * (uint32_t)pick(g, 0, 8));
    f->blob = WF_VM_BLOB_MUT(g->interp);
    f->pc = pc_in(g, f->blob, 0, 0x1000);
    f->method = (uint32_t)pick(g, 0, g->methods - 1);
    f->bci = (uint32_t)pick(g, 0, WF_VM_METHOD_MUT(f->method)->code_size - 1);
    poke(f->fp - 8, wf_vm_method_handle(f->method));
    poke(f->fp - 16, WF_VM_METHOD_MUT(f->method)->code_base + f->bci);
}

/* A compiled frame at a call site: pc in a descriptor (usually) or in the desc-free tail. */
static void push_compiled(gen *g) {
    const struct wf_vm_blob *b = WF_VM_BLOB_MUT(g->compiled[pick(g, 0, g->n_compiled - 1)]);
    gen_frame *f = push(g, WF_FRAME_COMPILED, b->frame_size);
    f->blob = b;
    if (b->desc_count > 0 && !provider_chance(g->p, 32)) {
        f->desc = &b->descs[pick(g, 0, b->desc_count - 1)];
        f->pc = pc_in(g, b, f->desc->pc_begin, f->desc->pc_end);
    } else {
        uint32_t size = (uint32_t)(b->end - b->start);
        f->pc = pc_in(g, b, size - 16, size);
    }
    if (provider_chance(g->p, 96)) f->fp = junk_word(g); /* rbp used as a general register */
}

static void push_fixed(gen *g, int kind, uint32_t blob) {
    const struct wf_vm_blob *b = WF_VM_BLOB_MUT(blob);
    gen_frame *f = push(g, kind, b->frame_size);
    f->blob = b;
    f->pc = pc_in(g, b, b->frame_complete, (uint32_t)(b->end - b->start));
    if (kind == WF_FRAME_NATIVE) f->fp = f->sp + b->frame_size - 16; /* wrapper sets rbp */
}

static void push_native(gen *g) {
    push_fixed(g, WF_FRAME_NATIVE, g->natives[pick(g, 0, g->n_natives - 1)]);
}

static void push_java(gen *g) {
    if (provider_chance(g->p, 100)) push_interpreted(g);
    else push_compiled(g);
}

/* A compiled frame whose prologue has not run: only the return address is on the stack. */
static int push_unbuilt_compiled(gen *g) {
    for (uint32_t i = 0; i < g->n_compiled; i++) {
        const struct wf_vm_blob *b = WF_VM_BLOB_MUT(g->compiled[i]);
        if (b->frame_complete == 0) continue;
        gen_frame *f = push(g, WF_FRAME_COMPILED, 8);
        f->blob = b;
        f->pc = pc_in(g, b, 0, b->frame_complete);
        for (uint32_t d = 0; d < b->desc_count; d++)
            if (f->pc - b->start >= b->descs[d].pc_begin && f->pc - b->start < b->descs[d].pc_end)
                f->desc = &b->descs[d];
        return 1;
    }
    return 0;
}

/* A top frame whose epilogue has popped it: only the return address is left, and the
   instruction at pc is a `ret` (a CODE_BYTES patch; docs/case-format.md §4.3). Its pc is
   one no other frame of the stack has, so a walk from any other frame is unaffected. */
static void push_popped(gen *g) {
    static const uint8_t ret = 0xC3;
    const struct wf_vm_blob *b;
    int kind;
    switch (pick(g, 0, 3)) {
    case 0:
        kind = WF_FRAME_COMPILED;
        b = WF_VM_BLOB_MUT(g->compiled[pick(g, 0, g->n_compiled - 1)]);
        break;
    case 1:
        kind = WF_FRAME_NATIVE;
        b = WF_VM_BLOB_MUT(g->natives[pick(g, 0, g->n_natives - 1)]);
        break;
    case 2:
        kind = WF_FRAME_STUB;
        b = WF_VM_BLOB_MUT(g->stubs[pick(g, 0, g->n_stubs - 1)]);
        break;
    default:
        kind = WF_FRAME_INTERPRETED;
        b = WF_VM_BLOB_MUT(g->interp);
        break;
    }
    uint32_t size = (uint32_t)(b->end - b->start);
    if (b->frame_complete >= size) return; /* no pc after the prologue */
    uintptr_t pc = pc_in(g, b, b->frame_complete, size);
    for (uint32_t i = 0; i < g->n_frames; i++)
        if (g->frames[i].pc == pc) return; /* that pc is a return address too */
    gen_frame *f = push(g, kind, 8);
    f->blob = b;
    f->pc = pc;
    f->unbuilt = 1;
    if (kind == WF_FRAME_INTERPRETED) f->fp = g->frames[g->n_frames - 2].fp; /* rbp restored */
    for (uint32_t d = 0; d < b->desc_count; d++)
        if (pc - b->start >= b->descs[d].pc_begin && pc - b->start < b->descs[d].pc_end)
            f->desc = &b->descs[d];
    wf_vm_image_code((uint32_t)(pc - WF_VM_CODE_HEAP), &ret, 1);
}

/* An interpreted callee before its prologue built the frame (the interpreter's
   frame_complete): only the return address is on the stack and rbp is still the caller's.
   The interpreter blob gets a frame_complete no interpreted caller's return pc lies under. */
static void push_interpreter_entry(gen *g) {
    struct wf_vm_blob *b = WF_VM_BLOB_MUT(g->interp);
    uint32_t complete = 32;
    for (uint32_t i = 0; i < g->n_frames; i++)
        if (g->frames[i].kind == WF_FRAME_INTERPRETED && g->frames[i].pc - b->start < complete)
            complete = (uint32_t)(g->frames[i].pc - b->start);
    if (complete == 0 || g->n_frames == 0) return;
    b->frame_complete = complete;
    uintptr_t caller_fp = top(g)->fp;
    gen_frame *f = push(g, WF_FRAME_INTERPRETED, 8);
    f->blob = b;
    f->pc = pc_in(g, b, 0, complete);
    f->fp = caller_fp;
    f->unbuilt = 1;
}

/* ---- deep runs ------------------------------------------------------------------------- */

/* A unit as the walk meets it: physical frames laid, and those a walk with `options` visits
   (a Java-only walk jumps from the entry frame to its saved anchor, over the C frame). */
static uint32_t unit_frames(const deep_unit *u) { return u->what == DEEP_CROSSING ? 3 : 1; }
static uint32_t unit_visits(const deep_unit *u, uint32_t options) {
    if (u->what != DEEP_CROSSING) return 1;
    return (options & ASGST_INCLUDE_NON_JAVA_FRAMES) ? 3 : 2;
}
static uint32_t unit_bytes(const deep_unit *u) {
    return u->size[0] + (u->what == DEEP_CROSSING ? u->size[1] + u->size[2] : 0);
}

/* Lay one unit with the values the plan fixed: no byte is read here. */
static void lay_unit(gen *g, const deep_unit *u) {
    gen_frame *f;
    switch (u->what) {
    case DEEP_INTERPRETED:
        f = push(g, WF_FRAME_INTERPRETED, u->size[0]);
        f->blob = WF_VM_BLOB_MUT(g->interp);
        f->pc = u->pc[0];
        f->method = u->method;
        f->bci = u->bci;
        poke(f->fp - 8, wf_vm_method_handle(u->method));
        poke(f->fp - 16, WF_VM_METHOD_MUT(u->method)->code_base + u->bci);
        break;
    case DEEP_COMPILED:
        f = push(g, WF_FRAME_COMPILED, u->size[0]);
        f->blob = u->blob;
        f->desc = u->desc;
        f->pc = u->pc[0];
        break;
    default: {
        f = push(g, WF_FRAME_NATIVE, u->size[0]);
        f->blob = u->blob;
        f->pc = u->pc[0];
        f->fp = f->sp + u->size[0] - 16; /* the wrapper sets rbp */
        int32_t wrapper = (int32_t)g->n_frames - 1;
        f = push(g, WF_FRAME_C, u->size[1]);
        f->pc = u->pc[1];
        push_entry_at(g, u->size[2], u->pc[2], wrapper, u->anchor_pc);
        break;
    }
    }
}

/* Copies 2.. of the run as the case format expands a repeat (vm_image.h): the bytes of copy 1
   relocated, and its frames moved with them. Copy 1, not 0, is the pattern: its frames'
   callers are the run's own frames, copy 0's are the bottom entry's. */
static void repeat_copies(gen *g, uint32_t first, uint32_t per, uint32_t times) {
    uintptr_t hi = top(g)->sp, above = g->frames[first - 1].sp;
    uint32_t n = (uint32_t)(above - hi);
    wf_vm_stack_repeat((uint8_t *)hi, hi, n, times);
    for (uint32_t k = 1; k < times; k++)
        for (uint32_t j = 0; j < per; j++) {
            gen_frame *f = &g->frames[g->n_frames++];
            *f = g->frames[first + j];
            f->sp -= (uintptr_t)k * n;
            if (f->fp - hi < 2 * (uint64_t)n) f->fp -= (uintptr_t)k * n;
            if (f->anchor >= 0) f->anchor += (int32_t)(k * per);
        }
    g->run_hi = hi;
    g->run_size = n;
    g->run_times = times;
}

static void lay_deep_run(gen *g, const deep_plan *d) {
    uint32_t laid = d->copies < 2 ? d->copies : 2, per = 0;
    for (uint32_t k = 0; k < laid; k++)
        for (uint32_t i = 0; i < d->n_units; i++) lay_unit(g, &d->units[i]);
    for (uint32_t i = 0; i < d->n_units; i++) per += unit_frames(&d->units[i]);
    if (d->copies > 2) repeat_copies(g, g->n_frames - per, per, d->copies - 1);
    for (uint32_t k = 0; k < d->rest; k++) lay_unit(g, &d->filler);
}

static void plan_interpreted(gen *g, deep_unit *u) {
    u->what = DEEP_INTERPRETED;
    u->size[0] = 32 + 8 * (uint32_t)pick(g, 0, 2);
    u->pc[0] = pc_in(g, WF_VM_BLOB_MUT(g->interp), 0, 0x1000);
    u->method = (uint32_t)pick(g, 0, g->methods - 1);
    u->bci = (uint32_t)pick(g, 0, WF_VM_METHOD_MUT(u->method)->code_size - 1);
}

/* A compiled unit of a blob with a small frame (the first from a picked one on), at a call
   site as push_compiled places it; an interpreted one when every compiled frame is big. */
static void plan_compiled(gen *g, deep_unit *u) {
    uint32_t first = (uint32_t)pick(g, 0, g->n_compiled - 1);
    const struct wf_vm_blob *b = NULL;
    for (uint32_t i = 0; i < g->n_compiled && b == NULL; i++) {
        const struct wf_vm_blob *c = WF_VM_BLOB_MUT(g->compiled[(first + i) % g->n_compiled]);
        if (c->frame_size <= GEN_DEEP_MAX_FRAME) b = c;
    }
    if (b == NULL) {
        plan_interpreted(g, u);
        return;
    }
    u->what = DEEP_COMPILED;
    u->blob = b;
    u->size[0] = b->frame_size;
    uint32_t size = (uint32_t)(b->end - b->start);
    if (b->desc_count > 0 && !provider_chance(g->p, 32)) {
        u->desc = &b->descs[pick(g, 0, b->desc_count - 1)];
        u->pc[0] = pc_in(g, b, u->desc->pc_begin, u->desc->pc_end);
    } else {
        u->pc[0] = pc_in(g, b, size - 16, size);
    }
}

static void plan_crossing(gen *g, deep_unit *u) {
    const struct wf_vm_blob *b = WF_VM_BLOB_MUT(g->natives[pick(g, 0, g->n_natives - 1)]);
    u->what = DEEP_CROSSING;
    u->blob = b;
    u->size[0] = b->frame_size;
    u->pc[0] = pc_in(g, b, b->frame_complete, (uint32_t)(b->end - b->start));
    u->size[1] = 16 + 8 * (uint32_t)pick(g, 0, 2);
    u->pc[1] = WF_VM_NATIVE_TEXT + pick(g, 0, WF_VM_NATIVE_TEXT_SIZE - 1);
    u->size[2] = 40 + 8 * (uint32_t)pick(g, 0, 2);
    u->pc[2] = pc_in(g, WF_VM_BLOB_MUT(g->entry), 0, 0x100);
    u->anchor_pc = provider_chance(g->p, 128);
}

/* The deep run the bytes after the layout's ask for: its units and how many physical frames
   the walk should visit. Reads the same bytes whatever the layout, so the second pass reads
   them again to consume as much as the first. */
static int read_deep_plan(gen *g, deep_plan *d) {
    memset(d, 0, sizeof *d);
    uint32_t b = provider_byte(g->p);
    /* mostly the edges (limit - 2 .. limit + 2), sometimes well past the limit */
    d->target = WF_WALK_MAX_DEPTH - 2 + (b < 192 ? b % 5 : 5 + (b - 192) * 12);
    d->n_units = (uint32_t)pick(g, 1, GEN_DEEP_UNITS);
    for (uint32_t i = 0; i < d->n_units; i++) {
        uint32_t what = provider_byte(g->p);
        if (what < 96) plan_interpreted(g, &d->units[i]);
        else if (what < 208) plan_compiled(g, &d->units[i]);
        else plan_crossing(g, &d->units[i]);
    }
    plan_interpreted(g, &d->filler);
    return 1;
}

/* ---- the stack by thread state --------------------------------------------------------- */

static void java_segments(gen *g, uint32_t java) {
    while (java > 0 && room_for(g, 4096)) {
        uint32_t seg = (uint32_t)pick(g, 1, java < 24 ? java : 24);
        for (uint32_t i = 0; i < seg && room_for(g, 1024); i++) push_java(g);
        java -= seg;
        if (java > 0 && provider_chance(g->p, 64)) { /* Java -> C -> Java */
            push_native(g);
            int32_t wrapper = (int32_t)g->n_frames - 1;
            for (uint64_t n = pick(g, 1, 2); n > 0; n--) push_c(g);
            push_entry(g, wrapper, provider_chance(g->p, 128));
        }
    }
}

/* Index (in g->frames) of the start frame and the anchor of the thread. */
typedef struct gen_top {
    int32_t anchor; /* frame index of the anchor, -1 none */
    int anchor_pc;  /* store the anchor's pc (else 0: taken from [sp-8]) */
} gen_top;

static gen_top build_stack(gen *g, uint32_t state, uint32_t java) {
    gen_top t = {.anchor = -1, .anchor_pc = 1};
    if (state == WF_THREAD_NOT_JAVA) {
        for (uint32_t i = 0; i < java + 1 && room_for(g, 1024); i++) push_c(g);
        return t;
    }
    for (uint64_t n = pick(g, 1, 3); n > 0; n--) push_c(g);
    push_entry(g, -1, 0);
    g->run_at = g->n_frames;
    if (g->deep != NULL) lay_deep_run(g, g->deep);
    java_segments(g, java);
    t.anchor_pc = provider_chance(g->p, 128);
    switch (state) {
    case WF_THREAD_IN_NATIVE:
        push_native(g);
        t.anchor = (int32_t)g->n_frames - 1;
        for (uint64_t n = pick(g, 1, 2); n > 0; n--) push_c(g); /* writes [anchor sp - 8] */
        break;
    case WF_THREAD_IN_VM:
    case WF_THREAD_BLOCKED:
        t.anchor = (int32_t)g->n_frames - 1;
        for (uint64_t n = pick(g, 1, 2); n > 0; n--) push_c(g);
        break;
    default: { /* in Java (or a state whose walk fails before looking at frames) */
        uint32_t choice = provider_byte(g->p);
        if (choice < 40) push_fixed(g, WF_FRAME_STUB, g->stubs[pick(g, 0, g->n_stubs - 1)]);
        else if (choice < 64) push_c(g);
        else if (choice < 104) push_unbuilt_compiled(g);
        else if (choice < 120) push_popped(g);
        else if (choice < 136) push_interpreter_entry(g);
        break;
    }
    }
    if (t.anchor >= 0 && provider_chance(g->p, 16)) t.anchor = -2; /* anchor never set */
    return t;
}

/* ---- the true trace -------------------------------------------------------------------- */

static int reported(int kind, uint32_t options) {
    return kind <= WF_FRAME_NATIVE || (options & ASGST_INCLUDE_NON_JAVA_FRAMES);
}

static void truth_frame(wf_case *c, const gen_frame *f, int type, int level, int bci,
                        uintptr_t method) {
    ASGST_Frame *t = &c->truth[c->truth_count++];
    *t = (ASGST_Frame){.type = (uint8_t)type,
                       .comp_level = level,
                       .bci = bci,
                       .method = (ASGST_Method)method,
                       .pc = (void *)f->pc,
                       .sp = (void *)f->sp,
                       .fp = (void *)f->fp};
}

static void truth_of(wf_case *c, const gen_frame *f) {
    if (f->unbuilt && f->kind == WF_FRAME_INTERPRETED) return; /* reports no frame */
    switch (f->kind) {
    case WF_FRAME_INTERPRETED:
        truth_frame(c, f, ASGST_FRAME_JAVA, 0, (int)f->bci, wf_vm_method_handle(f->method));
        break;
    case WF_FRAME_COMPILED:
        if (f->desc == NULL) {
            truth_frame(c, f, ASGST_FRAME_JAVA, f->blob->comp_level, -1,
                        (uintptr_t)f->blob->method);
            break;
        }
        for (uint32_t s = 0; s < f->desc->scope_count; s++)
            truth_frame(
                c, f, s + 1 < f->desc->scope_count ? ASGST_FRAME_JAVA_INLINED : ASGST_FRAME_JAVA,
                f->blob->comp_level, f->desc->scopes[s].bci, (uintptr_t)f->desc->scopes[s].method);
        break;
    case WF_FRAME_NATIVE:
        truth_frame(c, f, ASGST_FRAME_JAVA_NATIVE, -1, -1, (uintptr_t)f->blob->method);
        break;
    default: truth_frame(c, f, ASGST_FRAME_NON_JAVA, -1, -1, 0); break;
    }
}

/* docs §4.1 checks 2-5 as the generator knows them; the start frame index or an error. */
static int expected_start(const gen *g, const wf_case *c, gen_top t, int32_t context_index,
                          int32_t *start) {
    const struct wf_vm_thread *th = WF_VM_THREAD_MUT;
    uint32_t need = (c->options & ASGST_WALK_SAME_THREAD) ? WF_THREAD_CURRENT : WF_THREAD_SUSPENDED;
    if (th->state == WF_THREAD_NOT_JAVA && !(c->options & ASGST_INCLUDE_NON_JAVA_FRAMES))
        return ASGST_NO_THREAD;
    if (!(th->flags & need)) return ASGST_NO_THREAD;
    if (th->state == WF_THREAD_EXITING) return ASGST_THREAD_EXIT;
    if (th->state == WF_THREAD_NEW || th->state == WF_THREAD_IN_TRANSITION)
        return ASGST_UNSAFE_STATE;
    *start = context_index;
    if (c->entry == WF_ENTRY_FROM_FRAME) return 0;
    if (th->state == WF_THREAD_IN_JAVA || th->state == WF_THREAD_NOT_JAVA)
        return c->entry == WF_ENTRY_NULL_CONTEXT ? ASGST_WF_BAD_ARGUMENT : 0;
    if (t.anchor < 0) return ASGST_NO_TOP_JAVA_FRAME;
    *start = t.anchor;
    (void)g;
    return 0;
}

/* The physical frames a correct walk from frame `start` visits (docs §4.2-4.4, as the
   generator knows its layout), in order: every frame below start, but a Java-only walk
   leaves an entry frame for its saved anchor (the C frames between are not visited) and
   ends at an entry without one. Emits the reported frames of the first `limit` into c's
   truth (c NULL: none); returns how many are visited, limit + 1 if more than limit. */
static uint32_t visit(const gen *g, int32_t start, uint32_t options, uint32_t limit, wf_case *c) {
    uint32_t n = 0;
    for (int32_t i = start; i >= 0; n++) {
        if (n == limit) return limit + 1; /* the walk stops here: ASGST_WF_DEPTH_LIMIT */
        const gen_frame *f = &g->frames[i];
        if (c != NULL && reported(f->kind, options)) truth_of(c, f);
        if (f->kind == WF_FRAME_ENTRY && !(options & ASGST_INCLUDE_NON_JAVA_FRAMES)) i = f->anchor;
        else i--;
    }
    return n;
}

static void record_truth(gen *g, wf_case *c, gen_top t, int32_t context_index) {
    int32_t start = 0;
    int rc = expected_start(g, c, t, context_index, &start);
    c->has_truth = 1;
    c->truth_count = 0;
    g->walk_depth = 0;
    if (rc != 0) {
        c->truth_run_result = c->truth_end_code = rc;
        return;
    }
    c->truth_run_result =
        WF_VM_THREAD_MUT->state == WF_THREAD_NOT_JAVA ? ASGST_CPP_TRACE : ASGST_JAVA_TRACE;
    g->walk_depth = visit(g, start, c->options, WF_WALK_MAX_DEPTH, c);
    c->truth_end_code = g->walk_depth > WF_WALK_MAX_DEPTH ? ASGST_WF_DEPTH_LIMIT : ASGST_NO_FRAME;
    if (g->walk_depth > WF_WALK_MAX_DEPTH) /* how far past it: the frames a walk never sees */
        g->walk_depth = visit(g, start, c->options, UINT32_MAX - 1, NULL);
    g->start = start;
}

/* ---- putting it together --------------------------------------------------------------- */

static uint32_t choose_state(gen *g) {
    static const uint8_t states[16] = {
        WF_THREAD_IN_JAVA,  WF_THREAD_IN_JAVA, WF_THREAD_IN_JAVA,       WF_THREAD_IN_JAVA,
        WF_THREAD_IN_JAVA,  WF_THREAD_IN_JAVA, WF_THREAD_IN_NATIVE,     WF_THREAD_IN_NATIVE,
        WF_THREAD_IN_VM,    WF_THREAD_IN_VM,   WF_THREAD_BLOCKED,       WF_THREAD_NOT_JAVA,
        WF_THREAD_NOT_JAVA, WF_THREAD_NEW,     WF_THREAD_IN_TRANSITION, WF_THREAD_EXITING};
    if (g->prm.state >= 0) return (uint32_t)g->prm.state;
    return states[provider_byte(g->p) % 16];
}

static void choose_walk(gen *g, wf_case *c, struct wf_vm_thread *th) {
    c->options = g->prm.options >= 0 ? (uint32_t)g->prm.options : (uint32_t)pick(g, 0, 3);
    uint32_t e = provider_byte(g->p);
    c->entry = g->prm.entry >= 0 ? (uint32_t)g->prm.entry
               : e < 208         ? WF_ENTRY_UCONTEXT
               : e < 244         ? WF_ENTRY_FROM_FRAME
                                 : WF_ENTRY_NULL_CONTEXT;
    th->flags = (c->options & ASGST_WALK_SAME_THREAD) ? WF_THREAD_CURRENT : WF_THREAD_SUSPENDED;
    if (provider_chance(g->p, 64)) th->flags = WF_THREAD_CURRENT | WF_THREAD_SUSPENDED;
    if (!g->prm.consistent && provider_chance(g->p, 24)) th->flags = (uint32_t)pick(g, 0, 3);
}

static void finish_thread(gen *g, wf_case *c, gen_top t, int32_t *context_index) {
    struct wf_vm_thread *th = WF_VM_THREAD_MUT;
    uint32_t red_zone = 8 * (uint32_t)pick(g, 0, 8);
    uintptr_t lo = top(g)->sp - red_zone;
    for (uintptr_t a = lo; a < top(g)->sp; a += 8) poke(a, junk_word(g));
    c->stack_size = (uint32_t)(WF_VM_STACK_TOP - lo);
    c->run_times = g->run_hi != 0 ? g->run_times : 0;
    c->run_offset = g->run_hi != 0 ? (uint32_t)(g->run_hi - lo) : 0;
    c->run_size = g->run_size;
    wf_vm_image_stack(c->stack_size);
    th->stack_lo = lo;
    th->stack_hi = WF_VM_STACK_TOP;
    if (t.anchor >= 0) {
        const gen_frame *a = &g->frames[t.anchor];
        th->anchor = (struct wf_vm_anchor){a->sp, a->fp, t.anchor_pc ? a->pc : 0};
    }
    *context_index = (int32_t)g->n_frames - 1;
    if (c->entry == WF_ENTRY_FROM_FRAME) {
        /* a deep second pass picks in the first pass's range, and the same frame */
        uint32_t n = g->deep != NULL ? g->deep->shallow : g->n_frames;
        *context_index = (int32_t)pick(g, 0, n - 1);
        if (g->deep != NULL && (uint32_t)*context_index >= g->deep->at)
            *context_index += (int32_t)g->deep->frames;
    }
    const gen_frame *ctx = &g->frames[*context_index];
    c->pc = ctx->pc;
    c->sp = ctx->sp;
    c->fp = ctx->fp;
}

static int generate_pass(gen_provider *p, const wf_gen_params *prm, const deep_plan *deep,
                         wf_case *c) {
    if (wf_vm_image_begin() != 0) return WF_CASE_ERR_MAP;
    gen *g = &G;
    memset(g, 0, offsetof(gen, frames));
    g->n_frames = 0;
    g->p = p;
    g->c = c;
    g->deep = deep;
    wf_gen_default_params(&g->prm);
    if (prm != NULL) g->prm = *prm;
    g->junk = provider_u64(p);
    make_classes_and_methods(g);
    make_code_heap(g);
    struct wf_vm_thread *th = WF_VM_THREAD_MUT;
    th->state = choose_state(g);
    choose_walk(g, c, th);
    uint32_t max = g->prm.max_frames ? g->prm.max_frames : WF_GEN_DEFAULT_MAX_FRAMES;
    if (max > WF_GEN_MAX_FRAMES) max = WF_GEN_MAX_FRAMES;
    uint32_t min = g->prm.min_frames > max ? max : g->prm.min_frames;
    gen_top t = build_stack(g, th->state, (uint32_t)pick(g, min ? min : 1, max));
    int32_t context_index;
    finish_thread(g, c, t, &context_index);
    c->mutations = 0;
    wf_vm_image_commit(g->classes, g->methods, g->blobs, g->descs);
    record_truth(g, c, t, context_index);
    return WF_CASE_OK;
}

/* Size the plan's run for the layout of the first pass: 0 if that layout's walk would not
   go through it, or the run does not fit (the second pass must make every choice the first
   made, so it must find the room the first found, frames and stack). */
static int fit_deep_plan(const gen *g, const wf_case *c, deep_plan *d) {
    if (g->walk_depth == 0 || WF_VM_THREAD_MUT->state == WF_THREAD_NOT_JAVA) return 0;
    if (g->start < (int32_t)g->run_at) return 0; /* the walk starts below the run */
    uint32_t outside = g->walk_depth;
    if (outside >= d->target) return 0;
    uint32_t need = d->target - outside, per_visits = 0, per_frames = 0, per_bytes = 0;
    for (uint32_t i = 0; i < d->n_units; i++) {
        per_visits += unit_visits(&d->units[i], c->options);
        per_frames += unit_frames(&d->units[i]);
        per_bytes += unit_bytes(&d->units[i]);
    }
    d->copies = need / per_visits;
    d->rest = need - d->copies * per_visits;
    d->frames = d->copies * per_frames + d->rest;
    uint64_t bytes = (uint64_t)d->copies * per_bytes + (uint64_t)d->rest * d->filler.size[0];
    uintptr_t lowest = WF_VM_THREAD_MUT->stack_lo;
    d->at = g->run_at;
    d->shallow = g->n_frames;
    return g->n_frames + d->frames + 8 < GEN_MAX_PHYSICAL &&
           lowest - bytes >= WF_VM_STACK + GEN_STACK_MARGIN + 4096;
}

/* The layout, then, if the bytes after it ask for a deep run that fits, the layout again
   from the same bytes with the run laid above the bottom entry frame. */
/* Whether these bytes (or this seed) get a deep run: one input in GEN_DEEP_ONE_IN, by a hash
   of all of them, not by a byte of the layout. libFuzzer favours the inputs that reach the
   depth limit, and their mutants would keep the byte: a campaign then spent most of its time
   in 8192-frame walks (a share of 6% deep inputs cost 5x the exec/s); a hash sends almost
   every mutant of a deep input back to a shallow one, and the same bytes still give the same
   case. */
static int deep_sampled(const gen_provider *p) {
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    if (p->seeded) h ^= p->state;
    for (size_t i = 0; !p->seeded && i < p->len; i++) h = (h ^ p->data[i]) * 0x100000001b3ULL;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    return (h >> 40) % GEN_DEEP_ONE_IN == 0;
}

static int generate(gen_provider *p, const wf_gen_params *prm, wf_case *c) {
    gen_provider from = *p;
    int rc = generate_pass(p, prm, NULL, c);
    if (rc != WF_CASE_OK || prm == NULL || !prm->deep) return rc;
    if (prm->deep < 2 && !deep_sampled(&from)) return rc;
    static deep_plan plan; /* the VM is one per process: so is a generation */
    if (!read_deep_plan(&G, &plan) || !fit_deep_plan(&G, c, &plan)) return rc;
    *p = from;
    rc = generate_pass(p, prm, &plan, c);
    deep_plan again;
    read_deep_plan(&G, &again); /* consume what the first pass consumed */
    return rc;
}

void wf_gen_default_params(wf_gen_params *p) {
    *p = (wf_gen_params){.state = -1,
                         .options = -1,
                         .entry = -1,
                         .consistent = 0,
                         .min_frames = 1,
                         .max_frames = WF_GEN_DEFAULT_MAX_FRAMES,
                         .deep = 0};
}

int wf_gen_from_bytes(const uint8_t *data, size_t len, const wf_gen_params *p, wf_case *c) {
    gen_provider prov;
    provider_bytes(&prov, data, len);
    int rc = generate(&prov, p, c);
    consumed = prov.pos;
    return rc;
}

int wf_gen_from_seed(uint64_t seed, const wf_gen_params *p, wf_case *c) {
    gen_provider prov;
    provider_seed(&prov, seed);
    consumed = 0;
    return generate(&prov, p, c);
}

size_t wf_gen_consumed(void) { return consumed; }

uint32_t wf_gen_layout_count(void) { return G.n_frames; }

uint32_t wf_gen_walk_depth(void) { return G.walk_depth; }

void wf_gen_layout_reset(void) { G.n_frames = 0; }

int wf_gen_layout_frame(uint32_t i, wf_gen_frame *out) {
    if (i >= G.n_frames) return -1;
    const gen_frame *f = &G.frames[G.n_frames - 1 - i];
    *out = (wf_gen_frame){.kind = f->kind, .sp = f->sp, .fp = f->fp, .pc = f->pc};
    return 0;
}
