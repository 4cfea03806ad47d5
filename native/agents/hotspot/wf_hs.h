/* walkfuzz HotSpot agent: shared declarations of the JVMTI agent that fuzzes and stresses
 * AsyncGetCallTrace (ASGCT) inside a running JVM.
 *
 * One concept per file, wf_hs_<name>.c:
 *   agent    Agent_OnLoad, options, JVMTI callbacks
 *   state    the run configuration and the thread table, which every other file reads
 *   asgct    resolving ASGCT and JVM_handle_linux_signal; guarded and unguarded calls
 *   methods  jmethodID table: preloaded ids -> shadow id and bytecode length
 *   regions  address regions from /proc/self/maps: code cache, Java heap, libjvm text
 *   record   perturbation records: the byte codec (versions 1 and 2) and applying one
 *   perturb  the strategies that make records, the corpus, the bases of a sampled context
 *   fuzz     fuzz-mode signal handler: perturbed ASGCT calls on threads running Java
 *   stress   stress-mode signal handler: real-context ASGCT, shadow-stack oracle
 *   check    checker agent thread: held-thread and bottom-of-stack GetStackTrace oracle
 *   timers   per-thread POSIX timers (SIGEV_THREAD_ID)
 *   output   fault/invalid-sample rings, reporter thread, JSON-lines output, flight file
 *   natives  JNI natives the generated workloads call (shadow registration, hold, callback)
 *
 * Everything a signal handler touches is preallocated; handlers do not malloc, lock or print.
 */
#ifndef WF_HS_H
#define WF_HS_H

#include <jni.h>
#include <jvmti.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "wf_guard.h"

/* ---- AsyncGetCallTrace's ABI (not in any JDK header; from HotSpot's forte.cpp) ---------- */
typedef struct {
    jint lineno; /* bci for Java frames, -3 for native methods */
    jmethodID method_id;
} wf_asgct_frame;

typedef struct {
    JNIEnv *env_id;
    jint num_frames; /* > 0 frames written; <= 0 one of the ticks_* codes below */
    wf_asgct_frame *frames;
} wf_asgct_trace;

typedef void (*wf_asgct_fn)(wf_asgct_trace *trace, jint depth, void *ucontext);
typedef int (*wf_jvm_signal_fn)(int sig, siginfo_t *info, void *uc, int abort_if_unrecognized);

/* ASGCT result codes, 0 and below (forte.cpp). Histogram index = code + WF_HS_CODE_BIAS. */
#define WF_HS_CODE_MIN (-15)
#define WF_HS_CODE_BIAS 15
#define WF_HS_CODE_SLOTS 17 /* codes -15..0, plus slot 16 = "frames returned" */
#define WF_HS_CODE_OK_SLOT 16

/* ---- limits (named so every bound in the agent says why it is what it is) --------------- */
#define WF_HS_MAX_THREADS 256    /* workload threads tracked at once */
#define WF_HS_MAX_DEPTH 2048     /* ASGCT/GetStackTrace depth; workloads recurse < 1000 */
#define WF_HS_SHADOW_CAP 4096    /* ints in a shadow buffer: [0] depth, [1..] ids, bottom first */
#define WF_HS_NO_RUNNING (-1000) /* running_num of a thread with no running sample kept */
#define WF_HS_HIST_BUCKETS 24    /* log2 microsecond buckets: [2^(i-1), 2^i) us */
#define WF_HS_METHOD_MEMO                                                 \
    128 /* per-thread memo of method lookups (a power of two): a sample's \
           frames repeat a few dozen methods, the table is 4 MiB */

/* ---- run configuration (from the -agentpath options string) ---------------------------- */
typedef enum { WF_HS_MODE_FUZZ = 0, WF_HS_MODE_STRESS = 1, WF_HS_MODE_CONTROL = 2 } wf_hs_mode;

