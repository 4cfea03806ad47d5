/* case_reader.h — internal: a bounds-checked little-endian reader over case bytes that
 * records the first error (status, section, offset, message) and then refuses to read on. */
#ifndef WALKFUZZ_CASE_READER_H
#define WALKFUZZ_CASE_READER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wf_case.h"

typedef struct case_reader {
    const uint8_t *data;
    size_t pos;       /* next byte */
    size_t end;       /* end of the current section payload (or of the input) */
    int section;      /* current section type, 0 = header */
    int short_status; /* status when a read passes `end` */
    wf_case_error *err;
    int status; /* first error, WF_CASE_OK while none */
} case_reader;

/* Record an error (the first one wins) and return its status. */
int case_fail(case_reader *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record that `what` needs n bytes where fewer are left; returns the status. */
int case_short(case_reader *r, size_t n, const char *what);

/* Each returns 0, or a status (recorded) when the bytes run out. Inline: the decoder's hot
   path is these reads. */
#define CASE_DEFINE_READ(name, type)                                                  \
    static inline int name(case_reader *r, type *v, const char *what) {               \
        *v = 0;                                                                       \
        if (r->status != WF_CASE_OK) return r->status;                                \
        if (r->end - r->pos < sizeof(type)) return case_short(r, sizeof(type), what); \
        type raw;                                                                     \
        memcpy(&raw, r->data + r->pos, sizeof raw);                                   \
        *v = case_from_le_##type(raw);                                                \
        r->pos += sizeof raw;                                                         \
        return 0;                                                                     \
    }

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define case_from_le_uint8_t(x) (x)
#define case_from_le_uint16_t(x) (x)
#define case_from_le_uint32_t(x) (x)
#define case_from_le_uint64_t(x) (x)
#else
#define case_from_le_uint8_t(x) (x)
#define case_from_le_uint16_t(x) __builtin_bswap16(x)
#define case_from_le_uint32_t(x) __builtin_bswap32(x)
#define case_from_le_uint64_t(x) __builtin_bswap64(x)
#endif

CASE_DEFINE_READ(case_u8, uint8_t)
CASE_DEFINE_READ(case_u16, uint16_t)
CASE_DEFINE_READ(case_u32, uint32_t)
CASE_DEFINE_READ(case_u64, uint64_t)
/* A fixed-size record of n bytes: a pointer to it (and the position moves past it), or NULL
   with the status recorded. Read its fields with case_ld*. */
static inline const uint8_t *case_record(case_reader *r, size_t n, const char *what) {
    if (r->status != WF_CASE_OK) return NULL;
    if (r->end - r->pos < n) {
        case_short(r, n, what);
        return NULL;
    }
    const uint8_t *p = r->data + r->pos;
    r->pos += n;
    return p;
}
#define CASE_DEFINE_LOAD(name, type)            \
    static inline type name(const uint8_t *p) { \
        type raw;                               \
        memcpy(&raw, p, sizeof raw);            \
        return case_from_le_##type(raw);        \
    }
CASE_DEFINE_LOAD(case_ld16, uint16_t)
CASE_DEFINE_LOAD(case_ld32, uint32_t)
CASE_DEFINE_LOAD(case_ld64, uint64_t)

/* A str: u16 length (<= WF_VM_MAX_NAME) and bytes without NUL; *bytes points into data. */
int case_str(case_reader *r, const uint8_t **bytes, uint16_t *len, const char *what);

#endif /* WALKFUZZ_CASE_READER_H */
