/* case_queue.c — section 9 of a case: decoding and encoding the queue program
 * (docs/case-format.md §7). */
#include <string.h>

#include "case_queue.h"
#include "wf_vm.h"

static wf_queue_op program[WF_QUEUE_MAX_OPS];
static uint32_t program_count;
static int program_present;

void wf_case_queue_clear(void) {
    program_count = 0;
    program_present = 0;
}

const wf_queue_op *wf_case_queue_ops(uint32_t *count) {
    *count = program_count;
    return program;
}

uint32_t wf_case_queue_op_count(void) { return program_count; }

void wf_case_queue_set(const wf_queue_op *ops, uint32_t count) {
    program_count = count <= WF_QUEUE_MAX_OPS ? count : WF_QUEUE_MAX_OPS;
    memcpy(program, ops, program_count * sizeof *ops);
    program_present = 1;
}

static int read_frame(case_reader *r, wf_queue_op *op) {
    return case_u64(r, &op->pc, "queue op pc") || case_u64(r, &op->sp, "queue op sp") ||
           case_u64(r, &op->fp, "queue op fp");
}

static int read_s32(case_reader *r, int32_t *v, const char *what) {
    uint32_t u;
    if (case_u32(r, &u, what)) return r->status;
    *v = (int32_t)u;
    return 0;
}

/* The operands of one op, by opcode. */
static int read_operands(case_reader *r, wf_queue_op *op) {
    switch (op->code) {
    case WF_QOP_REGISTER:
        return read_s32(r, &op->n, "register size") ||
               case_u32(r, &op->options, "register options");
    case WF_QOP_DEREGISTER:
    case WF_QOP_SIZE_INFO: return case_u8(r, &op->queue, "queue index");
    case WF_QOP_ENQUEUE:
        return case_u8(r, &op->queue, "queue index") || read_frame(r, op) ||
               case_u64(r, &op->arg, "enqueue arg");
    case WF_QOP_SET_ARG:
        return case_u8(r, &op->queue, "queue index") || read_s32(r, &op->n, "element index") ||
               case_u64(r, &op->arg, "element arg");
    case WF_QOP_COMPRESS: return case_u8(r, &op->queue, "queue index") || read_frame(r, op);
    case WF_QOP_RESIZE:
        return case_u8(r, &op->queue, "queue index") || read_s32(r, &op->n, "resize size");
    case WF_QOP_HANDLER:
        return case_u8(r, &op->queue, "queue index") || case_u8(r, &op->which, "handler which") ||
               case_u8(r, &op->mode, "handler mode") ||
               case_u32(r, &op->options, "handler options");
    case WF_QOP_SAFEPOINT:
        return read_frame(r, op) || case_u16(r, &op->inner_at, "safepoint inner_at") ||
               case_u16(r, &op->inner_count, "safepoint inner_count");
    case WF_QOP_THREAD_EXIT:
    case WF_QOP_FILL: return 0;
    case WF_QOP_ALIAS:
        return case_u8(r, &op->queue, "queue index") || read_s32(r, &op->n, "alias offset");
    case WF_QOP_MISUSE:
        return case_u8(r, &op->which, "misuse kind") || case_u8(r, &op->queue, "queue index");
    case WF_QOP_POKE:
        return case_u64(r, &op->pc, "poke address") || case_u64(r, &op->arg, "poke value");
    case WF_QOP_THREAD:
        return case_u8(r, &op->which, "thread state") || case_u8(r, &op->mode, "thread flags") ||
               case_u64(r, &op->sp, "thread anchor sp") ||
               case_u64(r, &op->fp, "thread anchor fp") || case_u64(r, &op->pc, "thread anchor pc");
    default:
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "queue op %u: opcode %u", program_count,
                         op->code);
    }
}

/* Domain checks beyond the bytes; inner_end: end of the enclosing inner block, 0 if none. */
static int check_op(case_reader *r, const wf_queue_op *op, uint32_t i, uint32_t count,
                    uint32_t inner_end, uint32_t *registrations) {
    const struct wf_vm_thread *t = (const struct wf_vm_thread *)(uintptr_t)WF_VM_THREAD;
    if (wf_queue_op_registers(op) && ++*registrations > WF_QUEUE_MAX_REGISTRATIONS)
        return case_fail(r, WF_CASE_ERR_LIMIT, "queue op %u: more than %d registrations", i,
                         WF_QUEUE_MAX_REGISTRATIONS);
    if (op->code == WF_QOP_ALIAS && op->n % 8 == 0) /* a multiple of 8 may be another queue */
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "queue op %u: alias offset %d, a multiple of 8",
                         i, op->n);
    if (op->code == WF_QOP_MISUSE && op->which >= WF_QUEUE_MISUSE_KINDS)
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "queue op %u: misuse kind %u", i, op->which);
    if (op->code == WF_QOP_HANDLER && (op->which > 1 || op->mode > 2))
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "queue op %u: handler which %u mode %u", i,
                         op->which, op->mode);
    if (op->code == WF_QOP_POKE && /* no pc + 8: it wraps for addresses near 2^64 */
        (op->pc % 8 != 0 || op->pc < t->stack_lo || op->pc >= t->stack_hi ||
         t->stack_hi - op->pc < 8))
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "queue op %u: poke address %#llx off the stack",
                         i, (unsigned long long)op->pc);
    if (op->code == WF_QOP_THREAD &&
        (op->which > WF_THREAD_EXITING || (op->mode & ~(WF_THREAD_SUSPENDED | WF_THREAD_CURRENT))))
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "queue op %u: thread state %u flags %#x", i,
                         op->which, op->mode);
    if (op->code == WF_QOP_SAFEPOINT && op->inner_count > 0 &&
        (inner_end != 0 || i + 1 + op->inner_count > count))
        return case_fail(r, WF_CASE_ERR_BAD_FIELD,
                         "queue op %u: safepoint inner_count %u (nested or past the end)", i,
                         op->inner_count);
    return 0;
}

