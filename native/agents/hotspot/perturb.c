/* Perturbation records and the strategies that make them (see wf_hs.h for the record layout).
 *
 * Every strategy yields a record relative to the interrupted thread's real registers, so a
 * finding's input says exactly what was done to the context ("sp += 0x40, pc ^= 1<<12"),
 * and a corpus of such records can be replayed against any live context.
 *
 *   grid      sp/fp += k*8 (k in -64..64), sp/fp += +-page, pc += -64..64, enumerated in turn
 *   random    set to: any 64-bit value | a canonical user address | stack sp +- 64 KiB
 *   bitflip   xor one or two bits into one or two registers
 *   heap      set sp or fp (or pc) to an address in the Java heap
 *   code      set pc (or fp) to an address in the code cache or libjvm's text
 *   stacks    take another workload thread's last sp/fp/pc (a context of the wrong thread)
 *   unwound   pc := the word at sp+8k, sp := sp+8(k+1): a plausible caller context
 *   special   0, -1, 1, non-canonical, page edges, misaligned by one, just below the
 *             thread's stack top (a read of 8 bytes there crosses the end of the mapping)
 *   corpus    a record from the corpus, as read or with its operands nudged
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#include "wf_hs.h"

#define GRID_WORDS 64            /* sp/fp offsets up to +-64 words */
#define GRID_PC_BYTES 64         /* pc offsets up to +-64 bytes */
#define NEAR_STACK_BYTES 65536   /* "random near the stack" window */
#define UNWOUND_MAX_WORDS 64     /* how far up the stack "unwound" looks for a pc */
#define CORPUS_MAX_BYTES (1u << 20)

static uint8_t *corpus;
static size_t corpus_records;

static const char *const strategy_names[WF_HS_STRATEGIES] = {
    "grid", "random", "bitflip", "heap", "code", "stacks", "unwound", "special", "corpus"};

const char *wf_hs_strategy_name(wf_hs_strategy s) {
    return (unsigned)s < WF_HS_STRATEGIES ? strategy_names[s] : "?";
}

