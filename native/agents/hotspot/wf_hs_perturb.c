/* The strategies that make perturbation records (wf_hs_record.c has the record), the corpus of
 * records, and the bases of a sampled context.
 *
 * Every strategy yields a record relative to the interrupted thread's real context, so a
 * finding's input says exactly what was done to it ("sp += 0x40, pc ^= 1<<12", "fp :=
 * stack_hi - 7"), and a corpus of such records replays against any live context of any run:
 * a value that came from an address of this JVM (the stack top, the interrupted sp, the code
 * cache, libjvm, the heap, another thread's stack) is stored relative to that base, and only
 * layout-free values (0, -1, non-canonical, random garbage) stay absolute.
 *
 *   grid      sp/fp += k*8 (k in -64..64), sp/fp += +-page, pc += -64..64, enumerated in turn
 *   random    set to: any 64-bit value | a canonical user address (abs) | sp +- 64 KiB (sp)
 *   bitflip   xor one or two bits into one or two registers
 *   heap      set sp or fp to an address in the Java heap (heap)
 *   code      set pc (or fp) to an address in the code cache (code) or libjvm's text (libjvm)
 *   stacks    another workload thread's last sp/fp (other_stack_hi) and pc (code)
 *   unwound   pc := the word at sp+8k (base by where the word points), sp += 8(k+1)
 *   special   0, -1, 1, non-canonical, page edges (abs), misaligned by one (add), just below
 *             the thread's stack top (stack_hi - 1..32: an 8-byte read there crosses the end
 *             of the mapping)
 *   corpus    a record from the corpus, as read or with its value nudged by a few words (as
 *             read only when corpus is the one strategy enabled: that is a replay)
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
#include "wf_ucontext.h"

#define GRID_WORDS 64          /* sp/fp offsets up to +-64 words */
#define GRID_PC_BYTES 64       /* pc offsets up to +-64 bytes */
#define NEAR_STACK_BYTES 65536 /* "random near the stack" window */
#define UNWOUND_MAX_WORDS 64   /* how far up the stack "unwound" looks for a pc */
#define CORPUS_MAX_BYTES (1u << 20)

static wf_hs_record *corpus;
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

static int read_file(const char *path, uint8_t **data, size_t *size, char *err, size_t errlen) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot open corpus file %s", path);
        if (fd >= 0) close(fd);
        return -1;
    }
    *size = (size_t)st.st_size < CORPUS_MAX_BYTES ? (size_t)st.st_size : CORPUS_MAX_BYTES;
    *data = malloc(*size ? *size : 1);
    ssize_t got = *data ? read(fd, *data, *size) : -1;
    close(fd);
    if (got != (ssize_t)*size) {
        snprintf(err, errlen, "cannot read corpus file %s", path);
        return -1;
    }
    return 0;
}

/* Records of either version, one after another; a cut-off tail is ignored. */
int wf_hs_perturb_load_corpus(const char *path, char *err, size_t errlen) {
    if (!path || !path[0]) return 0;
    uint8_t *data = NULL;
    size_t size = 0;
    if (read_file(path, &data, &size, err, errlen)) return -1;
    corpus = malloc((size / WF_HS_RECORD_V1_SIZE + 1) * sizeof *corpus); /* v1 is smallest */
    if (!corpus) {
        snprintf(err, errlen, "corpus file %s: no memory for %zu bytes of records", path, size);
        free(data);
        return -1;
    }
    for (size_t at = 0; at < size;) {
        int used = wf_hs_record_decode(data + at, size - at, &corpus[corpus_records]);
        if (used == 0) break;
        if (used < 0) {
            snprintf(err, errlen, "corpus file %s: %s at byte %zu", path,
                     used == -1 ? "unknown perturbation record version" : "op or base out of range",
                     at);
            free(data);
            return -1;
        }
        corpus_records++;
        at += (size_t)used;
    }
    free(data);
    return 0;
}

int wf_hs_perturb_has_corpus(void) { return corpus_records > 0; }

static uint64_t reg(const ucontext_t *uc, int r) {
    static const wf_uc_reg named[WF_HS_REGS] = {WF_UC_PC, WF_UC_SP, WF_UC_FP};
    return wf_uc_get(uc, named[r]);
}

static void set_op(wf_hs_record *rec, int r, uint8_t op, uint64_t value) {
    rec->op[r] = op;
    rec->base[r] = WF_HS_BASE_ABS;
    rec->value[r] = value;
}

/* reg := bases[base] + offset: the record keeps the offset and names the base. */
static void set_from(wf_hs_record *rec, int r, wf_hs_base base, uint64_t offset) {
    rec->op[r] = WF_HS_OP_SET;
    rec->base[r] = (uint8_t)base;
    rec->value[r] = offset;
}

