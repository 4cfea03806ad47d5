/* Everything the agent tells the driver, as JSON lines in one file (out=PATH):
 *   start     mode, pid, libjvm path
 *   tick      heartbeat with running totals (the driver's watchdog reads these)
 *   fault     a caught fault: record, strategy, signal, pc as library+offset, registers
 *   invalid   an invalid trace: class, tracked ids of trace and shadow stack
 *   check     a GetStackTrace disagreement, with both traces rendered
 *   summary   final totals, histograms, CPU time, first/last time of each invalid class
 * Events carry "mono": the CLOCK_MONOTONIC seconds when they happened (the same clock in every
 * process, so the driver places them on its run's time axis).
 * Handlers never write: they push fixed-size events into lock-free rings (claim a slot with a
 * CAS, fill it, mark it ready), the reporter thread drains them every tick. A full ring drops
 * the event and counts the drop.
 *
 * Control mode keeps a flight file instead: one 64-byte slot per thread, the record about to
 * be tried, written before each unguarded call; it survives the crash it explains.
 *
 *   flight slot: +--------+----------+-----+--------+-----------------+-----+
 *                | tid u32| seq u32  |strat| pad[7] | record v2 [31]  | pad |   64 bytes
 *                +--------+----------+-----+--------+-----------------+-----+
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "wf_hs.h"

#define FAULT_RING 1024
#define INVALID_RING 256
#define MAX_INVALID_LINES 200 /* invalid-trace examples written per run */
#define MAX_CHECK_LINES 50    /* GetStackTrace disagreements written per run */
#define FLIGHT_SLOT 64
#define REGIONS_REFRESH_MS 1000

enum { SLOT_EMPTY = 0, SLOT_WRITING = 1, SLOT_READY = 2 };

typedef struct {
    volatile int state;
    wf_hs_fault_event ev;
} fault_slot;
typedef struct {
    volatile int state;
    wf_hs_invalid_event ev;
} invalid_slot;

static fault_slot faults[FAULT_RING];
static invalid_slot invalids[INVALID_RING];
static volatile uint64_t fault_cursor, invalid_cursor, fault_drops, invalid_drops;
static uint64_t invalid_lines, check_lines;
static uint64_t check_total[2], check_agree[2], check_empty[2];
static uint64_t check_bottom_hist[8];
static uint64_t check_disagree_first[2], check_disagree_last[2]; /* CLOCK_MONOTONIC ns */

static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *flight;
static pthread_t reporter;
static volatile int reporter_running;
static uint64_t start_ns;

void wf_hs_out_line(const char *fmt, ...) {
    if (!out) return;
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&out_lock);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    fflush(out);
    pthread_mutex_unlock(&out_lock);
    va_end(ap);
}

/* ---- rings (producers: signal handlers) ------------------------------------------------- */

#define CLAIM_TRIES 4

/* A ring slot claimed for writing (its state, the first member, set to SLOT_WRITING), or NULL
 * when CLAIM_TRIES slots in a row are taken. Async-signal-safe: one fetch-add and CASes. */
