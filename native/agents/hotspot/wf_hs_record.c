/* Perturbation records (layouts in wf_hs.h): decoding both versions, encoding version 2, and
 * applying one to a context. fuzz/targets/hotspot/inputs.py is the Python half; the two must agree
 * byte for byte and register for register (tests/native/test_hotspot_record_c.py).
 *
 * A base is resolved when the record is applied, not when it is made: "fp := stack_hi - 7"
 * lands just below the stack top of whichever thread is sampled, in whichever JVM.
 */
#define _GNU_SOURCE
#include <string.h>
#include <ucontext.h>

#include "wf_hs.h"
#include "wf_ucontext.h"

static uint64_t le64(const uint8_t *b) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | b[i];
    return v;
}

static void put_le64(uint8_t *b, uint64_t v) {
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
}

static void decode_v1(const uint8_t *b, wf_hs_record *rec) {
    for (int r = 0; r < WF_HS_REGS; r++) {
        rec->op[r] = b[r * 9] % WF_HS_OPS; /* as version 1 always read it */
        rec->base[r] = WF_HS_BASE_ABS;
        rec->value[r] = le64(b + r * 9 + 1);
    }
}

static int decode_v2(const uint8_t *b, wf_hs_record *rec) {
    for (int r = 0; r < WF_HS_REGS; r++) {
        const uint8_t *f = b + 1 + r * 10;
        if (f[0] >= WF_HS_OPS || f[1] >= WF_HS_BASES) return -2;
        rec->op[r] = f[0];
        rec->base[r] = f[1];
        rec->value[r] = le64(f + 2);
    }
    return WF_HS_RECORD_V2_SIZE;
}

int wf_hs_record_decode(const uint8_t *b, size_t n, wf_hs_record *rec) {
    if (n == 0) return 0;
    if (b[0] < WF_HS_RECORD_VERSION_FLAG) {
        if (n < WF_HS_RECORD_V1_SIZE) return 0;
        decode_v1(b, rec);
        return WF_HS_RECORD_V1_SIZE;
    }
    if (b[0] != WF_HS_RECORD_V2_TAG) return -1;
    if (n < WF_HS_RECORD_V2_SIZE) return 0;
    return decode_v2(b, rec);
}

int wf_hs_record_encode(const wf_hs_record *rec, uint8_t out[WF_HS_RECORD_V2_SIZE]) {
    out[0] = WF_HS_RECORD_V2_TAG;
    for (int r = 0; r < WF_HS_REGS; r++) {
        uint8_t *f = out + 1 + r * 10;
        f[0] = rec->op[r];
        f[1] = rec->base[r];
        put_le64(f + 2, rec->value[r]);
    }
    return WF_HS_RECORD_V2_SIZE;
}

int wf_hs_record_apply_regs(const wf_hs_record *rec, const wf_hs_bases *bases, uint64_t regs[3]) {
    uint64_t operand[WF_HS_REGS];
    for (int r = 0; r < WF_HS_REGS; r++) { /* resolve every base first: all or nothing */
        int base = rec->base[r] % WF_HS_BASES;
        uint64_t at = base == WF_HS_BASE_SP ? regs[WF_HS_REG_SP] : bases->at[base];
        if (rec->op[r] != WF_HS_OP_KEEP && base != WF_HS_BASE_ABS && at == 0) return 0;
        operand[r] = at + rec->value[r];
    }
    for (int r = 0; r < WF_HS_REGS; r++) {
        switch (rec->op[r]) {
        case WF_HS_OP_ADD: regs[r] += operand[r]; break;
        case WF_HS_OP_XOR: regs[r] ^= operand[r]; break;
        case WF_HS_OP_SET: regs[r] = operand[r]; break;
        default: break;
        }
    }
    return 1;
}

int wf_hs_record_apply(const wf_hs_record *rec, const wf_hs_bases *bases, ucontext_t *uc) {
    static const wf_uc_reg named[WF_HS_REGS] = {WF_UC_PC, WF_UC_SP, WF_UC_FP};
    uint64_t regs[WF_HS_REGS];
    for (int r = 0; r < WF_HS_REGS; r++) regs[r] = wf_uc_get(uc, named[r]);
    if (!wf_hs_record_apply_regs(rec, bases, regs)) return 0;
    for (int r = 0; r < WF_HS_REGS; r++) wf_uc_set(uc, named[r], regs[r]);
    return 1;
}