static int in_range(uint64_t v, uint64_t lo, uint64_t hi) { return lo && v >= lo && v <= hi; }

/* The next live workload thread after t in slot order (wrapping), or NULL: the thread the
 * other_stack_hi base names, in this run and in a replay. */
static const wf_hs_thread *next_thread(const wf_hs_thread *t) {
    int n = wf_hs_thread_count();
    for (int k = 1; k < n; k++) {
        const wf_hs_thread *o = &wf_hs_threads[(t->index + k) % n];
        if (o != t && __atomic_load_n(&o->live, __ATOMIC_ACQUIRE) && o->stack_hi) return o;
    }
    return NULL;
}

void wf_hs_perturb_bases(const wf_hs_thread *t, const ucontext_t *uc, wf_hs_bases *b) {
    const wf_hs_thread *o = next_thread(t);
    memset(b, 0, sizeof *b);
    b->at[WF_HS_BASE_STACK_HI] = t->stack_hi;
    b->at[WF_HS_BASE_STACK_LO] = t->stack_lo;
    b->at[WF_HS_BASE_SP] = reg(uc, WF_HS_REG_SP);
    b->at[WF_HS_BASE_CODE] = wf_hs_regions_start(WF_HS_REGION_CODE);
    b->at[WF_HS_BASE_LIBJVM] = wf_hs_libjvm_base();
    b->at[WF_HS_BASE_HEAP] = wf_hs_regions_start(WF_HS_REGION_HEAP);
    b->at[WF_HS_BASE_OTHER_STACK_HI] = o ? o->stack_hi : 0;
}

/* reg := v, relative to the base v came from: a stack (own or the next thread's, from its
 * top, since frames sit at fixed depths below it), the code cache, libjvm, the heap; else abs.
 * `other` bounds the next thread's stack (NULL: none). */