typedef struct {
    wf_hs_mode mode;
    char out_path[512];     /* JSON-lines output */
    char methods_path[512]; /* shadow manifest: "Lclass; name sig id" per line */
    char corpus_path[512];  /* concatenated perturbation records, may be empty */
    char flight_path[512];  /* control mode: last record per thread, survives a crash */
    char thread_prefix[32]; /* only threads whose name starts with this are targets */
    uint64_t interval_ns;   /* per-thread timer interval */
    uint32_t batch;         /* perturbed calls per signal (fuzz, control) */
    uint32_t depth;         /* frames asked of ASGCT in fuzz mode (stress: WF_HS_MAX_DEPTH) */
    uint32_t duty_percent;  /* a fuzz batch stops after this share of the interval */
    uint32_t strategies;    /* bit mask of wf_hs_strategy */
    uint64_t seed;
    uint64_t budget_ns;      /* per-call watchdog of the guard, 0 = off */
    uint32_t check_every_ms; /* checker thread period; 0 = no GetStackTrace oracle */
    uint32_t walk;           /* stress: 0 = the handler only counts the signal (the cost of
                                delivery alone, the benchmark's limit row); 1 = sample */
    uint32_t tick_ms;        /* heartbeat period of the reporter thread */
} wf_hs_config;

extern wf_hs_config wf_hs_cfg;
extern jvmtiEnv *wf_hs_jvmti;
extern JavaVM *wf_hs_vm;

/* ---- per-thread state ------------------------------------------------------------------ */
/* A method lookup remembered by one thread, direct-mapped by the id's address bits; only found
 * methods are kept (the table is insert-only, so a found info never changes). */
typedef struct wf_hs_method_info wf_hs_method_info;
typedef struct {
    jmethodID id;
    const wf_hs_method_info *info;
} wf_hs_method_memo;

typedef enum {
    WF_HS_PEEK_IDLE = 0,      /* no oracle request */
    WF_HS_PEEK_REQUESTED = 1, /* checker asked: next SIGPROF copies its trace into peek_* */
    WF_HS_PEEK_SAMPLED = 2,   /* handler filled peek_*; checker compares, then back to idle */
    WF_HS_PEEK_WRITING = 3,   /* handler is filling peek_* */
} wf_hs_peek_state;

typedef struct wf_hs_thread {
    volatile int live; /* slot in use */
    int index;
    pid_t tid;
    JNIEnv *env;
    jthread ref; /* global ref, for GetStackTrace */
    uintptr_t stack_lo, stack_hi;
    volatile uintptr_t last_sp, last_fp, last_pc; /* seen by other threads' "stack" strategy */
    volatile int32_t *shadow; /* direct buffer registered by the workload, or NULL */
    uint64_t rng;
    int has_timer;
    timer_t timer;
    uint64_t last_sample_ns;
    wf_asgct_frame frames[WF_HS_MAX_DEPTH];
    /* checker handshake: see wf_hs_peek_state. held = inside the Native.hold JNI call. */
    volatile int peek;
    volatile int held;
    jint peek_num;
    wf_asgct_frame peek_frames[WF_HS_MAX_DEPTH];
    /* the checker's running sample of this thread, judged at its next held check (the
       checker's alone; running_num WF_HS_NO_RUNNING = none) */
    jint running_num;
    wf_asgct_frame running_frames[WF_HS_MAX_DEPTH];
    int32_t scratch_tracked[WF_HS_MAX_DEPTH], scratch_shadow[WF_HS_MAX_DEPTH];
    wf_hs_method_memo memo[WF_HS_METHOD_MEMO];
    /* counters, written by the owner thread only, read racily by the reporter */
    uint64_t signals, calls, faults, skipped_not_java;
    uint64_t unresolved; /* records skipped: a base this context lacks */
    uint64_t holds;      /* Agent.hold() calls while the checker ran (held checks offered) */
    uint64_t codes[WF_HS_CODE_SLOTS];
    uint64_t classes[16];
    uint64_t class_first_ns[16], class_last_ns[16]; /* CLOCK_MONOTONIC, 0 = none yet */
    uint64_t interval_hist[WF_HS_HIST_BUCKETS];
    uint64_t latency_hist[WF_HS_HIST_BUCKETS];
    uint64_t walk_ns, handler_ns; /* stress: time in ASGCT, in the whole sample (walk + checks) */
    uint64_t cpu_ns_at_exit;
} wf_hs_thread;