uint64_t wf_hs_rand(wf_hs_thread *t) {
    /* xorshift64* */
    uint64_t x = t->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

int wf_hs_perturb_load_corpus(const char *path, char *err, size_t errlen) {
    if (!path || !path[0]) return 0;
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot open corpus file %s", path);
        if (fd >= 0) close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size < CORPUS_MAX_BYTES ? (size_t)st.st_size : CORPUS_MAX_BYTES;
    size -= size % WF_HS_RECORD_SIZE;
    corpus = malloc(size ? size : 1);
    ssize_t got = corpus ? read(fd, corpus, size) : -1;
    close(fd);
    if (got != (ssize_t)size) {
        snprintf(err, errlen, "cannot read corpus file %s", path);
        return -1;
    }
    corpus_records = size / WF_HS_RECORD_SIZE;
    return 0;
}

int wf_hs_perturb_has_corpus(void) { return corpus_records > 0; }

static uint64_t reg(const ucontext_t *uc, int r) {
    static const int greg[WF_HS_REGS] = {REG_RIP, REG_RSP, REG_RBP};
    return (uint64_t)uc->uc_mcontext.gregs[greg[r]];
}

static void set_op(wf_hs_record *rec, int r, uint8_t op, uint64_t value) {
    rec->op[r] = op;
    rec->value[r] = value;
}

static void grid(wf_hs_thread *t, wf_hs_record *rec) {
    uint64_t x = wf_hs_rand(t);
    int which = (int)(x % 5);
    int64_t words = (int64_t)((x >> 8) % (2 * GRID_WORDS + 1)) - GRID_WORDS;
    int64_t pcoff = (int64_t)((x >> 24) % (2 * GRID_PC_BYTES + 1)) - GRID_PC_BYTES;
    int64_t page = ((x >> 40) & 1) ? 4096 : -4096;
    switch (which) {
    case 0: set_op(rec, WF_HS_REG_SP, WF_HS_OP_ADD, (uint64_t)(words * 8)); break;
    case 1: set_op(rec, WF_HS_REG_FP, WF_HS_OP_ADD, (uint64_t)(words * 8)); break;
    case 2: set_op(rec, WF_HS_REG_PC, WF_HS_OP_ADD, (uint64_t)pcoff); break;
    case 3:
        set_op(rec, WF_HS_REG_SP, WF_HS_OP_ADD, (uint64_t)(words * 8));
        set_op(rec, WF_HS_REG_FP, WF_HS_OP_ADD, (uint64_t)(words * 8));
        break;
    default: set_op(rec, (x >> 41) & 1 ? WF_HS_REG_SP : WF_HS_REG_FP, WF_HS_OP_ADD, (uint64_t)page);
    }
}

static void random_values(wf_hs_thread *t, const ucontext_t *uc, wf_hs_record *rec) {
    uint64_t x = wf_hs_rand(t);
    int r = (int)(x % WF_HS_REGS);
    uint64_t v = wf_hs_rand(t);
    switch ((x >> 8) % 3) {
    case 0: break;
    case 1: v &= 0x00007ffffffffff8ull; break;
    default:
        v = reg(uc, WF_HS_REG_SP) + (v % (2 * NEAR_STACK_BYTES)) - NEAR_STACK_BYTES;
    }
    set_op(rec, r, WF_HS_OP_SET, v);
}

static void bitflip(wf_hs_thread *t, wf_hs_record *rec) {
    uint64_t x = wf_hs_rand(t);
    int r1 = (int)(x % WF_HS_REGS);
    set_op(rec, r1, WF_HS_OP_XOR, 1ull << ((x >> 8) & 63));
    if ((x >> 16) & 1) rec->value[r1] |= 1ull << ((x >> 20) & 63);
    if ((x >> 17) & 1) {
        int r2 = (r1 + 1 + (int)((x >> 30) & 1)) % WF_HS_REGS;
        set_op(rec, r2, WF_HS_OP_XOR, 1ull << ((x >> 36) & 63));
    }
}

static int region_pointer(wf_hs_thread *t, wf_hs_region_kind kind, int r, wf_hs_record *rec) {
    uint64_t x = wf_hs_rand(t);
    uintptr_t p = wf_hs_regions_pick(kind, x);
    if (!p) return 0;
    if (r == WF_HS_REG_PC) p += (x >> 56) & 7;
    set_op(rec, r, WF_HS_OP_SET, p);
    return 1;
}

static int other_stack(wf_hs_thread *t, wf_hs_record *rec) {
    int n = wf_hs_thread_count();
    if (n < 2) return 0;
    uint64_t x = wf_hs_rand(t);
    wf_hs_thread *o = &wf_hs_threads[x % (uint64_t)n];
    if (o == t || !o->live || !o->last_sp) return 0;
    set_op(rec, WF_HS_REG_SP, WF_HS_OP_SET, o->last_sp + ((x >> 16) % 16) * 8);
    if ((x >> 8) & 1) set_op(rec, WF_HS_REG_FP, WF_HS_OP_SET, o->last_fp);
    if ((x >> 9) & 1) set_op(rec, WF_HS_REG_PC, WF_HS_OP_SET, o->last_pc);
    return 1;
}

/* Reads the thread's own stack between sp and its top: mapped memory of the running thread. */
static int unwound(wf_hs_thread *t, const ucontext_t *uc, wf_hs_record *rec) {
    uint64_t sp = reg(uc, WF_HS_REG_SP);
    uint64_t k = wf_hs_rand(t) % UNWOUND_MAX_WORDS;
    if ((sp & 7) || sp < t->stack_lo || sp + 8 * (k + 2) > t->stack_hi) return 0;
    uint64_t word = *(const uint64_t *)(uintptr_t)(sp + 8 * k);
    set_op(rec, WF_HS_REG_PC, WF_HS_OP_SET, word);
    set_op(rec, WF_HS_REG_SP, WF_HS_OP_ADD, 8 * (k + 1));
    return 1;
}

static void special(wf_hs_thread *t, wf_hs_record *rec) {
    static const uint64_t values[] = {0, ~0ull, 1, 8, 0x8000000000000000ull,
                                      0x0000800000000000ull, 0x00007ffffffff000ull, 0xfff,
                                      0x1000};
    uint64_t x = wf_hs_rand(t);
    int r = (int)(x % WF_HS_REGS);
    switch ((x >> 8) % 4) {
    case 0: set_op(rec, r, WF_HS_OP_ADD, 1); return;  /* misaligned by one */
    case 1:
        if (t->stack_hi) {
            set_op(rec, (x >> 12) & 1 ? WF_HS_REG_FP : WF_HS_REG_SP, WF_HS_OP_SET,
                   t->stack_hi - 1 - ((x >> 13) % 32));
            return;
        }
        break;
    default: break;
    }
    set_op(rec, r, WF_HS_OP_SET, values[(x >> 16) % (sizeof values / sizeof values[0])]);
}

static int from_corpus(wf_hs_thread *t, wf_hs_record *rec) {
    if (!corpus_records) return 0;
    uint64_t x = wf_hs_rand(t);
    const uint8_t *b = corpus + (x % corpus_records) * WF_HS_RECORD_SIZE;
    for (int r = 0; r < WF_HS_REGS; r++) {
        const uint8_t *f = b + r * 9;
        rec->op[r] = f[0] % WF_HS_OPS;
        uint64_t v = 0;
        for (int i = 7; i >= 0; i--) v = (v << 8) | f[1 + i];
        rec->value[r] = v;
    }
    if ((x >> 32) & 1) {  /* nudge one operand by a few words */
        int r = (int)((x >> 33) % WF_HS_REGS);
        rec->value[r] += (uint64_t)(((int64_t)((x >> 40) % 17) - 8) * 8);
    }
    return 1;
}

static wf_hs_strategy pick_strategy(wf_hs_thread *t) {
    uint32_t mask = wf_hs_cfg.strategies;
    if (!corpus_records) mask &= ~(1u << WF_HS_STRAT_CORPUS);
    if (!mask) return WF_HS_STRAT_GRID;
    for (;;) {
        wf_hs_strategy s = (wf_hs_strategy)(wf_hs_rand(t) % WF_HS_STRATEGIES);
        if (mask & (1u << s)) return s;
    }
}

wf_hs_strategy wf_hs_perturb_next(wf_hs_thread *t, const ucontext_t *uc, wf_hs_record *rec) {
    memset(rec, 0, sizeof *rec);
    wf_hs_strategy s = pick_strategy(t);
    int ok = 1;
    switch (s) {
    case WF_HS_STRAT_GRID: grid(t, rec); break;
    case WF_HS_STRAT_RANDOM: random_values(t, uc, rec); break;
    case WF_HS_STRAT_BITFLIP: bitflip(t, rec); break;
    case WF_HS_STRAT_HEAP:
        ok = region_pointer(t, WF_HS_REGION_HEAP, (wf_hs_rand(t) & 1) ? WF_HS_REG_SP : WF_HS_REG_FP, rec);
        break;
    case WF_HS_STRAT_CODE:
        ok = region_pointer(t, (wf_hs_rand(t) & 1) ? WF_HS_REGION_CODE : WF_HS_REGION_LIBJVM,
                            (wf_hs_rand(t) % 4) ? WF_HS_REG_PC : WF_HS_REG_FP, rec);
        break;
    case WF_HS_STRAT_STACKS: ok = other_stack(t, rec); break;
    case WF_HS_STRAT_UNWOUND: ok = unwound(t, uc, rec); break;
    case WF_HS_STRAT_SPECIAL: special(t, rec); break;
    case WF_HS_STRAT_CORPUS: ok = from_corpus(t, rec); break;
    case WF_HS_STRATEGIES: break;
    }
    if (!ok) {  /* the strategy had nothing to offer (no heap yet, one thread): fall back */
        memset(rec, 0, sizeof *rec);
        grid(t, rec);
        s = WF_HS_STRAT_GRID;
    }
    return s;
}

void wf_hs_perturb_apply(const wf_hs_record *rec, ucontext_t *uc) {
    static const int greg[WF_HS_REGS] = {REG_RIP, REG_RSP, REG_RBP};
    for (int r = 0; r < WF_HS_REGS; r++) {
        greg_t *g = &uc->uc_mcontext.gregs[greg[r]];
        uint64_t v = (uint64_t)*g;
        switch (rec->op[r]) {
        case WF_HS_OP_ADD: v += rec->value[r]; break;
        case WF_HS_OP_XOR: v ^= rec->value[r]; break;
        case WF_HS_OP_SET: v = rec->value[r]; break;
        default: break;
        }
        *g = (greg_t)v;
    }
}

void wf_hs_record_encode(const wf_hs_record *rec, uint8_t out[WF_HS_RECORD_SIZE]) {
    for (int r = 0; r < WF_HS_REGS; r++) {
        out[r * 9] = rec->op[r];
        for (int i = 0; i < 8; i++) out[r * 9 + 1 + i] = (uint8_t)(rec->value[r] >> (8 * i));
    }
}
