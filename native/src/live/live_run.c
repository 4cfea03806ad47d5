/* live_run.c — one live stress run: generate and map the VM, start the workers on stacks of
 * their own (mmap'ed, a PROT_NONE page below; the bounds go into their VM records), run an
 * unsampled baseline phase and then the sampled phase, stop, and sum up the results.
 *
 * Worker loop: the thread is "in native" with no anchor between root calls; each iteration
 * enters Java through the entry stub and runs method 0 to completion.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wf_live_worker.h"

#define PAGE 4096
#define WORKER_START_TIMEOUT_NS 5000000000ull
#define PHASE_ROUND_NS 250000000ull /* unsampled and sampled phases alternate in rounds */

static int run_done;

/* The C body of every native method: spin, maybe call back into Java (the recursive
   workload's spins only from busy_from on, and calls back only below recurse_below). */
static void native_body(struct wf_live_thread *t, const struct wf_live_method *m) {
    uint32_t depth = t->depth;
    if (depth >= m->busy_from)
        for (volatile uint32_t i = 0; i < m->native_work; i++) {}
    const struct wf_live_method *up =
        m->upcall_alt != NULL && depth % 3 == 0 ? m->upcall_alt : m->upcall;
    if (up != NULL && (m->recurse_below == 0 || depth < m->recurse_below))
        ((wf_live_entry_fn)wf_live_current_run.vm.entry_stub)(t, up);
}