static void *claim_slot(void *ring, size_t stride, uint64_t count, volatile uint64_t *cursor) {
    uint64_t base = __atomic_fetch_add(cursor, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < CLAIM_TRIES; i++) {
        char *slot = (char *)ring + ((base + (uint64_t)i) % count) * stride;
        int empty = SLOT_EMPTY;
        if (__atomic_compare_exchange_n((volatile int *)slot, &empty, SLOT_WRITING, 0,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return slot;
    }
    return NULL;
}

void wf_hs_out_fault(const wf_hs_fault_event *ev) {
    fault_slot *s = claim_slot(faults, sizeof faults[0], FAULT_RING, &fault_cursor);
    if (s == NULL) {
        __atomic_fetch_add(&fault_drops, 1, __ATOMIC_RELAXED);
        return;
    }
    s->ev = *ev;
    s->ev.at_ns = wf_hs_now_ns();
    __atomic_store_n(&s->state, SLOT_READY, __ATOMIC_RELEASE);
}

void wf_hs_out_invalid(const wf_hs_invalid_event *ev) {
    invalid_slot *s = claim_slot(invalids, sizeof invalids[0], INVALID_RING, &invalid_cursor);
    if (s == NULL) {
        __atomic_fetch_add(&invalid_drops, 1, __ATOMIC_RELAXED);
        return;
    }
    s->ev = *ev;
    s->ev.at_ns = wf_hs_now_ns();
    __atomic_store_n(&s->state, SLOT_READY, __ATOMIC_RELEASE);
}

void wf_hs_out_flight(wf_hs_thread *t, uint8_t strategy, const wf_hs_record *rec) {
    if (!flight) return;
    uint8_t *slot = flight + (size_t)t->index * FLIGHT_SLOT;
    uint32_t tid = (uint32_t)t->tid;
    uint32_t seq = (uint32_t)t->calls;
    memcpy(slot, &tid, 4);
    memcpy(slot + 4, &seq, 4);
    slot[8] = strategy;
    wf_hs_record_encode(rec, slot + 16);
}

/* ---- writing events (reporter thread) ----------------------------------------------------- */

static void hex(const uint8_t *b, size_t n, char *out_hex) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out_hex[2 * i] = digits[b[i] >> 4];
        out_hex[2 * i + 1] = digits[b[i] & 15];
    }
    out_hex[2 * n] = '\0';
}

static void write_fault(const wf_hs_fault_event *ev) {
    Dl_info info;
    memset(&info, 0, sizeof info);
    const char *lib = "?";
    uintptr_t off = ev->fault.pc;
    if (ev->fault.pc && dladdr((void *)ev->fault.pc, &info) && info.dli_fname) {
        lib = info.dli_fname;
        off = ev->fault.pc - (uintptr_t)info.dli_fbase;
    }
    char rec[2 * WF_HS_RECORD_V2_SIZE + 1];
    hex(ev->record, WF_HS_RECORD_V2_SIZE, rec);
    const char *strategy = ev->strategy == 0xff ? "none" : wf_hs_strategy_name(ev->strategy);
    wf_hs_out_line(
        "{\"type\":\"fault\",\"thread\":%u,\"strategy\":\"%s\",\"record\":\"%s\","
        "\"kind\":%d,\"signo\":%d,\"si_code\":%d,\"addr\":\"0x%lx\",\"pc\":\"0x%lx\","
        "\"lib\":\"%s\",\"offset\":%lu,\"frames\":%lu,"
        "\"real\":[\"0x%lx\",\"0x%lx\",\"0x%lx\"],\"perturbed\":[\"0x%lx\",\"0x%lx\",\"0x%lx\"],"
        "\"mono\":%.6f}",
        ev->thread, strategy, rec, ev->fault.kind, ev->fault.signo, ev->fault.si_code,
        (unsigned long)ev->fault.addr, (unsigned long)ev->fault.pc, lib, (unsigned long)off,
        (unsigned long)ev->fault.frames, (unsigned long)ev->real_pc, (unsigned long)ev->real_sp,
        (unsigned long)ev->real_fp, (unsigned long)ev->pert_pc, (unsigned long)ev->pert_sp,
        (unsigned long)ev->pert_fp, (double)ev->at_ns / 1e9);
}

static int ints_json(char *buf, size_t cap, const int32_t *v, int n) {
    size_t used = 0;
    used += (size_t)snprintf(buf + used, cap - used, "[");
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, i ? ",%d" : "%d", v[i]);
    if (used < cap) used += (size_t)snprintf(buf + used, cap - used, "]");
    return (int)used;
}

static const char *const class_names[WF_HS_CLASSES] = {
    "exact",   "top-tolerated", "in-update",    "no-shadow", "truncated",      "missing-top",
    "missing", "extra",         "wrong-method", "wrong-bci", "unknown-method", "other"};

const char *wf_hs_class_name(wf_hs_class c) {
    return (unsigned)c < WF_HS_CLASSES ? class_names[c] : "?";
}

