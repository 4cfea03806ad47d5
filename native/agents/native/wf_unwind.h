/* The libunwind target: walk real native stacks with libunwind from perturbed contexts
 * (fuzz) and from sampling signals (stress), check the walks, report what went wrong.
 *
 * Built as its own extension, walkfuzz._unwind (fuzz/core/_build.py flavour "unwind"), linked
 * with -lunwind, so the core builds where libunwind is absent.
 *
 * Fuzz input (WF_UW_INPUT_SIZE bytes; shorter inputs are zero-padded, extra bytes ignored):
 *
 *   off  size  field
 *   0    1     flags: bit0 capture with getcontext (else unw_getcontext),
 *                     bit1 init without UNW_INIT_SIGNAL_FRAME
 *   1    1     depth: 1 + byte % WF_UW_MAX_DEPTH chain functions
 *   2    16    path: chain function index per level (byte % 16), outermost first
 *   18   1     perturbations: byte % (WF_UW_MAX_PERTURB + 1); 0 = unperturbed (truth-checked)
 *   19   10*4  per perturbation: register selector, kind (wf_uw_kind), operand (u64 LE)
 */
#ifndef WF_UNWIND_H
#define WF_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "wf_guard.h"

/* cffi:begin */
#define WF_UW_INPUT_SIZE 59
#define WF_UW_MAX_PERTURB 4
#define WF_UW_MAX_FRAMES 64
#define WF_UW_MAX_EXPECTED 20
#define WF_UW_STOP_KINDS 9
#define WF_UW_INVALID_KINDS 6
#define WF_UW_KINDS 17

/* Frame ids: 0..15 chain functions, 16..23 work functions, then these; -1 unknown code. */
#define WF_UW_ID_UNKNOWN -1
#define WF_UW_ID_WORK_BASE 16
#define WF_UW_ID_BOTTOM 32
#define WF_UW_ID_ROOT 33
#define WF_UW_ID_WORKER_ROOT 34

/* Why a walk ended. Every exit of the walk loop has one; NONE is no end (the recorder's
   "go on"), so that every real stop is non-zero. */
enum wf_uw_stop {
    WF_UW_STOP_NONE = 0,       /* not ended: the unwinder goes on */
    WF_UW_STOP_ROOT = 1,       /* reached the root of the known chain: complete */
    WF_UW_STOP_END = 2,        /* the unwinder says outermost frame (unw_step returned 0) */
    WF_UW_STOP_STEP_ERROR = 3, /* a step failed (unw_step returned a negative UNW_E* code) */
    WF_UW_STOP_INIT_ERROR = 4, /* the unwinder refused the context (unw_init_local2) */
    WF_UW_STOP_CYCLE = 5,      /* a (pc, sp, fp) came back: the unwinder would loop forever */
    WF_UW_STOP_BUDGET = 6,     /* WF_UW_MAX_FRAMES frames without ending */
    WF_UW_STOP_FAULT = 7,      /* a signal inside the unwinder, caught by the guard */
    WF_UW_STOP_HANG = 8        /* the watchdog interrupted one call */
};

/* What a checked walk is, against the truth (a known chain or a shadow stack). */
enum wf_uw_invalid {
    WF_UW_VALID = 0,
    WF_UW_MISSING = 1,        /* expected frames skipped, the rest in order */
    WF_UW_EXTRA = 2,          /* frames that are not on the stack inserted */
    WF_UW_WRONG_FUNCTION = 3, /* a frame attributed to the wrong function */
    WF_UW_TRUNCATED = 4,      /* a correct prefix, then the walk ended */
    WF_UW_CYCLE_FRAMES = 5    /* the walk repeated a frame */
};

/* Outcome of one fuzz input. */
enum wf_uw_status {
    WF_UW_OK = 0,
    WF_UW_FAULT = 1,  /* crash finding */
    WF_UW_HANG = 2,   /* hang finding: watchdog or cycle */
    WF_UW_INVALID = 3 /* invalid-trace finding (unperturbed inputs only) */
};

/* How a perturbation changes its register (operand = the input's u64). */
enum wf_uw_kind {
    WF_UW_K_NONE = 0,
    WF_UW_K_ADD_SMALL = 1,
    WF_UW_K_ADD_GRID = 2,
    WF_UW_K_BITFLIP = 3,
    WF_UW_K_ZERO = 4,
    WF_UW_K_RANDOM = 5,
    WF_UW_K_NONCANONICAL = 6,
    WF_UW_K_PAGE_EDGE = 7,
    WF_UW_K_STACK_EDGE = 8,
    WF_UW_K_OTHER_STACK = 9,
    WF_UW_K_HEAP = 10,
    WF_UW_K_CODE = 11,
    WF_UW_K_TRAMPOLINE = 12,
    WF_UW_K_SWAP = 13,
    WF_UW_K_STACK_VALUE = 14,
    WF_UW_K_STACK_POINTER = 15,
    WF_UW_K_MID_FUNCTION = 16
};

