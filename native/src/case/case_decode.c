/* case_decode.c — decode a case (docs/case-format.md §2) straight into the fixed regions of
 * the simulated VM. Any bytes give a status, never a crash; the first failing rule wins. */
#include <stdlib.h>
#include <string.h>

#include "case_expected.h"
#include "case_queue.h" /* section 9, the queue program */
#include "case_reader.h"
#include "vm/vm_image.h"
#include "wf_case.h"
#include "wf_vm.h"

/* Tables written so far; also what the next case must clear. */
typedef struct decode_state {
    case_reader r;
    wf_case *c;
    uint32_t classes, methods, blobs, descs;
    uint32_t seen;  /* bit t: section t (1..8) decoded */
    uint16_t flags; /* of the section being decoded */
} decode_state;

#define FAIL(st, status, ...) case_fail(&(st)->r, status, __VA_ARGS__)

static int decode_classes(decode_state *st) {
    uint32_t count;
    if (case_u32(&st->r, &count, "class count")) return st->r.status;
    if (count > WF_VM_MAX_CLASSES)
        return FAIL(st, WF_CASE_ERR_LIMIT, "class count %u > %d", count, WF_VM_MAX_CLASSES);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t modifiers;
        const uint8_t *name, *generic;
        uint16_t name_len, generic_len;
        if (case_u32(&st->r, &modifiers, "class modifiers") ||
            case_str(&st->r, &name, &name_len, "class name") ||
            case_str(&st->r, &generic, &generic_len, "class generic name"))
            return st->r.status;
        struct wf_vm_class *k = WF_VM_CLASS_MUT(i);
        st->classes = i + 1;
        k->name = wf_vm_image_string(name, name_len);
        k->generic_name = wf_vm_image_string(generic, generic_len);
        if (k->name == NULL || k->generic_name == NULL)
            return FAIL(st, WF_CASE_ERR_LIMIT, "class %u: string pool full", i);
        k->name_length = name_len;
        k->generic_name_length = generic_len;
        k->modifiers = (int32_t)modifiers;
        k->index = i;
    }
    return 0;
}

static int decode_methods(decode_state *st) {
    uint32_t count;
    if (case_u32(&st->r, &count, "method count")) return st->r.status;
    if (count > WF_VM_MAX_METHODS)
        return FAIL(st, WF_CASE_ERR_LIMIT, "method count %u > %d", count, WF_VM_MAX_METHODS);
    if (count == 0) return FAIL(st, WF_CASE_ERR_BAD_FIELD, "method count 0");
    for (uint32_t i = 0; i < count; i++) {
        uint32_t class_index, modifiers;
        uint16_t code_size, name_len, sig_len, gsig_len;
        const uint8_t *name, *sig, *gsig;
        if (case_u32(&st->r, &class_index, "method class index") ||
            case_u32(&st->r, &modifiers, "method modifiers") ||
            case_u16(&st->r, &code_size, "method code size") ||
            case_str(&st->r, &name, &name_len, "method name") ||
            case_str(&st->r, &sig, &sig_len, "method signature") ||
            case_str(&st->r, &gsig, &gsig_len, "method generic signature"))
            return st->r.status;
        if (class_index >= st->classes)
            return FAIL(st, WF_CASE_ERR_BAD_FIELD, "method %u: class index %u >= %u classes", i,
                        class_index, st->classes);
        if (code_size == 0) return FAIL(st, WF_CASE_ERR_BAD_FIELD, "method %u: code size 0", i);
        struct wf_vm_method *m = WF_VM_METHOD_MUT(i);
        st->methods = i + 1;
        m->name = wf_vm_image_string(name, name_len);
        m->signature = wf_vm_image_string(sig, sig_len);
        m->generic_signature = wf_vm_image_string(gsig, gsig_len);
        if (m->name == NULL || m->signature == NULL || m->generic_signature == NULL)
            return FAIL(st, WF_CASE_ERR_LIMIT, "method %u: string pool full", i);
        m->klass = (const struct wf_vm_class *)wf_vm_class_handle(class_index);
        m->code_base = WF_VM_BYTECODE + (uintptr_t)i * WF_VM_BYTECODE_STRIDE;
        m->code_size = code_size;
        m->modifiers = (int32_t)modifiers;
        m->name_length = name_len;
        m->signature_length = sig_len;
        m->generic_signature_length = gsig_len;
        m->index = i;
    }
    return 0;
}