extern wf_hs_thread wf_hs_threads[WF_HS_MAX_THREADS];
/* The calling thread's slot or NULL. Async-signal-safe. */
wf_hs_thread *wf_hs_self(void);
/* Number of slots ever used (a high-water mark; slots may since have died). */
int wf_hs_thread_count(void);
/* Claim a slot for the calling thread (ThreadStart). NULL when the table is full. */
wf_hs_thread *wf_hs_thread_attach(JNIEnv *env, jthread thread);
/* Release the calling thread's slot (ThreadEnd, after its timer is stopped). */
void wf_hs_thread_detach(void);

/* ---- wf_hs_asgct.c ---------------------------------------------------------------------- */
/* Resolve ASGCT and JVM_handle_linux_signal; 0 or -1 with a one-line reason in err. */
int wf_hs_asgct_resolve(char *err, size_t errlen);
/* libjvm.so's load base (found with ASGCT), 0 before wf_hs_asgct_resolve. Async-signal-safe. */
uintptr_t wf_hs_libjvm_base(void);
/* ASGCT inside the JVM-aware guard. Returns 1 on a caught fault (*fault set). Async-signal-safe. */
int wf_hs_asgct_guarded(wf_asgct_trace *trace, jint depth, void *uc, wf_fault *fault);
/* ASGCT without any protection (the control run). Async-signal-safe (or crashes the VM). */
void wf_hs_asgct_unguarded(wf_asgct_trace *trace, jint depth, void *uc);
/* Histogram slot of an ASGCT result. Async-signal-safe. */
int wf_hs_code_slot(jint num_frames);

/* ---- wf_hs_methods.c -------------------------------------------------------------------- */
struct wf_hs_method_info {
    int32_t shadow_id; /* > 0: tracked by the shadow stack; 0: the shadow stack's own push/pop;
                          -1 untracked */
    int32_t code_len;  /* bytecode length; 0 for native/abstract */
};
/* Load the shadow manifest (methods_path). 0 or -1 with reason in err. */
int wf_hs_methods_load_manifest(const char *path, char *err, size_t errlen);
/* Preload jmethodIDs of a prepared class and record their infos (not in a handler). */
void wf_hs_methods_add_class(jvmtiEnv *jvmti, jclass klass);
/* Info of a preloaded method; NULL if the id was never preloaded. Async-signal-safe. */
const wf_hs_method_info *wf_hs_methods_find(jmethodID id);
/* Counts for the summary. */
uint64_t wf_hs_methods_count(void);
uint64_t wf_hs_methods_tracked(void);

/* ---- wf_hs_regions.c -------------------------------------------------------------------- */
typedef enum {
    WF_HS_REGION_CODE = 0,
    WF_HS_REGION_HEAP = 1,
    WF_HS_REGION_LIBJVM = 2,
    WF_HS_REGION_KINDS = 3
} wf_hs_region_kind;
/* Re-read /proc/self/maps and publish the regions (reporter thread, not a handler). */
void wf_hs_regions_refresh(void);
/* Whether pc is in JIT/interpreter code (anonymous executable memory). Async-signal-safe. */
int wf_hs_regions_is_java_code(uintptr_t pc);
/* Whether addr lies in a region of that kind. Async-signal-safe. */
int wf_hs_regions_contains(wf_hs_region_kind kind, uintptr_t addr);
/* Lowest address of the regions of that kind (the code cache's start, the heap's start);
 * 0 if none is known yet. Async-signal-safe. */
uintptr_t wf_hs_regions_start(wf_hs_region_kind kind);
/* An 8-aligned address in a region of that kind chosen by r; 0 if none. Async-signal-safe. */
uintptr_t wf_hs_regions_pick(wf_hs_region_kind kind, uint64_t r);

