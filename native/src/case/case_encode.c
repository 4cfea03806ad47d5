/* case_encode.c — encode the mapped case (VM regions + wf_case) in the format of
 * docs/case-format.md §2. Deterministic: the same case gives the same bytes. */
#include <string.h>

#include "case_encode.h"
#include "case_expected.h"
#include "case_queue.h" /* section 9, the queue program */
#include "vm/vm_image.h"
#include "wf_case.h"
#include "wf_vm.h"

typedef struct writer {
    uint8_t *out;
    size_t cap;
    size_t len; /* bytes produced (counted even past cap) */
} writer;

static void put(writer *w, const void *bytes, size_t n) {
    if (w->len + n <= w->cap) memcpy(w->out + w->len, bytes, n);
    w->len += n;
}

static void put_le(writer *w, uint64_t v, int n) {
    uint8_t b[8];
    for (int i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * i));
    put(w, b, (size_t)n);
}
#define U8(w, v) put_le(w, (uint64_t)(v), 1)
#define U16(w, v) put_le(w, (uint64_t)(v), 2)
#define U32(w, v) put_le(w, (uint64_t)(v), 4)
#define U64(w, v) put_le(w, (uint64_t)(v), 8)

static void put_str(writer *w, const char *s, uint32_t len) {
    U16(w, len);
    put(w, s, len);
}

/* Section header now, its length patched when the section ends. */
static size_t begin_section(writer *w, int type) {
    U16(w, type);
    U16(w, 0);
    U32(w, 0);
    return w->len;
}

static void end_section(writer *w, size_t start) {
    uint32_t length = (uint32_t)(w->len - start);
    if (start <= w->cap)
        for (int i = 0; i < 4; i++) w->out[start - 4 + i] = (uint8_t)(length >> (8 * i));
}

static uint32_t method_index(const void *handle) {
    return handle == NULL ? WF_VM_NO_METHOD
                          : (uint32_t)(((uintptr_t)handle - WF_VM_METHODS) / WF_VM_METHOD_STRIDE);
}

static void encode_classes(writer *w, const struct wf_vm *vm) {
    size_t s = begin_section(w, WF_SECTION_CLASSES);
    U32(w, vm->class_count);
    for (uint32_t i = 0; i < vm->class_count; i++) {
        const struct wf_vm_class *k = &vm->classes[i];
        U32(w, (uint32_t)k->modifiers);
        put_str(w, k->name, k->name_length);
        put_str(w, k->generic_name, k->generic_name_length);
    }
    end_section(w, s);
}

static void encode_methods(writer *w, const struct wf_vm *vm) {
    size_t s = begin_section(w, WF_SECTION_METHODS);
    U32(w, vm->method_count);
    for (uint32_t i = 0; i < vm->method_count; i++) {
        const struct wf_vm_method *m = &vm->methods[i];
        U32(w, m->klass->index);
        U32(w, (uint32_t)m->modifiers);
        U16(w, m->code_size);
        put_str(w, m->name, m->name_length);
        put_str(w, m->signature, m->signature_length);
        put_str(w, m->generic_signature, m->generic_signature_length);
    }
    end_section(w, s);
}

static void encode_code(writer *w, const struct wf_vm *vm) {
    size_t s = begin_section(w, WF_SECTION_CODE);
    U32(w, vm->blob_count);
    for (uint32_t i = 0; i < vm->blob_count; i++) {
        const struct wf_vm_blob *b = &vm->blobs[i];
        U8(w, b->kind);
        U8(w, b->comp_level);
        U16(w, 0);
        U32(w, b->start - WF_VM_CODE_HEAP);
        U32(w, b->end - b->start);
        U32(w, b->frame_size);
        U32(w, b->frame_complete);
        U32(w, method_index(b->method));
        U32(w, b->desc_count);
        for (uint32_t d = 0; d < b->desc_count; d++) {
            const struct wf_vm_pcdesc *pd = &b->descs[d];
            U32(w, pd->pc_begin);
            U32(w, pd->pc_end);
            U8(w, pd->scope_count);
            for (uint32_t k = 0; k < pd->scope_count; k++) {
                U32(w, method_index(pd->scopes[k].method));
                U16(w, pd->scopes[k].bci);
            }
        }
    }
    end_section(w, s);
}

static void encode_thread(writer *w, const struct wf_vm_thread *t) {
    size_t s = begin_section(w, WF_SECTION_THREAD);
    U8(w, t->state);
    U8(w, t->flags);
    U16(w, 0);
    U32(w, 0);
    U64(w, t->anchor.sp);
    U64(w, t->anchor.fp);
    U64(w, t->anchor.pc);
    end_section(w, s);
}

static void encode_truth(writer *w, const wf_case *c) {
    size_t s = begin_section(w, WF_SECTION_TRUTH);
    U32(w, (uint32_t)c->truth_run_result);
    U32(w, (uint32_t)c->truth_end_code);
    U32(w, c->truth_count);
    for (uint32_t i = 0; i < c->truth_count; i++) {
        const ASGST_Frame *f = &c->truth[i];
        U8(w, f->type);
        U8(w, (uint8_t)(int8_t)f->comp_level);
        U16(w, 0);
        U32(w, (uint32_t)f->bci);
        U32(w, method_index(f->method));
        U64(w, (uintptr_t)f->pc);
        U64(w, (uintptr_t)f->sp);
        U64(w, (uintptr_t)f->fp);
    }
    end_section(w, s);
}