static int has_fixed_frame(uint8_t kind) {
    return kind == WF_BLOB_COMPILED || kind == WF_BLOB_NATIVE_WRAPPER || kind == WF_BLOB_STUB;
}

static int has_method(uint8_t kind) {
    return kind == WF_BLOB_COMPILED || kind == WF_BLOB_NATIVE_WRAPPER;
}

/* The fixed fields of one blob, checked in the order of the format's table. */
static int check_blob(decode_state *st, uint32_t i, uint8_t kind, uint8_t level, uint16_t reserved,
                      uint32_t start, uint32_t size, uint32_t frame_size, uint32_t complete,
                      uint32_t method, uint32_t desc_count, uint64_t prev_end) {
    if (kind < WF_BLOB_INTERPRETER || kind > WF_BLOB_ENTRY)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "blob %u: kind %u", i, kind);
    if (kind == WF_BLOB_COMPILED ? (level < 1 || level > 4) : level != 0)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "blob %u: comp level %u for kind %u", i, level,
                    kind);
    if (reserved != 0) return FAIL(st, WF_CASE_ERR_BAD_FIELD, "blob %u: reserved %u", i, reserved);
    if (start < prev_end)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "blob %u: start %#x overlaps or is out of order", i,
                    start);
    if (size == 0 || (uint64_t)start + size > WF_VM_CODE_HEAP_SIZE)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "blob %u: size %#x at %#x leaves the code heap", i,
                    size, start);
    if (has_fixed_frame(kind) ? (frame_size % 8 != 0 || frame_size < WF_VM_MIN_FRAME_SIZE ||
                                 frame_size > WF_VM_MAX_FRAME_SIZE)
                              : frame_size != 0)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "blob %u: frame size %u for kind %u", i, frame_size,
                    kind);
    if (kind != WF_BLOB_ENTRY ? complete > size : complete != 0)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "blob %u: frame complete %u", i, complete);
    if (has_method(kind) ? method >= st->methods : method != WF_VM_NO_METHOD)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "blob %u: method index %u", i, method);
    if (kind != WF_BLOB_COMPILED && desc_count != 0)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "blob %u: %u pc descriptors on kind %u", i,
                    desc_count, kind);
    if (desc_count > WF_VM_MAX_PCDESCS - st->descs)
        return FAIL(st, WF_CASE_ERR_LIMIT, "blob %u: pc descriptors above %d in total", i,
                    WF_VM_MAX_PCDESCS);
    return 0;
}

static int decode_desc(decode_state *st, uint32_t blob, uint32_t size, uint32_t *prev_end) {
    const uint8_t *rec = case_record(&st->r, 9, "pc descriptor");
    if (rec == NULL) return st->r.status;
    uint32_t begin = case_ld32(rec), end = case_ld32(rec + 4), scopes = rec[8];
    if (begin >= end || end > size || begin < *prev_end)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "blob %u: pc descriptor [%#x, %#x) bad", blob, begin,
                    end);
    if (scopes == 0 || scopes > WF_VM_MAX_SCOPES)
        return FAIL(st, scopes == 0 ? WF_CASE_ERR_BAD_FIELD : WF_CASE_ERR_LIMIT,
                    "blob %u: %u scopes", blob, scopes);
    const uint8_t *sc = case_record(&st->r, 6 * scopes, "pc descriptor scopes");
    if (sc == NULL) return st->r.status;
    struct wf_vm_pcdesc *d = WF_VM_PCDESC_MUT(st->descs);
    st->descs++;
    d->pc_begin = begin;
    d->pc_end = end;
    d->scope_count = scopes;
    for (uint32_t s = 0; s < scopes; s++, sc += 6) {
        uint32_t method = case_ld32(sc), bci = case_ld16(sc + 4);
        if (method >= st->methods)
            return FAIL(st, WF_CASE_ERR_BAD_FIELD, "blob %u: scope method %u", blob, method);
        if (bci >= WF_VM_METHOD_MUT(method)->code_size)
            return FAIL(st, WF_CASE_ERR_BAD_FIELD, "blob %u: scope bci %u >= code size %u", blob,
                        bci, WF_VM_METHOD_MUT(method)->code_size);
        d->scopes[s].method = (const struct wf_vm_method *)wf_vm_method_handle(method);
        d->scopes[s].bci = (int32_t)bci;
    }
    *prev_end = end;
    return 0;
}