static void set_address(wf_hs_record *rec, int r, uint64_t v, const wf_hs_bases *b,
                        const wf_hs_thread *self, const wf_hs_thread *other) {
    if (in_range(v, self->stack_lo, self->stack_hi))
        set_from(rec, r, WF_HS_BASE_STACK_HI, v - b->at[WF_HS_BASE_STACK_HI]);
    else if (other && in_range(v, other->stack_lo, other->stack_hi))
        set_from(rec, r, WF_HS_BASE_OTHER_STACK_HI, v - b->at[WF_HS_BASE_OTHER_STACK_HI]);
    else if (b->at[WF_HS_BASE_CODE] && wf_hs_regions_contains(WF_HS_REGION_CODE, v))
        set_from(rec, r, WF_HS_BASE_CODE, v - b->at[WF_HS_BASE_CODE]);
    else if (b->at[WF_HS_BASE_LIBJVM] && wf_hs_regions_contains(WF_HS_REGION_LIBJVM, v))
        set_from(rec, r, WF_HS_BASE_LIBJVM, v - b->at[WF_HS_BASE_LIBJVM]);
    else if (b->at[WF_HS_BASE_HEAP] && wf_hs_regions_contains(WF_HS_REGION_HEAP, v))
        set_from(rec, r, WF_HS_BASE_HEAP, v - b->at[WF_HS_BASE_HEAP]);
    else set_op(rec, r, WF_HS_OP_SET, v);
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

static void random_values(wf_hs_thread *t, wf_hs_record *rec) {
    uint64_t x = wf_hs_rand(t);
    int r = (int)(x % WF_HS_REGS);
    uint64_t v = wf_hs_rand(t);
    switch ((x >> 8) % 3) {
    case 0: set_op(rec, r, WF_HS_OP_SET, v); break;
    case 1: set_op(rec, r, WF_HS_OP_SET, v & 0x00007ffffffffff8ull); break;
    default: set_from(rec, r, WF_HS_BASE_SP, (v % (2 * NEAR_STACK_BYTES)) - NEAR_STACK_BYTES);
    }
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

static int region_pointer(wf_hs_thread *t, wf_hs_region_kind kind, int r, const wf_hs_bases *b,
                          wf_hs_record *rec) {
    static const wf_hs_base base_of[WF_HS_REGION_KINDS] = {[WF_HS_REGION_CODE] = WF_HS_BASE_CODE,
                                                           [WF_HS_REGION_HEAP] = WF_HS_BASE_HEAP,
                                                           [WF_HS_REGION_LIBJVM] =
                                                               WF_HS_BASE_LIBJVM};
    uint64_t x = wf_hs_rand(t);
    uintptr_t p = wf_hs_regions_pick(kind, x);
    uint64_t base = b->at[base_of[kind]];
    if (!p || !base) return 0;
    if (r == WF_HS_REG_PC) p += (x >> 56) & 7;
    set_from(rec, r, base_of[kind], p - base);
    return 1;
}

/* The next thread's last context (its sp a few words deeper), stored relative to its stack
 * top: the same depth in the same thread's stack in any run. */
static int other_stack(wf_hs_thread *t, const wf_hs_bases *b, wf_hs_record *rec) {
    const wf_hs_thread *o = next_thread(t);
    uint64_t sp = o ? o->last_sp : 0, fp = o ? o->last_fp : 0, pc = o ? o->last_pc : 0;
    if (!sp || !in_range(sp, o->stack_lo, o->stack_hi) || !b->at[WF_HS_BASE_OTHER_STACK_HI])
        return 0;
    uint64_t x = wf_hs_rand(t);
    set_address(rec, WF_HS_REG_SP, sp + ((x >> 16) % 16) * 8, b, t, o);
    if ((x >> 8) & 1) set_address(rec, WF_HS_REG_FP, fp, b, t, o);
    if ((x >> 9) & 1) set_address(rec, WF_HS_REG_PC, pc, b, t, o);
    return 1;
}

/* Reads the thread's own stack between sp and its top: mapped memory of the running thread. */
static int unwound(wf_hs_thread *t, const ucontext_t *uc, const wf_hs_bases *b, wf_hs_record *rec) {
    uint64_t sp = reg(uc, WF_HS_REG_SP);
    uint64_t k = wf_hs_rand(t) % UNWOUND_MAX_WORDS;
    if ((sp & 7) || sp < t->stack_lo || sp + 8 * (k + 2) > t->stack_hi) return 0;
    uint64_t word = *(const uint64_t *)(uintptr_t)(sp + 8 * k);
    set_address(rec, WF_HS_REG_PC, word, b, t, next_thread(t));
    set_op(rec, WF_HS_REG_SP, WF_HS_OP_ADD, 8 * (k + 1));
    return 1;
}

static void special(wf_hs_thread *t, wf_hs_record *rec) {
    static const uint64_t values[] = {
        0,     ~0ull, 1, 8, 0x8000000000000000ull, 0x0000800000000000ull, 0x00007ffffffff000ull,
        0xfff, 0x1000};
    uint64_t x = wf_hs_rand(t);
    int r = (int)(x % WF_HS_REGS);
    switch ((x >> 8) % 4) {
    case 0: set_op(rec, r, WF_HS_OP_ADD, 1); return; /* misaligned by one */
    case 1:
        if (t->stack_hi) {
            set_from(rec, (x >> 12) & 1 ? WF_HS_REG_FP : WF_HS_REG_SP, WF_HS_BASE_STACK_HI,
                     -(1 + (x >> 13) % 32));
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
    *rec = corpus[x % corpus_records];
    int replay = wf_hs_cfg.strategies == 1u << WF_HS_STRAT_CORPUS;
    if (!replay && (x >> 32) & 1) { /* nudge one value by a few words */
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

wf_hs_strategy wf_hs_perturb_next(wf_hs_thread *t, const ucontext_t *uc, const wf_hs_bases *b,
                                  wf_hs_record *rec) {
    memset(rec, 0, sizeof *rec);
    wf_hs_strategy s = pick_strategy(t);
    int ok = 1;
    switch (s) {
    case WF_HS_STRAT_GRID: grid(t, rec); break;
    case WF_HS_STRAT_RANDOM: random_values(t, rec); break;
    case WF_HS_STRAT_BITFLIP: bitflip(t, rec); break;
    case WF_HS_STRAT_HEAP:
        ok = region_pointer(t, WF_HS_REGION_HEAP, (wf_hs_rand(t) & 1) ? WF_HS_REG_SP : WF_HS_REG_FP,
                            b, rec);
        break;
    case WF_HS_STRAT_CODE:
        ok = region_pointer(t, (wf_hs_rand(t) & 1) ? WF_HS_REGION_CODE : WF_HS_REGION_LIBJVM,
                            (wf_hs_rand(t) % 4) ? WF_HS_REG_PC : WF_HS_REG_FP, b, rec);
        break;
    case WF_HS_STRAT_STACKS: ok = other_stack(t, b, rec); break;
    case WF_HS_STRAT_UNWOUND: ok = unwound(t, uc, b, rec); break;
    case WF_HS_STRAT_SPECIAL: special(t, rec); break;
    case WF_HS_STRAT_CORPUS: ok = from_corpus(t, rec); break;
    case WF_HS_STRATEGIES: break;
    }
    if (!ok) { /* the strategy had nothing to offer (no heap yet, one thread): fall back */
        memset(rec, 0, sizeof *rec);
        grid(t, rec);
        s = WF_HS_STRAT_GRID;
    }
    return s;
}