/* ---- wf_hs_record.c --------------------------------------------------------------------- */
/* A perturbation record: for each of pc, sp, fp an operation, a base and a 64-bit value; the
 * operand is base + value (mod 2^64), where the base is an address of the sampled JVM found
 * at the moment of the call, so a record that points "just below the stack top" means the
 * same in every JVM run. Two encodings (fuzz/targets/hotspot/inputs.py draws the same):
 *
 *   version 1, 27 bytes, no version byte (first byte < 0x80), every base abs:
 *   offset  0      1..8       9     10..17     18    19..26
 *          +------+----------+-----+----------+-----+----------+
 *          |op pc | value pc |op sp| value sp |op fp| value fp |      little-endian
 *          +------+----------+-----+----------+-----+----------+
 *
 *   version 2, 31 bytes:
 *   offset  0     1   2    3..10   11  12   13..20  21  22   23..30
 *          +----+---+----+-------+---+----+-------+---+----+-------+
 *          |0x82|op |base| value |op |base| value |op |base| value |
 *          +----+---+----+-------+---+----+-------+---+----+-------+
 *
 *   op: 0 keep, 1 add (two's complement), 2 xor, 3 set. Version 1 takes its op byte mod 4.
 *   A first byte >= 0x80 names a version (0x80 | n); only 2 is known.
 * Corpus files and finding inputs are concatenations of records; the agent writes version 2.
 */
#define WF_HS_RECORD_V1_SIZE 27
#define WF_HS_RECORD_V2_SIZE 31
#define WF_HS_RECORD_V2_TAG 0x82
#define WF_HS_RECORD_VERSION_FLAG 0x80
enum { WF_HS_OP_KEEP = 0, WF_HS_OP_ADD = 1, WF_HS_OP_XOR = 2, WF_HS_OP_SET = 3, WF_HS_OPS = 4 };
enum { WF_HS_REG_PC = 0, WF_HS_REG_SP = 1, WF_HS_REG_FP = 2, WF_HS_REGS = 3 };
/* Bases: addresses the agent knows in any run at the moment of a call (record.py: BASES). */
typedef enum {
    WF_HS_BASE_ABS = 0,            /* none: the value is absolute */
    WF_HS_BASE_STACK_HI = 1,       /* the sampled thread's stack top (highest address, excl.) */
    WF_HS_BASE_STACK_LO = 2,       /* the sampled thread's stack end (lowest address) */
    WF_HS_BASE_SP = 3,             /* the interrupted sp */
    WF_HS_BASE_CODE = 4,           /* the code cache's start (lowest anonymous exec mapping) */
    WF_HS_BASE_LIBJVM = 5,         /* libjvm.so's load base */
    WF_HS_BASE_HEAP = 6,           /* the Java heap's start (largest anonymous rw mapping) */
    WF_HS_BASE_OTHER_STACK_HI = 7, /* stack top of the next live workload thread after this */
    WF_HS_BASES = 8
} wf_hs_base;
typedef struct {
    uint8_t op[WF_HS_REGS];
    uint8_t base[WF_HS_REGS];
    uint64_t value[WF_HS_REGS];
} wf_hs_record;
/* The bases of one sampled context; 0 = not known here (at[WF_HS_BASE_ABS] is always 0). */
typedef struct {
    uint64_t at[WF_HS_BASES];
} wf_hs_bases;

/* Decode the record at the start of b (n bytes): its size in bytes, 0 when n is too short,
 * -1 for an unknown version, -2 for an op or base out of range. Async-signal-safe. */
int wf_hs_record_decode(const uint8_t *b, size_t n, wf_hs_record *rec);
/* Serialize in version 2; returns WF_HS_RECORD_V2_SIZE. Async-signal-safe. */
int wf_hs_record_encode(const wf_hs_record *rec, uint8_t out[WF_HS_RECORD_V2_SIZE]);
/* Apply a record to regs {pc, sp, fp} (sp base: regs[1] as given). 1, or 0 with regs
 * untouched when a base the record needs is not known. Async-signal-safe. */