static int decode_code(decode_state *st) {
    uint32_t count;
    if (case_u32(&st->r, &count, "blob count")) return st->r.status;
    if (count > WF_VM_MAX_BLOBS)
        return FAIL(st, WF_CASE_ERR_LIMIT, "blob count %u > %d", count, WF_VM_MAX_BLOBS);
    uint64_t prev_end = 0;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *rec = case_record(&st->r, 28, "blob");
        if (rec == NULL) return st->r.status;
        uint8_t kind = rec[0], level = rec[1];
        uint16_t reserved = case_ld16(rec + 2);
        uint32_t start = case_ld32(rec + 4), size = case_ld32(rec + 8);
        uint32_t frame_size = case_ld32(rec + 12), complete = case_ld32(rec + 16);
        uint32_t method = case_ld32(rec + 20), desc_count = case_ld32(rec + 24);
        if (check_blob(st, i, kind, level, reserved, start, size, frame_size, complete, method,
                       desc_count, prev_end))
            return st->r.status;
        struct wf_vm_blob *b = WF_VM_BLOB_MUT(i);
        st->blobs = i + 1;
        b->start = WF_VM_CODE_HEAP + start;
        b->end = b->start + size;
        b->kind = kind;
        b->comp_level = level;
        b->frame_size = frame_size;
        b->frame_complete = complete;
        b->method =
            has_method(kind) ? (const struct wf_vm_method *)wf_vm_method_handle(method) : NULL;
        b->descs = WF_VM_PCDESC_MUT(st->descs);
        b->desc_count = desc_count;
        b->index = i;
        uint32_t desc_end = 0;
        for (uint32_t d = 0; d < desc_count; d++)
            if (decode_desc(st, i, size, &desc_end)) return st->r.status;
        prev_end = (uint64_t)start + size;
    }
    return 0;
}

static int decode_thread(decode_state *st) {
    uint8_t state, flags;
    uint16_t reserved16;
    uint32_t reserved32;
    struct wf_vm_thread *t = WF_VM_THREAD_MUT;
    if (case_u8(&st->r, &state, "thread state") || case_u8(&st->r, &flags, "thread flags") ||
        case_u16(&st->r, &reserved16, "thread reserved") ||
        case_u32(&st->r, &reserved32, "thread reserved") ||
        case_u64(&st->r, &t->anchor.sp, "anchor sp") ||
        case_u64(&st->r, &t->anchor.fp, "anchor fp") ||
        case_u64(&st->r, &t->anchor.pc, "anchor pc"))
        return st->r.status;
    if (state > WF_THREAD_EXITING) return FAIL(st, WF_CASE_ERR_BAD_FIELD, "thread state %u", state);
    if (flags & ~(WF_THREAD_SUSPENDED | WF_THREAD_CURRENT))
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "thread flags %#x", flags);
    if (reserved16 != 0 || reserved32 != 0)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "thread reserved bytes not 0");
    t->state = state;
    t->flags = flags;
    return 0;
}

static int check_stack_size(decode_state *st, size_t size) {
    if (size > WF_VM_STACK_SIZE)
        return FAIL(st, WF_CASE_ERR_LIMIT, "stack image %zu bytes > %d", size, WF_VM_STACK_SIZE);
    if (size == 0 || size % 8 != 0)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD,
                    "stack image %zu bytes: not a positive multiple of 8", size);
    return 0;
}

/* One chunk of a run-encoded stack into the image at offset *at (docs §2, STACK). */
static int decode_stack_chunk(decode_state *st, uint8_t *image, uint32_t size, uint32_t *at) {
    case_reader *r = &st->r;
    uint8_t kind;
    uint32_t n, times = 1;
    if (case_u8(r, &kind, "stack chunk kind")) return r->status;
    if (kind > WF_CASE_CHUNK_REPEAT) return FAIL(st, WF_CASE_ERR_BAD_FIELD, "stack chunk %u", kind);
    if (case_u32(r, &n, "stack chunk size")) return r->status;
    if (kind == WF_CASE_CHUNK_REPEAT && case_u32(r, &times, "stack chunk times")) return r->status;
    if (n == 0 || n % 8 != 0 || (kind == WF_CASE_CHUNK_REPEAT && times < 2) ||
        (uint64_t)n * times > size - *at)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD,
                    "stack chunk of %u bytes x %u at %u: empty, unaligned or past %u", n, times,
                    *at, size);
    if (r->end - r->pos < n) return case_short(r, n, "stack chunk bytes");
    uint32_t top = *at + (times - 1) * n; /* the run's highest place */
    memcpy(image + top, r->data + r->pos, n);
    r->pos += n;
    if (times > 1) {
        wf_vm_stack_repeat(image + top, WF_VM_STACK_TOP - size + top, n, times);
        if (st->c->run_times == 0) {
            st->c->run_offset = top;
            st->c->run_size = n;
            st->c->run_times = times;
        }
    }
    *at += n * times;
    return 0;
}