typedef struct wf_uw_frame {
    uintptr_t pc, sp, fp;
    int32_t id;           /* WF_UW_ID_* or a chain/work function index */
    int32_t signal_frame; /* unw_is_signal_frame() at this frame */
} wf_uw_frame;

/* One walk and its verdict. */
typedef struct wf_uw_result {
    int32_t status;        /* wf_uw_status */
    int32_t stop;          /* wf_uw_stop */
    int32_t unw_rc;        /* last libunwind return code (0 or negative UNW_E*) */
    int32_t invalid;       /* wf_uw_invalid, for truth-checked walks */
    int32_t perturbations; /* perturbations applied (0 = truth-checked) */
    int32_t first_diff;    /* first frame differing from the truth, -1 if none */
    int32_t known_limit;   /* not judged: the chain has frames this unwinder cannot see by
                              design (wf_unwinder_needs_frame_pointers) */
    uint32_t frames;       /* frames recorded in frame[] */
    uint32_t expected_count;
    uint32_t unw_steps;       /* unw_step calls made */
    uint64_t walk_ns;         /* time of the guarded walk (init, steps, guard) */
    int32_t expected[20];     /* WF_UW_MAX_EXPECTED ids, innermost first */
    uintptr_t captured[3];    /* rip, rsp, rbp as captured */
    uintptr_t walked_from[3]; /* rip, rsp, rbp after perturbation */
    wf_uw_frame frame[64];    /* WF_UW_MAX_FRAMES */
    wf_fault fault;
} wf_uw_result;

/* Counters of a batch of fuzz inputs (added to, never reset, by wf_uw_fuzz_batch). */
typedef struct wf_uw_batch_stats {
    uint64_t inputs, unperturbed, walks, frames, unw_steps;
    uint64_t faults, hangs, invalid;
    uint64_t known_limit;      /* walks not judged: beyond the unwinder's known limit */
    uint64_t stops[9];         /* by wf_uw_stop */
    uint64_t invalid_kinds[6]; /* by wf_uw_invalid */
    uint64_t kinds_used[17];   /* perturbations applied, by wf_uw_kind */
    uint64_t walk_ns;          /* time inside guarded walks */
} wf_uw_batch_stats;

/* Run one input: build its chain, capture at the bottom, perturb, walk guarded, check.
   Returns out->status. */
int wf_uw_fuzz_one(const uint8_t *data, size_t size, wf_uw_result *out);

/* Write input number `index` of the generator stream `seed` (WF_UW_INPUT_SIZE bytes). */
void wf_uw_generate(uint64_t seed, uint64_t index, uint8_t *out);

/* Run inputs first..first+count-1 of stream `seed`; each is copied to `current` (a shared
   page the supervisor reads if the process dies) before it runs. Stops after the first input
   whose status is not WF_UW_OK, leaving its result in *finding. Returns inputs run. */
uint64_t wf_uw_fuzz_batch(uint64_t seed, uint64_t first, uint64_t count, uint8_t *current,
                          wf_uw_batch_stats *stats, wf_uw_result *finding);

/* Watchdog budget for each guarded walk (0 disables). */
void wf_uw_set_walk_budget_ns(uint64_t ns);

/* The unwinder this extension was built with: its name, its library. */
const char *wf_uw_unwinder_name(void);
const char *wf_uw_unwinder_library(void);

/* Name a pc: "libunwind.so.8+0x1a2b" or "wf_uw_chain_3+0x12" into buf. Not signal-safe. */
int wf_uw_describe_pc(uintptr_t pc, char *buf, size_t len);

/* glibc's signal-return trampoline (__restore_rt), 0 if not found. */
uintptr_t wf_uw_signal_trampoline(void);

/* The frame id of a pc (exact, no return-address adjustment). */
int wf_uw_frame_id(uintptr_t pc);

/* Address range and frame-pointer flag of a frame id; 0 if the id has none. */
int wf_uw_id_range(int id, uintptr_t *start, uintptr_t *end, int *frame_pointer);

/* Classify a walk (ids, innermost first) against the truth. *first_diff gets the first
   differing index, -1 if equal. Async-signal-safe. */