/* A section written by another module's encoder (size first, then the bytes). */
static void put_encoded(writer *w, size_t size, void (*write)(const void *, uint8_t *),
                        const void *what) {
    if (size > 0 && w->len + size <= w->cap) write(what, w->out + w->len);
    w->len += size;
}

static void write_queue(const void *parts, uint8_t *out) {
    const wf_case_parts *p = parts;
    wf_case_queue_encode(p->queue, p->queue_count, out);
}

static void write_expected(const void *e, uint8_t *out) { wf_case_expected_write(e, out); }

/* Section 10: the code heap's bytes of each patch range, read where they are mapped. */
static void encode_code_bytes(writer *w, const wf_case_parts *p) {
    size_t s = begin_section(w, WF_SECTION_CODE_BYTES);
    U32(w, p->patch_count);
    for (uint32_t i = 0; i < p->patch_count; i++) {
        U32(w, p->patches[i].offset);
        U32(w, p->patches[i].length);
        put(w, (const void *)(uintptr_t)(WF_VM_CODE_HEAP + p->patches[i].offset),
            p->patches[i].length);
    }
    end_section(w, s);
}

/* The case's stack run, if the image still holds its copies (a mutation may have changed
   one): the chunks literal below, repeat, literal above. */
static int runs_hold(const wf_case_parts *p) {
    const wf_case *c = p->c;
    if (c->run_times < 2 || c->run_size == 0 || c->run_size % 8 != 0 || c->run_offset % 8 != 0)
        return 0;
    uint64_t below = (uint64_t)(c->run_times - 1) * c->run_size;
    if (below > c->run_offset || (uint64_t)c->run_offset + c->run_size > p->stack_size) return 0;
    uintptr_t hi = WF_VM_STACK_TOP - p->stack_size + c->run_offset;
    return wf_vm_stack_repeat_holds(p->stack + c->run_offset, hi, c->run_size, c->run_times);
}

static void put_literal(writer *w, const uint8_t *bytes, uint32_t n) {
    if (n == 0) return;
    U8(w, WF_CASE_CHUNK_LITERAL);
    U32(w, n);
    put(w, bytes, n);
}

static void encode_stack(writer *w, const wf_case_parts *p) {
    size_t s = begin_section(w, WF_SECTION_STACK);
    if (!runs_hold(p)) {
        put(w, p->stack, p->stack_size);
        end_section(w, s);
        return;
    }
    if (s <= w->cap) w->out[s - 6] = WF_CASE_SECTION_RUNS; /* the flags' low byte */
    const wf_case *c = p->c;
    uint32_t low = c->run_offset - (c->run_times - 1) * c->run_size;
    uint32_t above = c->run_offset + c->run_size;
    U32(w, p->stack_size);
    put_literal(w, p->stack, low);
    U8(w, WF_CASE_CHUNK_REPEAT);
    U32(w, c->run_size);
    U32(w, c->run_times);
    put(w, p->stack + c->run_offset, c->run_size);
    put_literal(w, p->stack + above, p->stack_size - above);
    end_section(w, s);
}

int64_t wf_case_encode_parts(const wf_case_parts *p, uint8_t *out, size_t cap) {
    const struct wf_vm *vm = WF_VM;
    const wf_case *c = p->c;
    writer w = {.out = out, .cap = out == NULL ? 0 : cap};
    put(&w, "WFCS", 4);
    U16(&w, WF_CASE_VERSION);
    U16(&w, 0);
    encode_classes(&w, vm);
    encode_methods(&w, vm);
    encode_code(&w, vm);
    encode_thread(&w, p->thread);
    encode_stack(&w, p);
    size_t s = begin_section(&w, WF_SECTION_CONTEXT);
    U64(&w, c->pc);
    U64(&w, c->sp);
    U64(&w, c->fp);
    end_section(&w, s);
    s = begin_section(&w, WF_SECTION_WALK);
    U32(&w, c->options);
    U8(&w, c->entry);
    U8(&w, 0);
    U16(&w, 0);
    end_section(&w, s);
    if (c->has_truth) encode_truth(&w, c);
    if (p->has_queue) /* section 9, the queue program */
        put_encoded(&w, wf_case_queue_encode(p->queue, p->queue_count, NULL), write_queue, p);
    if (p->patch_count > 0) encode_code_bytes(&w, p);
    if (p->expected != NULL)
        put_encoded(&w, wf_case_expected_encoded_size(p->expected), write_expected, p->expected);
    return w.len <= w.cap ? (int64_t)w.len : -(int64_t)w.len;
}

int64_t wf_case_encode(const wf_case *c, uint8_t *out, size_t cap) {
    const struct wf_vm *vm = WF_VM;
    if (!wf_vm_is_mapped() || vm->magic != WF_VM_MAGIC) return 0;
    wf_case_parts p = {.thread = vm->thread,
                       .stack = (const uint8_t *)vm->thread->stack_lo,
                       .stack_size = c->stack_size,
                       .c = c,
                       .expected = wf_case_expected_get()};
    p.queue = wf_case_queue_ops(&p.queue_count);
    p.has_queue = wf_case_queue_encoded_size() > 0;
    static wf_code_patch patches[WF_CASE_MAX_CODE_PATCHES];
    p.patch_count = wf_vm_image_patch_count();
    for (uint32_t i = 0; i < p.patch_count; i++)
        wf_vm_image_patch(i, &patches[i].offset, &patches[i].length);
    p.patches = patches;
    return wf_case_encode_parts(&p, out, cap);
}