static void write_invalid(const wf_hs_invalid_event *ev) {
    if (invalid_lines++ >= MAX_INVALID_LINES) return;
    char ids[512], bcis[512], shadow[512];
    int n = ev->n < 32 ? ev->n : 32;
    int d = ev->depth < 32 ? ev->depth : 32;
    ints_json(ids, sizeof ids, ev->trace_ids, n);
    ints_json(bcis, sizeof bcis, ev->trace_bci, n);
    ints_json(shadow, sizeof shadow, ev->shadow_ids, d);
    wf_hs_out_line("{\"type\":\"invalid\",\"thread\":%u,\"class\":\"%s\",\"frames\":%d,"
                   "\"depth\":%d,\"trace_ids\":%s,\"trace_bci\":%s,\"shadow_ids\":%s,"
                   "\"mono\":%.6f}",
                   ev->thread, wf_hs_class_name((wf_hs_class)ev->cls), ev->n, ev->depth, ids, bcis,
                   shadow, (double)ev->at_ns / 1e9);
}

static void drain(void) {
    for (int i = 0; i < FAULT_RING; i++) {
        if (__atomic_load_n(&faults[i].state, __ATOMIC_ACQUIRE) != SLOT_READY) continue;
        wf_hs_fault_event ev = faults[i].ev;
        __atomic_store_n(&faults[i].state, SLOT_EMPTY, __ATOMIC_RELEASE);
        write_fault(&ev);
    }
    for (int i = 0; i < INVALID_RING; i++) {
        if (__atomic_load_n(&invalids[i].state, __ATOMIC_ACQUIRE) != SLOT_READY) continue;
        wf_hs_invalid_event ev = invalids[i].ev;
        __atomic_store_n(&invalids[i].state, SLOT_EMPTY, __ATOMIC_RELEASE);
        write_invalid(&ev);
    }
}

void wf_hs_out_check(const char *kind, int agree, int asgct_n, int gst_n, int bottom,
                     const char *detail) {
    int held = !strcmp(kind, "held");
    uint64_t now = wf_hs_now_ns();
    pthread_mutex_lock(&out_lock);
    if (agree < 0) check_empty[held]++;
    else check_total[held]++;
    if (agree > 0) check_agree[held]++;
    if (agree == 0) {
        if (!check_disagree_first[held]) check_disagree_first[held] = now;
        check_disagree_last[held] = now;
    }
    if (!held && agree >= 0) check_bottom_hist[bottom < 7 ? bottom : 7]++;
    int write = agree == 0 && check_lines++ < MAX_CHECK_LINES;
    pthread_mutex_unlock(&out_lock);
    if (!write) return;
    char esc[2200];
    size_t j = 0;
    for (size_t i = 0; detail[i] && j + 2 < sizeof esc; i++) {
        if (detail[i] == '"' || detail[i] == '\\') esc[j++] = '\\';
        esc[j++] = detail[i];
    }
    esc[j] = '\0';
    wf_hs_out_line("{\"type\":\"check\",\"kind\":\"%s\",\"asgct_frames\":%d,\"gst_frames\":%d,"
                   "\"common_bottom\":%d,\"detail\":\"%s\",\"mono\":%.6f}",
                   kind, asgct_n, gst_n, bottom, esc, (double)now / 1e9);
}

/* ---- totals -------------------------------------------------------------------------------- */

typedef struct {
    uint64_t signals, calls, faults, skipped_not_java, unresolved, threads, holds;
    uint64_t walk_ns, handler_ns;
    uint64_t codes[WF_HS_CODE_SLOTS], classes[WF_HS_CLASSES];
    uint64_t class_first[WF_HS_CLASSES], class_last[WF_HS_CLASSES];
    uint64_t interval[WF_HS_HIST_BUCKETS], latency[WF_HS_HIST_BUCKETS];
    double worker_cpu_s;
} totals;