/* With RUNS: u32 image size, then chunks (literal or repeat) that fill it exactly. */
static int decode_stack_runs(decode_state *st, size_t *size) {
    uint32_t image_size, at = 0;
    if (case_u32(&st->r, &image_size, "stack image size")) return st->r.status;
    if (check_stack_size(st, image_size)) return st->r.status;
    uint8_t *image = wf_vm_image_stack(image_size);
    while (st->r.pos < st->r.end)
        if (decode_stack_chunk(st, image, image_size, &at)) return st->r.status;
    if (at != image_size)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "stack chunks fill %u of %u bytes", at, image_size);
    *size = image_size;
    return 0;
}

static int decode_stack(decode_state *st) {
    size_t size = st->r.end - st->r.pos;
    st->c->run_times = 0;
    if (st->flags & WF_CASE_SECTION_RUNS) {
        if (decode_stack_runs(st, &size)) return st->r.status;
    } else {
        if (check_stack_size(st, size)) return st->r.status;
        memcpy(wf_vm_image_stack((uint32_t)size), st->r.data + st->r.pos, size);
        st->r.pos += size;
    }
    struct wf_vm_thread *t = WF_VM_THREAD_MUT;
    t->stack_hi = WF_VM_STACK_TOP;
    t->stack_lo = WF_VM_STACK_TOP - size;
    st->c->stack_size = (uint32_t)size;
    return 0;
}

static int decode_context(decode_state *st) {
    if (case_u64(&st->r, &st->c->pc, "context pc") || case_u64(&st->r, &st->c->sp, "context sp") ||
        case_u64(&st->r, &st->c->fp, "context fp"))
        return st->r.status;
    return 0;
}

static int decode_walk(decode_state *st) {
    uint8_t entry, reserved[3];
    if (case_u32(&st->r, &st->c->options, "walk options") ||
        case_u8(&st->r, &entry, "walk entry") || case_u8(&st->r, &reserved[0], "walk reserved") ||
        case_u8(&st->r, &reserved[1], "walk reserved") ||
        case_u8(&st->r, &reserved[2], "walk reserved"))
        return st->r.status;
    if (entry > WF_ENTRY_NULL_CONTEXT)
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "walk entry %u", entry);
    if (reserved[0] | reserved[1] | reserved[2])
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "walk reserved bytes not 0");
    st->c->entry = entry;
    return 0;
}

static int decode_truth_frame(decode_state *st, uint32_t i) {
    const uint8_t *rec = case_record(&st->r, WF_CASE_TRUTH_FRAME_SIZE, "truth frame");
    if (rec == NULL) return st->r.status;
    uint8_t type = rec[0];
    uint16_t reserved = case_ld16(rec + 2);
    uint32_t method = case_ld32(rec + 8);
    if (type < ASGST_FRAME_JAVA || type > ASGST_FRAME_NON_JAVA || reserved != 0 ||
        (method != WF_VM_NO_METHOD && method >= st->methods))
        return FAIL(st, WF_CASE_ERR_BAD_FIELD, "truth frame %u: type %u, method %u", i, type,
                    method);
    ASGST_Frame *f = &st->c->truth[i];
    f->type = type;
    f->comp_level = (int8_t)rec[1];
    f->bci = (int32_t)case_ld32(rec + 4);
    f->method = method == WF_VM_NO_METHOD ? NULL : (ASGST_Method)wf_vm_method_handle(method);
    f->pc = (void *)(uintptr_t)case_ld64(rec + 12);
    f->sp = (void *)(uintptr_t)case_ld64(rec + 20);
    f->fp = (void *)(uintptr_t)case_ld64(rec + 28);
    return 0;
}

