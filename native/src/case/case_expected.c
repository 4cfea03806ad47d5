/* case_expected.c — section 11 of a case, EXPECTED (wf_case_expected.h): decoding, encoding. */
#include <string.h>

#include "asgst.h"
#include "case_expected.h"
#include "wf_vm.h"

#define MAX_WINDOW 4 /* wf_live_window_kind: none, call, prologue, epilogue, bci */
#define MAX_MODE 3   /* WF_LIVE_MODE_QUEUE */
#define HEADER_BYTES 12

static wf_case_expected decoded;
static int present;

void wf_case_expected_clear(void) { present = 0; }

const wf_case_expected *wf_case_expected_get(void) { return present ? &decoded : NULL; }

static int decode_frame(case_reader *r, uint32_t i, uint32_t methods) {
    const uint8_t *rec = case_record(r, WF_CASE_EXPECTED_FRAME_SIZE, "expected frame");
    if (rec == NULL) return r->status;
    uint32_t method = case_ld32(rec);
    int32_t bci = (int32_t)case_ld32(rec + 4);
    uint8_t type = rec[8];
    int8_t level = (int8_t)rec[9];
    uint16_t reserved = case_ld16(rec + 10);
    if (method >= methods)
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "expected frame %u: method %u >= %u methods", i,
                         method, methods);
    if (type < ASGST_FRAME_JAVA || type > ASGST_FRAME_JAVA_NATIVE)
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "expected frame %u: type %u", i, type);
    uint32_t code_size = ((const struct wf_vm_method *)wf_vm_method_handle(method))->code_size;
    if (bci < -1 || (bci >= 0 && (uint32_t)bci >= code_size))
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "expected frame %u: bci %d outside -1..%u", i,
                         bci, code_size - 1);
    if (level < -1 || level > 4)
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "expected frame %u: comp level %d", i, level);
    if (reserved != 0)
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "expected frame %u: reserved %u", i, reserved);
    decoded.frames[i] = (wf_expected_frame){
        .method = (int32_t)method, .bci = bci, .type = (int8_t)type, .level = level};
    return 0;
}

int wf_case_expected_decode(case_reader *r, uint32_t methods, uint32_t queue_ops) {
    uint8_t mode, source, window, reserved;
    uint32_t end, count;
    wf_case_expected_clear();
    if (case_u8(r, &mode, "expected mode") || case_u8(r, &source, "expected source") ||
        case_u8(r, &window, "expected window") || case_u8(r, &reserved, "expected reserved") ||
        case_u32(r, &end, "expected end code") || case_u32(r, &count, "expected count"))
        return r->status;
    if (mode < 1 || mode > MAX_MODE)
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "expected mode %u", mode);
    if (source < WF_EXPECTED_WALK || source > WF_EXPECTED_ELEMENT)
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "expected source %u", source);
    if (window > MAX_WINDOW)
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "expected window %u", window);
    if (reserved != 0) return case_fail(r, WF_CASE_ERR_BAD_FIELD, "expected reserved %u", reserved);
    if ((int32_t)end > 0)
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "expected end code %d", (int32_t)end);
    if (source != WF_EXPECTED_WALK && queue_ops == 0)
        return case_fail(r, WF_CASE_ERR_BAD_FIELD, "expected source %u without a queue program",
                         source);
    if (count > WF_CASE_MAX_EXPECTED)
        return case_fail(r, WF_CASE_ERR_LIMIT, "expected count %u > %d", count,
                         WF_CASE_MAX_EXPECTED);
    for (uint32_t i = 0; i < count; i++)
        if (decode_frame(r, i, methods)) return r->status;
    decoded.mode = mode;
    decoded.source = source;
    decoded.window = window;
    decoded.end_code = (int32_t)end;
    decoded.count = count;
    present = 1;
    return 0;
}

static uint8_t *put_le(uint8_t *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++) *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

size_t wf_case_expected_encoded_size(const wf_case_expected *e) {
    return WF_CASE_SECTION_HEADER_SIZE + HEADER_BYTES +
           (size_t)e->count * WF_CASE_EXPECTED_FRAME_SIZE;
}

void wf_case_expected_write(const wf_case_expected *e, uint8_t *out) {
    size_t payload = wf_case_expected_encoded_size(e) - WF_CASE_SECTION_HEADER_SIZE;
    uint8_t *p = put_le(put_le(out, WF_SECTION_EXPECTED, 2), WF_CASE_SECTION_OPTIONAL, 2);
    p = put_le(p, payload, 4);
    p = put_le(put_le(put_le(put_le(p, e->mode, 1), e->source, 1), e->window, 1), 0, 1);
    p = put_le(put_le(p, (uint32_t)e->end_code, 4), e->count, 4);
    for (uint32_t i = 0; i < e->count; i++) {
        const wf_expected_frame *f = &e->frames[i];
        p = put_le(put_le(p, (uint32_t)f->method, 4), (uint32_t)f->bci, 4);
        p = put_le(put_le(put_le(p, (uint8_t)f->type, 1), (uint8_t)f->level, 1), 0, 2);
    }
}