int wf_uw_classify(const int32_t *walked, uint32_t n, const int32_t *expected, uint32_t m,
                   int cycle, int32_t *first_diff);

/* ---- stress ---------------------------------------------------------------------------- */

#define WF_UW_HIST_BUCKETS 32
#define WF_UW_KEPT_INVALID 16
#define WF_UW_KEPT_IDS 24
#define WF_UW_SIGNATURE_SLOTS 32

/* Which context a sample walks from. */
enum wf_uw_sample_mode {
    WF_UW_FROM_UCONTEXT = 0,    /* unw_init_local2(handler's ucontext, UNW_INIT_SIGNAL_FRAME) */
    WF_UW_THROUGH_SIGFRAME = 1, /* unw_getcontext in the handler, step through the sigframe */
    WF_UW_ALTERNATE = 2         /* odd samples one way, even the other */
};

typedef struct wf_uw_stress_config {
    uint32_t threads;     /* workload threads, each with its own timer */
    uint64_t interval_ns; /* timer period; 0 = no sampling (baseline) */
    uint64_t duration_ns;
    uint32_t max_depth; /* deepest work call (< 64) */
    uint32_t spin;      /* loop iterations per spin */
    int32_t signo;      /* sampling signal, e.g. SIGPROF */
    int32_t mode;       /* wf_uw_sample_mode */
    uint64_t seed;
    uint64_t walk_budget_ns; /* watchdog per walk, 0 = off */
} wf_uw_stress_config;

/* One invalid sample kept for the report. */
typedef struct wf_uw_kept_sample {
    int32_t invalid, first_diff, mode, stop;
    uint32_t walked_count, shadow_count;
    int32_t walked[24]; /* WF_UW_KEPT_IDS, innermost first */
    int32_t shadow[24];
    uintptr_t pc0; /* interrupted pc */
} wf_uw_kept_sample;

/* Every invalid sample, counted by what its finding signature is made of (walkfuzz.findings:
   kind, location, the frame kind where it failed): the invalid kind and the id of the walked
   frame at the first difference (the last walked one when the walk is a prefix of the truth,
   -1 for an empty walk), with CLOCK_MONOTONIC times of the first and the last such sample. */
typedef struct wf_uw_signature_count {
    int32_t invalid, id;
    uint64_t count, first_ns, last_ns;
} wf_uw_signature_count;

typedef struct wf_uw_stress_stats {
    uint64_t requested;                  /* timer expirations due: duration / interval per thread */
    uint64_t delivered;                  /* handler entries */
    uint64_t overruns;                   /* timer_getoverrun: expirations merged into one signal */
    uint64_t walked, matched, tolerated; /* tolerated = top-frame transition window */
    uint64_t known_limit;                /* not judged: frames the unwinder cannot see by design */
    uint64_t faults, hangs;
    uint64_t invalid_kinds[6]; /* by wf_uw_invalid */
    uint64_t stops[9];         /* by wf_uw_stop */
    uint64_t frames;           /* frames walked in total */
    uint64_t work_units;       /* spin loops run by all threads (workload progress) */
    uint64_t elapsed_ns, cpu_ns;
    uint64_t interval_hist[32]; /* log2(ns) buckets of time between a thread's samples */
    uint64_t latency_hist[32];  /* log2(ns) buckets of walk time in the handler */
    uint32_t kept;
    wf_uw_kept_sample kept_samples[16];
    uint32_t signature_slots; /* used entries of signature_counts */
    uint64_t signatures_lost; /* invalid samples of a key that found no free slot */
    wf_uw_signature_count signature_counts[32]; /* WF_UW_SIGNATURE_SLOTS */
    char error[128];                            /* set when the run could not start */
} wf_uw_stress_stats;

/* Start the workload threads and their timers, run for duration (or until
   wf_uw_stress_request_stop), stop, join, sum up. Returns 0, or -1 with stats->error naming
   what failed. */
int wf_uw_stress_run(const wf_uw_stress_config *cfg, wf_uw_stress_stats *stats);
/* The running stress's counts so far, summed over its threads (racy reads of counters the
   threads keep writing), into the same-named fields of `out`; all 0 when no run goes on. Safe
   to call from another thread while wf_uw_stress_run runs. */
void wf_uw_stress_progress(wf_uw_stress_stats *out);
/* End the running (and any later) stress run's sampled time at its next look, within
   WF_UW_STOP_CHECK_NS: an interrupted stress child still returns its stats.
   Async-signal-safe. */
void wf_uw_stress_request_stop(void);
/* cffi:end */

#endif