static int decode_truth(decode_state *st) {
    uint32_t run, end, count;
    if (case_u32(&st->r, &run, "truth run result") || case_u32(&st->r, &end, "truth end code") ||
        case_u32(&st->r, &count, "truth count"))
        return st->r.status;
    if (count > WF_CASE_MAX_TRUTH)
        return FAIL(st, WF_CASE_ERR_LIMIT, "truth count %u > %d", count, WF_CASE_MAX_TRUTH);
    for (uint32_t i = 0; i < count; i++)
        if (decode_truth_frame(st, i)) return st->r.status;
    st->c->has_truth = 1;
    st->c->truth_run_result = (int32_t)run;
    st->c->truth_end_code = (int32_t)end;
    st->c->truth_count = count;
    return 0;
}

/* section 9, the queue program, decoded by case_queue.c */
static int decode_queue(decode_state *st) { return wf_case_queue_decode(&st->r); }

/* Section 10: patches over the code heap's 0xCC fill, each header checked before its bytes. */
static int decode_code_bytes(decode_state *st) {
    uint32_t count;
    if (case_u32(&st->r, &count, "code patch count")) return st->r.status;
    if (count > WF_CASE_MAX_CODE_PATCHES)
        return FAIL(st, WF_CASE_ERR_LIMIT, "code patch count %u > %d", count,
                    WF_CASE_MAX_CODE_PATCHES);
    uint64_t prev_end = 0;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *rec = case_record(&st->r, 8, "code patch");
        if (rec == NULL) return st->r.status;
        uint32_t offset = case_ld32(rec), length = case_ld32(rec + 4);
        if (length == 0 || offset < prev_end || (uint64_t)offset + length > WF_VM_CODE_HEAP_SIZE)
            return FAIL(st, WF_CASE_ERR_BAD_FIELD,
                        "code patch %u: [%#x, +%#x) empty, out of order or outside the heap", i,
                        offset, length);
        const uint8_t *bytes = case_record(&st->r, length, "code patch bytes");
        if (bytes == NULL) return st->r.status;
        if (wf_vm_image_code(offset, bytes, length) != 0)
            return FAIL(st, WF_CASE_ERR_MAP, "code patch %u: cannot write the code heap", i);
        prev_end = (uint64_t)offset + length;
    }
    return 0;
}

/* section 11, the live oracle's expected trace (case_expected.c) */
static int decode_expected(decode_state *st) {
    return wf_case_expected_decode(&st->r, st->methods, wf_case_queue_op_count());
}

typedef int (*section_decoder)(decode_state *st);
static const section_decoder DECODERS[] = {
    [WF_SECTION_CLASSES] = decode_classes,
    [WF_SECTION_METHODS] = decode_methods,
    [WF_SECTION_CODE] = decode_code,
    [WF_SECTION_THREAD] = decode_thread,
    [WF_SECTION_STACK] = decode_stack,
    [WF_SECTION_CONTEXT] = decode_context,
    [WF_SECTION_WALK] = decode_walk,
    [WF_SECTION_TRUTH] = decode_truth,
    [WF_SECTION_QUEUE] = decode_queue, /* section 9 */
    [WF_SECTION_CODE_BYTES] = decode_code_bytes,
    [WF_SECTION_EXPECTED] = decode_expected,
};
#define KNOWN_SECTIONS ((int)(sizeof DECODERS / sizeof DECODERS[0]))
#define REQUIRED_SECTIONS 0xFEu /* bits 1..7 */

static int decode_header(case_reader *r) {
    uint8_t magic[4];
    uint16_t version, flags;
    if (r->end < WF_CASE_HEADER_SIZE)
        return case_fail(r, WF_CASE_ERR_TRUNCATED, "%zu bytes, a header needs %d", r->end,
                         WF_CASE_HEADER_SIZE);
    for (int i = 0; i < 4; i++)
        if (case_u8(r, &magic[i], "header magic")) return r->status;
    if (memcmp(magic, "WFCS", 4) != 0) {
        r->pos = 0;
        return case_fail(r, WF_CASE_ERR_MAGIC, "magic %02x%02x%02x%02x is not \"WFCS\"", magic[0],
                         magic[1], magic[2], magic[3]);
    }
    if (case_u16(r, &version, "header version") || case_u16(r, &flags, "header flags"))
        return r->status;
    if (version != WF_CASE_VERSION)
        return case_fail(r, WF_CASE_ERR_VERSION, "version %u, this decoder reads %d", version,
                         WF_CASE_VERSION);
    if (flags != 0) return case_fail(r, WF_CASE_ERR_BAD_FIELD, "header flags %#x", flags);
    return 0;
}