int wf_hs_record_apply_regs(const wf_hs_record *rec, const wf_hs_bases *bases, uint64_t regs[3]);
/* The same on a copied ucontext's RIP, RSP, RBP. Async-signal-safe. */
int wf_hs_record_apply(const wf_hs_record *rec, const wf_hs_bases *bases, ucontext_t *uc);

/* ---- wf_hs_perturb.c -------------------------------------------------------------------- */
typedef enum {
    WF_HS_STRAT_GRID = 0,    /* sp/fp word offsets and small pc offsets, enumerated */
    WF_HS_STRAT_RANDOM = 1,  /* random values: anywhere, canonical, near the stack */
    WF_HS_STRAT_BITFLIP = 2, /* one or two bits of one or two registers */
    WF_HS_STRAT_HEAP = 3,    /* pointers into the Java heap */
    WF_HS_STRAT_CODE = 4,    /* pointers into the code cache and libjvm's text */
    WF_HS_STRAT_STACKS = 5,  /* another thread's last sp/fp/pc */
    WF_HS_STRAT_UNWOUND = 6, /* pc := a word found on the stack, sp just above it */
    WF_HS_STRAT_SPECIAL = 7, /* 0, -1, non-canonical, page edges */
    WF_HS_STRAT_CORPUS = 8,  /* records from the corpus file, as read or nudged */
    WF_HS_STRATEGIES = 9
} wf_hs_strategy;

/* Load the corpus (corpus_path) into memory; 0 or -1 with reason. An empty path is no corpus. */
int wf_hs_perturb_load_corpus(const char *path, char *err, size_t errlen);
/* Whether a corpus was loaded with at least one record. */
int wf_hs_perturb_has_corpus(void);
/* The bases of the context uc interrupted on thread t. Async-signal-safe. */
void wf_hs_perturb_bases(const wf_hs_thread *t, const ucontext_t *uc, wf_hs_bases *bases);
/* Pick a strategy from the enabled mask and make a record; a value that came from a base is
 * stored relative to it. Async-signal-safe. */
wf_hs_strategy wf_hs_perturb_next(wf_hs_thread *t, const ucontext_t *uc, const wf_hs_bases *bases,
                                  wf_hs_record *rec);
/* Next random number of the thread. Async-signal-safe. */
uint64_t wf_hs_rand(wf_hs_thread *t);
const char *wf_hs_strategy_name(wf_hs_strategy s);

/* ---- wf_hs_fuzz.c / wf_hs_stress.c ------------------------------------------------------ */
/* SIGPROF handler bodies; errno is saved by the caller. Async-signal-safe. */
void wf_hs_fuzz_on_signal(wf_hs_thread *t, ucontext_t *uc, int guarded);
void wf_hs_stress_on_signal(wf_hs_thread *t, ucontext_t *uc);

/* Invalid-trace classes (stress oracle against the shadow stack). Index into classes[]. */
typedef enum {
    WF_HS_CLASS_EXACT = 0,      /* tracked frames equal the shadow stack */
    WF_HS_CLASS_TOP_TOLERATED,  /* equal after dropping at most one top frame on either side */
    WF_HS_CLASS_IN_UPDATE,      /* sampled inside Shadow.push/pop: the shadow is mid-update */
    WF_HS_CLASS_NO_SHADOW,      /* no shadow registered / thread not in tracked code */
    WF_HS_CLASS_TRUNCATED,      /* trace matches the top of the shadow but stops early */
    WF_HS_CLASS_MISSING_TOP,    /* trace matches the bottom but lacks >= 2 top frames */
    WF_HS_CLASS_MISSING,        /* trace is a subsequence of the shadow, frames missing inside */
    WF_HS_CLASS_EXTRA,          /* shadow is a subsequence of the trace: extra frames */
    WF_HS_CLASS_WRONG_METHOD,   /* same depth, a method differs below the top */
    WF_HS_CLASS_WRONG_BCI,      /* a Java frame's bci is outside its method's bytecode */
    WF_HS_CLASS_UNKNOWN_METHOD, /* a jmethodID that was never preloaded (or NULL) */
    WF_HS_CLASS_OTHER,          /* none of the above */
    WF_HS_CLASSES
} wf_hs_class;
const char *wf_hs_class_name(wf_hs_class c);
/* Classify a trace against a shadow stack (ids bottom first), using two scratch arrays of
 * WF_HS_MAX_DEPTH ints and the thread's memo of method lookups. Async-signal-safe. */