static double thread_cpu_s(const wf_hs_thread *t) {
    if (!t->live) return (double)t->cpu_ns_at_exit / 1e9;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", t->tid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* skip "pid (comm)" */
    unsigned long utime = 0, stime = 0;
    if (!p ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
        return 0;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static void sum(totals *s, int with_cpu) {
    memset(s, 0, sizeof *s);
    int n = wf_hs_thread_count();
    for (int i = 0; i < n; i++) {
        const wf_hs_thread *t = &wf_hs_threads[i];
        if (!t->tid) continue;
        s->threads++;
        s->signals += t->signals;
        s->calls += t->calls;
        s->faults += t->faults;
        s->skipped_not_java += t->skipped_not_java;
        s->unresolved += t->unresolved;
        s->holds += t->holds;
        s->walk_ns += t->walk_ns;
        s->handler_ns += t->handler_ns;
        for (int k = 0; k < WF_HS_CODE_SLOTS; k++) s->codes[k] += t->codes[k];
        for (int k = 0; k < WF_HS_CLASSES; k++) {
            s->classes[k] += t->classes[k];
            uint64_t first = t->class_first_ns[k], last = t->class_last_ns[k];
            if (first && (!s->class_first[k] || first < s->class_first[k]))
                s->class_first[k] = first;
            if (last > s->class_last[k]) s->class_last[k] = last;
        }
        for (int k = 0; k < WF_HS_HIST_BUCKETS; k++) {
            s->interval[k] += t->interval_hist[k];
            s->latency[k] += t->latency_hist[k];
        }
        if (with_cpu) s->worker_cpu_s += thread_cpu_s(t);
    }
}

static double elapsed_s(void) { return (double)(wf_hs_now_ns() - start_ns) / 1e9; }

static void write_tick(void) {
    totals s;
    sum(&s, 0);
    wf_hs_out_line("{\"type\":\"tick\",\"t\":%.3f,\"signals\":%lu,\"calls\":%lu,\"faults\":%lu,"
                   "\"skipped_not_java\":%lu,\"threads\":%lu}",
                   elapsed_s(), (unsigned long)s.signals, (unsigned long)s.calls,
                   (unsigned long)s.faults, (unsigned long)s.skipped_not_java,
                   (unsigned long)s.threads);
}

static void u64_array(char *buf, size_t cap, const uint64_t *v, int n) {
    size_t used = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, i ? ",%lu" : "%lu", (unsigned long)v[i]);
    if (used < cap) snprintf(buf + used, cap - used, "]");
}

/* CLOCK_MONOTONIC nanoseconds as a JSON array of seconds (0 stays 0: never). */
static void mono_array(char *buf, size_t cap, const uint64_t *ns, int n) {
    size_t used = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, i ? ",%.6f" : "%.6f", (double)ns[i] / 1e9);
    if (used < cap) snprintf(buf + used, cap - used, "]");
}

static void write_summary(double checker_cpu_s) {
    totals s;
    sum(&s, 1);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    char codes[512], classes[512], interval[512], latency[512], bottom[256];
    u64_array(codes, sizeof codes, s.codes, WF_HS_CODE_SLOTS);
    u64_array(classes, sizeof classes, s.classes, WF_HS_CLASSES);
    u64_array(interval, sizeof interval, s.interval, WF_HS_HIST_BUCKETS);
    u64_array(latency, sizeof latency, s.latency, WF_HS_HIST_BUCKETS);
    u64_array(bottom, sizeof bottom, check_bottom_hist, 8);
    char first[WF_HS_CLASSES * 20 + 8], last[WF_HS_CLASSES * 20 + 8];
    mono_array(first, sizeof first, s.class_first, WF_HS_CLASSES);
    mono_array(last, sizeof last, s.class_last, WF_HS_CLASSES);
    wf_hs_out_line(
        "{\"type\":\"summary\",\"t\":%.3f,\"threads\":%lu,\"signals\":%lu,\"calls\":%lu,"
        "\"faults\":%lu,\"skipped_not_java\":%lu,\"unresolved\":%lu,"
        "\"process_cpu_s\":%.3f,\"worker_cpu_s\":%.3f,\"checker_cpu_s\":%.3f,\"walk_s\":%.6f,"
        "\"handler_s\":%.6f,"
        "\"codes\":%s,\"classes\":%s,\"interval_us_log2\":%s,\"latency_us_log2\":%s,"
        "\"holds\":%lu,\"held_checks\":%lu,\"held_agree\":%lu,\"held_empty\":%lu,"
        "\"bottom_checks\":%lu,\"bottom_agree\":%lu,\"bottom_empty\":%lu,\"bottom_common\":%s,"
        "\"methods\":%lu,\"tracked_methods\":%lu,\"fault_drops\":%lu,\"invalid_drops\":%lu,"
        "\"class_first_mono\":%s,\"class_last_mono\":%s,\"held_disagree_mono\":[%.6f,%.6f],"
        "\"bottom_disagree_mono\":[%.6f,%.6f]}",
        elapsed_s(), (unsigned long)s.threads, (unsigned long)s.signals, (unsigned long)s.calls,
        (unsigned long)s.faults, (unsigned long)s.skipped_not_java, (unsigned long)s.unresolved,
        cpu, s.worker_cpu_s, checker_cpu_s, (double)s.walk_ns / 1e9, (double)s.handler_ns / 1e9,
        codes, classes, interval, latency, (unsigned long)s.holds, (unsigned long)check_total[1],
        (unsigned long)check_agree[1], (unsigned long)check_empty[1], (unsigned long)check_total[0],
        (unsigned long)check_agree[0], (unsigned long)check_empty[0], bottom,
        (unsigned long)wf_hs_methods_count(), (unsigned long)wf_hs_methods_tracked(),
        (unsigned long)fault_drops, (unsigned long)invalid_drops, first, last,
        (double)check_disagree_first[1] / 1e9, (double)check_disagree_last[1] / 1e9,
        (double)check_disagree_first[0] / 1e9, (double)check_disagree_last[0] / 1e9);
}

