/* wf_case.h — one synthetic case: the versioned binary format, its decoder (which maps the
 * case at the fixed addresses of wf_vm.h) and its encoder. Normative text of the format:
 * docs/case-format.md §2.
 *
 *   header   "WFCS" | u16 version=1 | u16 flags=0
 *   section  u16 type | u16 flags (bit0 OPTIONAL, bit1 RUNS) | u32 length | payload (repeated,
 *            strictly increasing type; all little-endian, unaligned)
 *     1 CLASSES  2 METHODS  3 CODE  4 THREAD  5 STACK  6 CONTEXT  7 WALK   (required)
 *     8 TRUTH (optional)  9 QUEUE operations (optional)  10 CODE_BYTES (code other than
 *     the 0xCC fill)  11 EXPECTED (optional, wf_case_expected.h)  >= 0x8000 experiments
 *
 * The VM part of a case (classes, methods, code, thread, stack) lives only in the mapped
 * memory at WF_VM_ROOT; `wf_case` holds the rest (register context, walk options, truth).
 * One case is mapped per process at a time; decoding a new one replaces it, clearing only
 * what the previous case used. Decoding never crashes on any bytes: it returns a status.
 */
#ifndef WALKFUZZ_WF_CASE_H
#define WALKFUZZ_WF_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "asgst.h"

/* cffi:begin */
#define WF_CASE_VERSION 1
#define WF_CASE_HEADER_SIZE 8
#define WF_CASE_SECTION_HEADER_SIZE 8
#define WF_CASE_SECTION_OPTIONAL 1
#define WF_CASE_SECTION_RUNS 2 /* STACK only: the payload is chunks, a run repeated (§2) */
#define WF_CASE_CHUNK_LITERAL 0
#define WF_CASE_CHUNK_REPEAT 1
#define WF_CASE_TRUTH_FRAME_SIZE 36
#define WF_CASE_MAX_TRUTH 65536
#define WF_CASE_MAX_CODE_PATCHES 1024

enum wf_case_section {
    WF_SECTION_CLASSES = 1,
    WF_SECTION_METHODS = 2,
    WF_SECTION_CODE = 3,
    WF_SECTION_THREAD = 4,
    WF_SECTION_STACK = 5,
    WF_SECTION_CONTEXT = 6,
    WF_SECTION_WALK = 7,
    WF_SECTION_TRUTH = 8,
    WF_SECTION_QUEUE = 9,
    WF_SECTION_CODE_BYTES = 10,
    WF_SECTION_EXPECTED = 11
};

enum wf_case_status {
    WF_CASE_OK = 0,
    WF_CASE_ERR_TRUNCATED = -1,       /* input ends inside the header or a section */
    WF_CASE_ERR_MAGIC = -2,           /* not "WFCS" */
    WF_CASE_ERR_VERSION = -3,         /* version other than WF_CASE_VERSION */
    WF_CASE_ERR_UNKNOWN_SECTION = -4, /* unknown type without the OPTIONAL flag */
    WF_CASE_ERR_SECTION_ORDER = -5,   /* types not strictly increasing */
    WF_CASE_ERR_MISSING_SECTION = -6, /* a required section is absent */
    WF_CASE_ERR_SECTION_LENGTH = -7,  /* payload shorter or longer than its content */
    WF_CASE_ERR_LIMIT = -8,           /* a count or size above its WF_VM_MAX_* limit */
    WF_CASE_ERR_BAD_FIELD = -9,       /* a value outside its domain */
    WF_CASE_ERR_BAD_STRING = -10,     /* a NUL byte inside a string */
    WF_CASE_ERR_MAP = -11             /* the fixed region could not be mapped */
};

enum wf_walk_entry {
    WF_ENTRY_UCONTEXT = 0,    /* ASGST_RunWithIterator(ucontext built from the context) */
    WF_ENTRY_FROM_FRAME = 1,  /* ASGST_RunWithIteratorFromFrame(sp, fp, pc) */
    WF_ENTRY_NULL_CONTEXT = 2 /* ASGST_RunWithIterator(NULL) */
};

typedef struct wf_case_error {
    int status;        /* wf_case_status */
    int section;       /* section type where it was found; 0 = header */
    uint64_t offset;   /* byte offset in the input */
    char message[160]; /* one line naming the bad value */
} wf_case_error;

typedef struct wf_case {
    uint64_t pc, sp, fp; /* register context (CONTEXT) */
    uint32_t options;    /* ASGST options (WALK) */
    uint32_t entry;      /* wf_walk_entry (WALK) */
    int has_truth;       /* 1: unmutated, truth below is authoritative */
    int32_t truth_run_result;
    int32_t truth_end_code;
    uint32_t truth_count;
    ASGST_Frame *truth;  /* WF_CASE_MAX_TRUTH entries, owned */
    uint32_t mutations;  /* mutation operators applied since generation or decoding */
    uint32_t stack_size; /* bytes of the stack image (STACK) */
    /* a run of the stack image repeated below itself (0 times: none): offset of its highest
       place from stack_lo, bytes, places; the encoder writes STACK with RUNS while the
       image still holds them (after a mutation it may not) */
    uint32_t run_offset, run_size, run_times;
} wf_case;

/* A new empty case (truth buffer allocated), or NULL. Not signal-safe. */
wf_case *wf_case_new(void);
/* Free a case from wf_case_new (NULL is fine). */
void wf_case_free(wf_case *c);
/* Decode bytes into c and map the VM part at WF_VM_ROOT. WF_CASE_OK or a wf_case_status
   (err, if not NULL, says where and what). On error nothing usable stays mapped. */
int wf_case_decode(const uint8_t *data, size_t len, wf_case *c, wf_case_error *err);
/* Encode c plus the mapped VM into out (capacity cap). Returns the encoded length, or, if
   cap is too small, minus the length needed. */
int64_t wf_case_encode(const wf_case *c, uint8_t *out, size_t cap);
/* Unmap the current case (clear what it used); the regions stay reserved. */
void wf_case_unmap(void);
/* Short name of a status ("truncated", "bad-field", ...). */
const char *wf_case_status_name(int status);
/* cffi:end */

#endif /* WALKFUZZ_WF_CASE_H */