static int decode_section(decode_state *st, int *last_type) {
    case_reader *r = &st->r;
    uint16_t type, flags;
    uint32_t length;
    r->section = 0;
    if (case_u16(r, &type, "section type") || case_u16(r, &flags, "section flags") ||
        case_u32(r, &length, "section length"))
        return r->status;
    r->section = type;
    if (r->end - r->pos < length)
        return case_fail(r, WF_CASE_ERR_TRUNCATED, "section %u: length %u, %zu bytes left", type,
                         length, r->end - r->pos);
    uint16_t allowed =
        WF_CASE_SECTION_OPTIONAL | (type == WF_SECTION_STACK ? WF_CASE_SECTION_RUNS : 0);
    if (flags & ~allowed)
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "section %u: flags %#x", type, flags);
    st->flags = flags;
    if (type <= *last_type)
        return case_fail(r, WF_CASE_ERR_SECTION_ORDER, "section %u after section %d", type,
                         *last_type);
    *last_type = type;
    if (type >= KNOWN_SECTIONS || DECODERS[type] == NULL) {
        if (!(flags & WF_CASE_SECTION_OPTIONAL))
            return case_fail(r, WF_CASE_ERR_UNKNOWN_SECTION, "section %u unknown", type);
        r->pos += length;
        return 0;
    }
    size_t input_end = r->end;
    r->end = r->pos + length;
    r->short_status = WF_CASE_ERR_SECTION_LENGTH;
    if (DECODERS[type](st)) return r->status;
    if (r->pos != r->end)
        return case_fail(r, WF_CASE_ERR_SECTION_LENGTH, "section %u: %zu bytes left over", type,
                         r->end - r->pos);
    r->end = input_end;
    r->short_status = WF_CASE_ERR_TRUNCATED;
    st->seen |= 1u << type;
    return 0;
}

static int decode_sections(decode_state *st) {
    int last_type = 0;
    while (st->r.pos < st->r.end)
        if (decode_section(st, &last_type)) return st->r.status;
    for (int t = 1; t < KNOWN_SECTIONS; t++)
        if ((REQUIRED_SECTIONS & (1u << t)) && !(st->seen & (1u << t))) {
            st->r.section = t;
            return case_fail(&st->r, WF_CASE_ERR_MISSING_SECTION, "section %d missing", t);
        }
    return 0;
}

int wf_case_decode(const uint8_t *data, size_t len, wf_case *c, wf_case_error *err) {
    decode_state st = {
        .r = {.data = data, .end = len, .short_status = WF_CASE_ERR_TRUNCATED, .err = err}, .c = c};
    if (err != NULL) memset(err, 0, sizeof *err);
    c->has_truth = 0;
    c->truth_count = 0;
    c->mutations = 0;
    c->run_times = 0;
    wf_case_queue_clear(); /* no queue program unless section 9 says so */
    wf_case_expected_clear();
    wf_gen_layout_reset();
    if (decode_header(&st.r)) return st.r.status;
    if (wf_vm_image_begin() != 0)
        return case_fail(&st.r, WF_CASE_ERR_MAP, "cannot map the VM at %#lx", (long)WF_VM_ROOT);
    if (decode_sections(&st)) {
        wf_vm_image_touched(st.classes, st.methods, st.blobs, st.descs);
        c->has_truth = 0;
        return st.r.status;
    }
    wf_vm_image_commit(st.classes, st.methods, st.blobs, st.descs);
    return WF_CASE_OK;
}

void wf_case_unmap(void) {
    if (wf_vm_is_mapped()) wf_vm_image_begin();
}

wf_case *wf_case_new(void) {
    wf_case *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->truth = calloc(WF_CASE_MAX_TRUTH, sizeof *c->truth);
    if (c->truth == NULL) {
        free(c);
        return NULL;
    }
    return c;
}

void wf_case_free(wf_case *c) {
    if (c == NULL) return;
    free(c->truth);
    free(c);
}

const char *wf_case_status_name(int status) {
    static const char *const names[] = {"ok",
                                        "truncated",
                                        "bad-magic",
                                        "bad-version",
                                        "unknown-section",
                                        "section-order",
                                        "missing-section",
                                        "section-length",
                                        "limit",
                                        "bad-field",
                                        "bad-string",
                                        "map-failed"};
    if (status > 0 || -status >= (int)(sizeof names / sizeof names[0])) return "unknown";
    return names[-status];
}