int wf_case_queue_decode(case_reader *r) {
    uint32_t count, registrations = 0, inner_end = 0;
    wf_case_queue_clear();
    if (case_u32(r, &count, "queue op count")) return r->status;
    if (count > WF_QUEUE_MAX_OPS)
        return case_fail(r, WF_CASE_ERR_LIMIT, "queue op count %u > %d", count, WF_QUEUE_MAX_OPS);
    for (uint32_t i = 0; i < count; i++) {
        wf_queue_op *op = &program[i];
        memset(op, 0, sizeof *op);
        program_count = i;
        if (case_u8(r, &op->code, "queue opcode") || read_operands(r, op) ||
            check_op(r, op, i, count, inner_end, &registrations))
            return r->status;
        if (inner_end != 0 && i + 1 >= inner_end) inner_end = 0;
        if (op->code == WF_QOP_SAFEPOINT && op->inner_count > 0)
            inner_end = i + 1 + op->inner_count;
    }
    program_count = count;
    program_present = 1;
    return 0;
}

/* ---- encoding -------------------------------------------------------------------------- */

static uint8_t *put_le(uint8_t *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++) *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

static const uint8_t OPERAND_BYTES[] = {
    [WF_QOP_REGISTER] = 8,    [WF_QOP_DEREGISTER] = 1, [WF_QOP_ENQUEUE] = 33,
    [WF_QOP_SET_ARG] = 13,    [WF_QOP_COMPRESS] = 25,  [WF_QOP_RESIZE] = 5,
    [WF_QOP_SIZE_INFO] = 1,   [WF_QOP_HANDLER] = 7,    [WF_QOP_SAFEPOINT] = 28,
    [WF_QOP_THREAD_EXIT] = 0, [WF_QOP_POKE] = 16,      [WF_QOP_THREAD] = 26,
    [WF_QOP_FILL] = 0,        [WF_QOP_ALIAS] = 5,      [WF_QOP_MISUSE] = 2,
};

static size_t ops_size(const wf_queue_op *ops, uint32_t count) {
    size_t n = WF_CASE_SECTION_HEADER_SIZE + 4;
    for (uint32_t i = 0; i < count; i++) n += 1 + OPERAND_BYTES[ops[i].code];
    return n;
}

size_t wf_case_queue_encoded_size(void) {
    return program_present ? ops_size(program, program_count) : 0;
}

static uint8_t *put_frame(uint8_t *p, const wf_queue_op *op) {
    return put_le(put_le(put_le(p, op->pc, 8), op->sp, 8), op->fp, 8);
}

static uint8_t *write_op(uint8_t *p, const wf_queue_op *op) {
    p = put_le(p, op->code, 1);
    switch (op->code) {
    case WF_QOP_REGISTER: return put_le(put_le(p, (uint32_t)op->n, 4), op->options, 4);
    case WF_QOP_DEREGISTER:
    case WF_QOP_SIZE_INFO: return put_le(p, op->queue, 1);
    case WF_QOP_ENQUEUE: return put_le(put_frame(put_le(p, op->queue, 1), op), op->arg, 8);
    case WF_QOP_SET_ARG:
        return put_le(put_le(put_le(p, op->queue, 1), (uint32_t)op->n, 4), op->arg, 8);
    case WF_QOP_COMPRESS: return put_frame(put_le(p, op->queue, 1), op);
    case WF_QOP_RESIZE: return put_le(put_le(p, op->queue, 1), (uint32_t)op->n, 4);
    case WF_QOP_HANDLER:
        p = put_le(put_le(put_le(p, op->queue, 1), op->which, 1), op->mode, 1);
        return put_le(p, op->options, 4);
    case WF_QOP_SAFEPOINT:
        return put_le(put_le(put_frame(p, op), op->inner_at, 2), op->inner_count, 2);
    case WF_QOP_POKE: return put_le(put_le(p, op->pc, 8), op->arg, 8);
    case WF_QOP_ALIAS: return put_le(put_le(p, op->queue, 1), (uint32_t)op->n, 4);
    case WF_QOP_MISUSE: return put_le(put_le(p, op->which, 1), op->queue, 1);
    case WF_QOP_THREAD:
        p = put_le(put_le(p, op->which, 1), op->mode, 1);
        return put_le(put_le(put_le(p, op->sp, 8), op->fp, 8), op->pc, 8);
    default: return p; /* THREAD_EXIT, FILL: no operands */
    }
}

size_t wf_case_queue_encode(const wf_queue_op *ops, uint32_t count, uint8_t *out) {
    size_t size = ops_size(ops, count);
    if (out == NULL) return size;
    uint8_t *p = put_le(put_le(out, WF_SECTION_QUEUE, 2), 0, 2);
    p = put_le(put_le(p, size - WF_CASE_SECTION_HEADER_SIZE, 4), count, 4);
    for (uint32_t i = 0; i < count; i++) p = write_op(p, &ops[i]);
    return size;
}

void wf_case_queue_write(uint8_t *out) {
    if (program_present) wf_case_queue_encode(program, program_count, out); /* else no section 9 */
}
