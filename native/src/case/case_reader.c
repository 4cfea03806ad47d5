/* case_reader.c — bounds-checked reads for the case decoder (case_reader.h). */
#include "case_reader.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wf_vm.h"

int case_fail(case_reader *r, int status, const char *fmt, ...) {
    if (r->status != WF_CASE_OK) return r->status;
    r->status = status;
    if (r->err != NULL) {
        r->err->status = status;
        r->err->section = r->section;
        r->err->offset = r->pos;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err->message, sizeof r->err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

int case_short(case_reader *r, size_t n, const char *what) {
    return case_fail(r, r->short_status, "%s: needs %zu bytes, %zu left", what, n, r->end - r->pos);
}

int case_str(case_reader *r, const uint8_t **bytes, uint16_t *len, const char *what) {
    int rc = case_u16(r, len, what);
    if (rc != 0) return rc;
    if (*len > WF_VM_MAX_NAME)
        return case_fail(r, WF_CASE_ERR_LIMIT, "%s: length %u > %d", what, *len, WF_VM_MAX_NAME);
    if (r->end - r->pos < *len) return case_short(r, *len, what);
    *bytes = r->data + r->pos;
    if (memchr(*bytes, 0, *len) != NULL)
        return case_fail(r, WF_CASE_ERR_BAD_STRING, "%s: NUL byte at index %td", what,
                         (const uint8_t *)memchr(*bytes, 0, *len) - *bytes);
    r->pos += *len;
    return 0;
}