wf_hs_class wf_hs_classify(const wf_asgct_frame *frames, int n, const int32_t *shadow_ids,
                           int depth, int32_t *tracked, int32_t *shadow_top,
                           wf_hs_method_memo *memo);

/* ---- wf_hs_check.c ---------------------------------------------------------------------- */
/* Start the checker agent thread (VMInit). */
void wf_hs_check_start(JNIEnv *jni);
/* Called by the held thread inside Native.hold(): wait until checked or timed out. */
void wf_hs_check_hold(wf_hs_thread *t);
/* CPU seconds the checker thread used, once it stopped; 0 before or without one. */
double wf_hs_check_cpu_s(void);
/* Stop the checker loop and wait (bounded) until it returned (VMDeath). */
void wf_hs_check_stop(void);
/* SIGPROF hook: fill peek_* if the checker asked. Async-signal-safe. */
void wf_hs_check_on_sample(wf_hs_thread *t, const wf_asgct_trace *trace);

/* ---- wf_hs_timers.c --------------------------------------------------------------------- */
/* Arm a per-thread timer for the calling thread; 0 or -1 (errno). */
int wf_hs_timer_start(wf_hs_thread *t, uint64_t interval_ns);
void wf_hs_timer_stop(wf_hs_thread *t);
/* Disarm / re-arm the calling thread's own timer (a held thread takes no timer samples). */
void wf_hs_timer_pause(wf_hs_thread *t);
void wf_hs_timer_resume(wf_hs_thread *t);
uint64_t wf_hs_now_ns(void);        /* CLOCK_MONOTONIC. Async-signal-safe. */
int wf_hs_log2_bucket(uint64_t us); /* Async-signal-safe. */

/* ---- wf_hs_output.c --------------------------------------------------------------------- */
typedef struct {
    uint32_t thread;
    uint8_t strategy;
    uint8_t record[WF_HS_RECORD_V2_SIZE];
    wf_fault fault;
    uintptr_t real_pc, real_sp, real_fp;
    uintptr_t pert_pc, pert_sp, pert_fp;
    uint64_t at_ns; /* CLOCK_MONOTONIC when pushed (set by wf_hs_out_fault) */
} wf_hs_fault_event;

typedef struct {
    uint32_t thread;
    uint8_t cls;
    int16_t n, depth;
    int32_t trace_ids[32]; /* tracked ids of the trace, top first (-1 untracked, -2 unknown) */
    int32_t trace_bci[32];
    int32_t shadow_ids[32]; /* top first */
    uint64_t at_ns;         /* CLOCK_MONOTONIC when pushed (set by wf_hs_out_invalid) */
} wf_hs_invalid_event;

/* Push events from a handler; dropped (and counted) when the ring is full. Async-signal-safe. */
void wf_hs_out_fault(const wf_hs_fault_event *ev);
void wf_hs_out_invalid(const wf_hs_invalid_event *ev);
/* Control mode: record the perturbation about to be tried (mmaped flight file).
   Async-signal-safe. */
void wf_hs_out_flight(wf_hs_thread *t, uint8_t strategy, const wf_hs_record *rec);
/* Open output, flight file; start the reporter thread. 0 or -1 with reason. */
int wf_hs_out_open(char *err, size_t errlen);
int wf_hs_out_start_reporter(void);
/* Write one line (not from a handler). */
void wf_hs_out_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Final summary, with the checker thread's CPU seconds; stops the reporter. */
void wf_hs_out_finish(double checker_cpu_s);
/* Called by the checker thread with a comparison result (not from a handler). */
void wf_hs_out_check(const char *kind, int agree, int asgct_n, int gst_n, int common_bottom,
                     const char *detail);

#endif