/* ---- reporter thread ------------------------------------------------------------------------ */

static void *reporter_main(void *arg) {
    (void)arg;
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &block, NULL);
    uint64_t last_refresh = wf_hs_now_ns();
    while (__atomic_load_n(&reporter_running, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, (long)wf_hs_cfg.tick_ms * 1000000L};
        nanosleep(&ts, NULL);
        drain();
        write_tick();
        if (wf_hs_now_ns() - last_refresh > REGIONS_REFRESH_MS * 1000000ull) {
            wf_hs_regions_refresh();
            last_refresh = wf_hs_now_ns();
        }
    }
    return NULL;
}

static int open_flight(char *err, size_t errlen) {
    if (!wf_hs_cfg.flight_path[0]) return 0;
    size_t size = (size_t)WF_HS_MAX_THREADS * FLIGHT_SLOT;
    int fd = open(wf_hs_cfg.flight_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        snprintf(err, errlen, "cannot create flight file %s: %s", wf_hs_cfg.flight_path,
                 strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "cannot map flight file %s", wf_hs_cfg.flight_path);
        return -1;
    }
    flight = p;
    return 0;
}

int wf_hs_out_open(char *err, size_t errlen) {
    out = fopen(wf_hs_cfg.out_path, "w");
    if (!out) {
        snprintf(err, errlen, "cannot open output %s: %s", wf_hs_cfg.out_path, strerror(errno));
        return -1;
    }
    start_ns = wf_hs_now_ns();
    if (open_flight(err, errlen)) return -1;
    Dl_info info;
    memset(&info, 0, sizeof info);
    void *asgct = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    const char *libjvm = asgct && dladdr(asgct, &info) && info.dli_fname ? info.dli_fname : "?";
    static const char *const modes[] = {"fuzz", "stress", "control"};
    wf_hs_out_line("{\"type\":\"start\",\"mode\":\"%s\",\"pid\":%d,\"libjvm\":\"%s\","
                   "\"interval_ns\":%lu,\"batch\":%u,\"strategies\":%u,\"seed\":%lu,"
                   "\"corpus_records\":%d}",
                   modes[wf_hs_cfg.mode], (int)getpid(), libjvm,
                   (unsigned long)wf_hs_cfg.interval_ns, wf_hs_cfg.batch, wf_hs_cfg.strategies,
                   (unsigned long)wf_hs_cfg.seed, wf_hs_perturb_has_corpus());
    return 0;
}

int wf_hs_out_start_reporter(void) {
    __atomic_store_n(&reporter_running, 1, __ATOMIC_RELEASE);
    if (pthread_create(&reporter, NULL, reporter_main, NULL) != 0) {
        __atomic_store_n(&reporter_running, 0, __ATOMIC_RELEASE);
        return -1;
    }
    return 0;
}

void wf_hs_out_finish(double checker_cpu_s) {
    if (__atomic_exchange_n(&reporter_running, 0, __ATOMIC_ACQ_REL)) pthread_join(reporter, NULL);
    drain();
    write_summary(checker_cpu_s);
}