static uint64_t cpu_ns(const struct wf_live_worker *w) {
    struct timespec ts;
    if (clock_gettime(w->cpu_clock, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *worker_main(void *arg) {
    struct wf_live_worker *w = arg;
    struct wf_live_run *run = &wf_live_current_run;
    w->tid = (pid_t)gettid();
    pthread_getcpuclockid(pthread_self(), &w->cpu_clock);
    w->vm->stack_lo = (uintptr_t)w->stack + PAGE;
    w->vm->stack_hi = (uintptr_t)w->stack + PAGE + WF_LIVE_STACK_SIZE;
    w->vm->state = WF_THREAD_IN_NATIVE; /* C code, no anchor: no Java frames */
    w->jt.vm = w->vm;
    w->jt.safepoint_entry = run->vm.safepoint_entry;
    wf_live_guard_prepare(run->cfg.mode == WF_LIVE_MODE_THREAD ? 0 : run->cfg.walk_budget_ns);
    if (run->cfg.mode == WF_LIVE_MODE_QUEUE && wf_live_queue_register(w) != 0)
        w->start_failed = 1; /* await_workers reports it */
    wf_live_capture_c_top(w, (uintptr_t)__builtin_frame_address(0));
    wf_live_worker_bind(w);
    wf_live_entry_fn enter = (wf_live_entry_fn)run->vm.entry_stub;
    __atomic_store_n(&w->iterations, 1, __ATOMIC_SEQ_CST); /* started */
    while (run->phase != WF_LIVE_STOPPING) {
        enter(&w->jt, &run->methods[0]);
        w->iterations++;
    }
    wf_live_worker_bind(NULL);
    wf_live_queue_deregister(w);
    return NULL;
}

static int start_worker(struct wf_live_run *run, int i, char *err, size_t errlen) {
    struct wf_live_worker *w = &run->workers[i];
    uint32_t cap = run->cfg.record_cap;
    w->index = i;
    w->vm = wf_live_vm_thread((uint32_t)i);
    w->last_cpu = -1;
    /* the handler's buffers (still zero: calloc) get their pages now, not in a handler */
    wf_live_prefault(w->snap_frames, sizeof w->snap_frames);
    wf_live_prefault(&w->walk, sizeof w->walk);
    w->snap = (struct wf_live_snapshot){.cap = WF_LIVE_SHADOW_MAX, .frames = w->snap_frames};
    w->intervals = calloc(cap ? cap : 1, sizeof *w->intervals);
    w->latencies = calloc(cap ? cap : 1, sizeof *w->latencies);
    w->stack = mmap(NULL, PAGE + WF_LIVE_STACK_SIZE, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (w->intervals == NULL || w->latencies == NULL || w->stack == MAP_FAILED ||
        wf_live_capture_init(w) != 0) {
        snprintf(err, errlen, "worker %d: out of memory", i);
        return -1;
    }
    mprotect(w->stack, PAGE, PROT_NONE);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, (char *)w->stack + PAGE, WF_LIVE_STACK_SIZE);
    int rc = pthread_create(&w->pthread, &attr, worker_main, w);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        snprintf(err, errlen, "worker %d: pthread_create: %s", i, strerror(rc));
        return -1;
    }
    return 0;
}

static int await_workers(struct wf_live_run *run, char *err, size_t errlen) {
    uint64_t deadline = wf_live_now_ns() + WORKER_START_TIMEOUT_NS;
    for (int i = 0; i < run->worker_count; i++) {
        while (__atomic_load_n(&run->workers[i].iterations, __ATOMIC_SEQ_CST) == 0) {
            if (wf_live_now_ns() > deadline) {
                snprintf(err, errlen, "worker %d did not start within 5 s", i);
                return -1;
            }
            usleep(1000);
        }
        if (run->workers[i].start_failed) {
            snprintf(err, errlen, "queue mode: ASGST_RegisterQueue failed on worker %d", i);
            return -1;
        }
    }
    return 0;
}

#define STOP_CHECK_NS 10000000ull /* how often a phase looks for a reason to end early */

/* The run has judged its max_walks walks (racy reads of the workers' counters: each is one
   aligned 64-bit word, and a late look only costs one more slice). */
static int walks_done(const struct wf_live_run *run) {
    if (run->cfg.max_walks == 0) return 0;
    uint64_t walked = 0;
    for (int i = 0; i < run->worker_count; i++)
        walked += __atomic_load_n(&run->workers[i].st.walked, __ATOMIC_RELAXED);
    return walked >= run->cfg.max_walks;
}

/* Whether the run ends now: a stop request (stop_on_first), or, sampling, its walks done. */
static int should_stop(const struct wf_live_run *run, int sampled) {
    return run->stop_requested || (sampled && walks_done(run));
}

/* Sleep for ns, in slices of STOP_CHECK_NS, until should_stop. */
static void phase_sleep(const struct wf_live_run *run, uint64_t ns, int sampled) {
    uint64_t end = wf_live_now_ns() + ns;
    for (uint64_t now = wf_live_now_ns(); now < end && !should_stop(run, sampled);
         now = wf_live_now_ns()) {
        uint64_t slice = end - now < STOP_CHECK_NS ? end - now : STOP_CHECK_NS;
        struct timespec ts = {(time_t)(slice / 1000000000ull), (long)(slice % 1000000000ull)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
    }
}

/* Run one phase of `ns`; per worker iterations, CPU and wall time add to its phase's stats. */
static void phase(struct wf_live_run *run, int which, uint64_t ns, int sampled) {
    int n = run->worker_count;
    uint64_t it0[WF_LIVE_MAX_WORKERS], cpu0[WF_LIVE_MAX_WORKERS];
    for (int i = 0; i < n; i++) {
        it0[i] = run->workers[i].iterations;
        cpu0[i] = cpu_ns(&run->workers[i]);
    }
    uint64_t t0 = wf_live_now_ns();
    run->phase = which;
    phase_sleep(run, ns, sampled);
    if (sampled) run->phase = WF_LIVE_BASELINE; /* handlers stop sampling first */
    uint64_t wall = wf_live_now_ns() - t0;
    for (int i = 0; i < n; i++) {
        struct wf_live_worker *w = &run->workers[i];
        uint64_t iters = w->iterations - it0[i], cpu = cpu_ns(w) - cpu0[i];
        if (sampled) {
            w->st.iterations_run += iters;
            w->st.cpu_ns_run += cpu;
            w->st.wall_ns_run += wall;
        } else {
            w->st.iterations_base += iters;
            w->st.cpu_ns_base += cpu;
            w->st.wall_ns_base += wall;
        }
    }
}

static void add_stats(wf_live_stats *sum, const wf_live_stats *s) {
    const uint64_t *src = (const uint64_t *)s;
    uint64_t *dst = (uint64_t *)sum;
    for (size_t k = 0; k < offsetof(wf_live_stats, queue_miscount) / sizeof(uint64_t); k++)
        dst[k] += src[k];
    if (sum->queue_miscount[0] == 0) {
        memcpy(sum->queue_miscount, s->queue_miscount, sizeof s->queue_miscount);
        memcpy(sum->queue_events, s->queue_events, sizeof s->queue_events);
    }
}

enum record_kind { RECORD_INTERVALS, RECORD_LATENCIES, RECORD_WAITS };

/* A worker's values and their count of record `kind` (waits: none outside queue mode). */
static const uint32_t *values_of(const struct wf_live_worker *w, enum record_kind kind,
                                 uint64_t *n) {
    *n = kind == RECORD_INTERVALS   ? w->interval_count
         : kind == RECORD_LATENCIES ? w->latency_count
         : w->waits != NULL         ? w->wait_count
                                    : 0;
    return kind == RECORD_INTERVALS   ? w->intervals
           : kind == RECORD_LATENCIES ? w->latencies
                                      : w->waits;
}

static uint32_t *concat(struct wf_live_run *run, enum record_kind kind, uint64_t *count) {
    uint64_t total = 0, n;
    for (int i = 0; i < run->worker_count; i++) {
        values_of(&run->workers[i], kind, &n);
        total += n;
    }
    uint32_t *all = malloc((total ? total : 1) * sizeof *all);
    uint64_t at = 0;
    for (int i = 0; all != NULL && i < run->worker_count; i++) {
        const uint32_t *values = values_of(&run->workers[i], kind, &n);
        if (n) memcpy(all + at, values, n * sizeof *all);
        at += n;
    }
    *count = all ? total : 0;
    return all;
}

static void collect_results(struct wf_live_run *run, wf_live_result *out) {
    memset(out, 0, sizeof *out);
    out->workers = run->worker_count;
    uint64_t ticks = wf_live_ticks() - run->tsc0, ns = wf_live_now_ns() - run->ns0;
    out->ns_per_tick = ticks ? (double)ns / (double)ticks : 0;
    for (int i = 0; i < run->worker_count; i++) {
        struct wf_live_worker *w = &run->workers[i];
        w->st.capture_ns = (uint64_t)((double)w->capture_ticks * out->ns_per_tick);
        /* every mode: the periods of its interval, so thread mode's sampler, which skips a
           worker that has not answered its last signal, counts the ticks it meant to send */
        w->st.requested = w->st.wall_ns_run / run->cfg.interval_ns;
        out->per_worker[i] = w->st;
        add_stats(&out->total, &w->st);
    }
    out->method_count = run->vm.method_count;
    const struct wf_vm *root = WF_VM;
    out->blob_count = root->blob_count;
    out->desc_count = root->desc_count;
    out->window_count = run->vm.window_count;
    out->code_bytes =
        root->blob_count ? root->blobs[root->blob_count - 1].end - WF_VM_CODE_HEAP : 0;
    out->intervals_ns = concat(run, RECORD_INTERVALS, &out->interval_count);
    out->latencies_ns = concat(run, RECORD_LATENCIES, &out->latency_count);
    out->waits_ns = concat(run, RECORD_WAITS, &out->wait_count);
}

static int check_config(const wf_live_config *c, char *err, size_t errlen) {
    if (c->mode < WF_LIVE_MODE_SIGNAL || c->mode > WF_LIVE_MODE_QUEUE)
        snprintf(err, errlen, "unknown live mode %d", c->mode);
    else if (c->threads < 1 || c->threads > WF_LIVE_MAX_WORKERS)
        snprintf(err, errlen, "threads %d outside 1..%d", c->threads, WF_LIVE_MAX_WORKERS);
    else if (c->interval_ns < 1000)
        snprintf(err, errlen, "interval %llu ns is below 1 us", (unsigned long long)c->interval_ns);
    else if (c->workload < WF_LIVE_WORKLOAD_MIXED || c->workload > WF_LIVE_WORKLOAD_RECURSIVE)
        snprintf(err, errlen, "unknown workload %d", c->workload);
    else if (c->workload == WF_LIVE_WORKLOAD_RECURSIVE && c->mode == WF_LIVE_MODE_QUEUE)
        snprintf(err, errlen, "the recursive workload runs in signal or thread mode");
    else if (c->source > WF_LIVE_SOURCE_SAMPLER)
        snprintf(err, errlen, "unknown signal source %u", c->source);
    else if (c->source == WF_LIVE_SOURCE_SAMPLER && c->mode == WF_LIVE_MODE_THREAD)
        snprintf(err, errlen, "thread mode has its own sampler thread: no source to choose");
    else return 0;
    return -1;
}

static int choose_walker(struct wf_live_run *run, const char *path, char *err, size_t errlen) {
    if (path == NULL) {
        run->api = wf_walker_reference();
    } else {
        if (wf_walker_load(path, &run->loaded, err, errlen) != 0) return -1;
        run->api = &run->loaded;
    }
    return run->cfg.mode == WF_LIVE_MODE_QUEUE ? wf_live_queue_bind(run, err, errlen) : 0;
}

/* The run's mode and signal source, as the sampler calls them (wf_live_mode_hooks). */
static void choose_hooks(struct wf_live_run *run) {
    struct wf_live_mode_hooks *hooks = &run->hooks;
    if (run->cfg.mode == WF_LIVE_MODE_THREAD) {
        hooks->handler = wf_live_wait_for_sampler;
        hooks->start = wf_live_sampler_thread_start;
    }
    if (run->cfg.mode == WF_LIVE_MODE_QUEUE) {
        hooks->sample = wf_live_queue_sample;
        hooks->safepoint = wf_live_queue_safepoint;
    }
    if (run->cfg.source == WF_LIVE_SOURCE_SAMPLER) hooks->start = wf_live_ticker_start;
}

static int start(struct wf_live_run *run, char *err, size_t errlen) {
    uint32_t n = wf_live_generate(run->methods, WF_LIVE_MAX_METHODS, (uint32_t)run->cfg.workload,
                                  run->cfg.seed);
    if (wf_live_vm_build(&run->vm, run->methods, n, (uint32_t)run->cfg.threads,
                         (uintptr_t)native_body, (uintptr_t)wf_live_safepoint, err, errlen) != 0)
        return -1;
    if (wf_live_sampler_install(err, errlen) != 0) return -1;
    run->workers = calloc((size_t)run->cfg.threads, sizeof *run->workers);
    if (run->workers == NULL) {
        snprintf(err, errlen, "out of memory for %d workers", run->cfg.threads);
        return -1;
    }
    run->phase = WF_LIVE_BASELINE;
    for (int i = 0; i < run->cfg.threads; i++) {
        if (start_worker(run, i, err, errlen) != 0) return -1;
        __atomic_store_n(&run->worker_count, i + 1, __ATOMIC_RELEASE); /* for the drain */
    }
    return await_workers(run, err, errlen);
}

static void stop(struct wf_live_run *run) {
    wf_live_sampler_stop(run);
    run->phase = WF_LIVE_STOPPING;
    for (int i = 0; i < run->worker_count; i++) pthread_join(run->workers[i].pthread, NULL);
    wf_live_vm_unpublish();
}

/* The unsampled and the sampled phase alternate in rounds of about PHASE_ROUND_NS, so what
   drifts during a run (CPU frequency, other load) weighs on both; each sampled round starts
   and stops the sampling (no timer runs through an unsampled round). */
static int alternate_phases(struct wf_live_run *run, char *err, size_t errlen) {
    const wf_live_config *c = &run->cfg;
    uint64_t rounds = c->baseline_ns ? c->duration_ns / PHASE_ROUND_NS : 0;
    if (rounds == 0) rounds = 1;
    for (uint64_t r = 0; r < rounds; r++) {
        if (c->baseline_ns) phase(run, WF_LIVE_BASELINE, c->baseline_ns / rounds, 0);
        for (int i = 0; i < run->worker_count; i++) run->workers[i].last_sample_ns = 0;
        run->phase = WF_LIVE_SAMPLING;
        if (wf_live_sampler_start(run, err, errlen) != 0) return -1;
        phase(run, WF_LIVE_SAMPLING, c->duration_ns / rounds, 1);
        wf_live_sampler_stop(run);
        if (should_stop(run, 1)) break;
    }
    return 0;
}

int wf_live_run(const wf_live_config *cfg, const char *walker, wf_live_result *out, char *err,
                size_t errlen) {
    struct wf_live_run *run = &wf_live_current_run;
    if (run_done) {
        snprintf(err, errlen, "a live run already ran in this process (one per process)");
        return -1;
    }
    if (check_config(cfg, err, errlen) != 0) return -1;
    run_done = 1;
    run->cfg = *cfg;
    run->tsc0 = wf_live_ticks();
    run->ns0 = wf_live_now_ns();
    if (run->cfg.record_cap == 0) run->cfg.record_cap = 1u << 20;
    if (choose_walker(run, walker, err, errlen) != 0) return -1;
    choose_hooks(run);
    int rc = start(run, err, errlen);
    if (rc == 0) rc = alternate_phases(run, err, errlen);
    stop(run);
    if (rc == 0) collect_results(run, out);
    return rc;
}

void wf_live_progress_read(wf_live_progress *out) {
    const struct wf_live_run *run = &wf_live_current_run;
    memset(out, 0, sizeof *out);
    /* worker_count is published (release) after each worker's slot is set up */
    int n = __atomic_load_n(&run->worker_count, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        const wf_live_stats *s = &run->workers[i].st;
        out->delivered += __atomic_load_n(&s->delivered, __ATOMIC_RELAXED);
        out->walked += __atomic_load_n(&s->walked, __ATOMIC_RELAXED);
        out->exact += __atomic_load_n(&s->exact, __ATOMIC_RELAXED);
        out->invalid += __atomic_load_n(&s->invalid, __ATOMIC_RELAXED);
        out->faults += __atomic_load_n(&s->faults, __ATOMIC_RELAXED);
        out->hangs += __atomic_load_n(&s->hangs, __ATOMIC_RELAXED);
    }
    out->sampling = run->phase == WF_LIVE_SAMPLING;
}

static const char *KIND[] = {"interpreted", "compiled", "native"};

const char *wf_live_method_name(uint32_t i) {
    const struct wf_live_run *run = &wf_live_current_run;
    if (i >= run->vm.method_count) return NULL;
    const struct wf_vm_method *m = (const struct wf_vm_method *)run->methods[i].handle;
    return m->name;
}

const char *wf_live_method_kind(uint32_t i) {
    const struct wf_live_run *run = &wf_live_current_run;
    return i < run->vm.method_count ? KIND[run->methods[i].kind] : NULL;
}
