/* live_capture.c — failed samples of a live stress run captured in the handler, counted per
 * signature key, and handed to the drain (wf_live_capture.h). The encoding of a capture as a
 * case is live_case.c.
 *
 * Everything here but the drain runs in a SIGPROF handler (or in thread mode's sampler, or at
 * a queue-mode safepoint): no malloc, no lock, no stdio, only the worker's preallocated ring.
 * A capture copies only the used part of the stack (sp to the stack top, bounded), and only
 * when it is kept: a sample that walks right costs nothing here. A stack deeper than the ring
 * entry's bound goes whole into the worker's one deep buffer instead (so a sample past the
 * depth limit replays); while an entry holds it, a deeper failed sample is not captured at
 * all, since a case with a gap where its frames were would not replay.
 */
#include <stdlib.h>
#include <string.h>

#include "live_case.h"
#include "wf_arch.h"
#include "wf_live_worker.h"
#include "wf_run.h"

void wf_live_prefault(void *p, size_t n) {
    volatile uint8_t *bytes = p; /* volatile: a compiler may drop a memset */
    for (size_t i = 0; i < n; i += 4096) bytes[i] = 0;
}

int wf_live_capture_init(struct wf_live_worker *w) {
    w->queue_current = -1;
    if (!wf_live_current_run.cfg.capture) return 0;
    w->ring = calloc(WF_LIVE_CAPTURE_RING, sizeof *w->ring);
    if (w->ring == NULL) return -1;
    wf_live_prefault(w->ring, WF_LIVE_CAPTURE_RING * sizeof *w->ring);
    /* the one workload whose stacks pass WF_LIVE_CAPTURE_STACK (the others' stay under 20 KiB) */
    if (wf_live_current_run.cfg.workload != WF_LIVE_WORKLOAD_RECURSIVE) return 0;
    for (int k = 0; k < WF_LIVE_DEEP_BUFFERS; k++) {
        if ((w->deep_stack[k] = malloc(WF_LIVE_DEEP_STACK)) == NULL) return -1;
        wf_live_prefault(w->deep_stack[k], WF_LIVE_DEEP_STACK);
    }
    return 0;
}

/* Copy words of a thread's stack: other functions' frames, which ASan would take for stack
   redzones of theirs (as it would a walker's reads), so it does not instrument this. */
__attribute__((no_sanitize("address"))) static void copy_stack(uint8_t *to, uint64_t from,
                                                               uint32_t bytes) {
    const volatile uint64_t *src = (const volatile uint64_t *)(uintptr_t)from;
    uint64_t *dst = (uint64_t *)(void *)to;
    for (uint32_t i = 0; i < bytes / 8; i++) dst[i] = src[i];
}

void wf_live_capture_c_top(struct wf_live_worker *w, uint64_t base) {
    const struct wf_vm_thread *t = w->vm;
    if (w->ring == NULL || base < t->stack_lo || base >= t->stack_hi) return;
    w->c_top = malloc(t->stack_hi - base);
    if (w->c_top == NULL) return; /* captures copy up to the top then */
    copy_stack(w->c_top, base, (uint32_t)(t->stack_hi - base));
    w->c_top_bytes = (uint32_t)(t->stack_hi - base);
    w->c_base = base;
}

/* ---- in the handler ---------------------------------------------------------------------- */

static uint64_t on_stack(uint64_t v, const struct wf_vm_thread *t) {
    return v < t->stack_lo ? t->stack_lo : v > t->stack_hi ? t->stack_hi : v;
}

/* The stack bytes from `from` (aligned) up to the C top a capture would copy. */
static uint64_t used_from(const struct wf_live_worker *w, uint64_t from) {
    uint64_t base = on_stack(from & ~(uint64_t)7, w->vm);
    return (w->c_base > base ? w->c_base : w->vm->stack_hi) - base;
}

/* d's registers and the copy of at most `bound` stack bytes from `from` up into d's own
   stack[] (deep 0) or deep buffer deep - 1. */
static void capture_into(struct wf_live_worker *w, struct wf_live_stack_capture *d, uint32_t deep,
                         uint64_t bound, uint64_t pc, uint64_t sp, uint64_t fp, uint64_t from) {
    uint8_t *to = deep > 0 ? w->deep_stack[deep - 1] : d->stack;
    const struct wf_vm_thread *t = w->vm;
    uint64_t base = on_stack(from & ~(uint64_t)7, t);
    uint64_t used = used_from(w, from);
    uint32_t bytes = used > bound ? (uint32_t)bound : (uint32_t)used;
    d->deep = deep;
    d->r = (struct wf_live_regs){.pc = pc,
                                 .sp = sp,
                                 .fp = fp,
                                 .state = t->state,
                                 .flags = t->flags,
                                 .anchor_sp = t->anchor.sp,
                                 .anchor_fp = t->anchor.fp,
                                 .anchor_pc = t->anchor.pc,
                                 .stack_lo = t->stack_lo,
                                 .stack_hi = t->stack_hi,
                                 .base = base,
                                 .bytes = bytes,
                                 .dropped = (uint32_t)(used - bytes)};
    copy_stack(to, base, bytes);
    w->st.capture_bytes += bytes;
}

void wf_live_capture_stack(struct wf_live_worker *w, struct wf_live_stack_capture *d, uint64_t pc,
                           uint64_t sp, uint64_t fp, uint64_t from) {
    capture_into(w, d, 0, WF_LIVE_CAPTURE_STACK, pc, sp, fp, from);
}

enum fill_result { FILLED, BUSY, ENOUGH }; /* ENOUGH: the key has its deep captures */

/* The thread's stack from sp up into ring entry d: in d when it fits, else whole into a free
   deep buffer of the worker (the case's stack holds the C top as well, so that much less of
   it); BUSY when it does not fit and every deep buffer is held by an entry the drain has not
   laid out, ENOUGH when the sample's key (captured so far: `captured`) has had its deep
   captures. */
static enum fill_result capture_signal(struct wf_live_worker *w, struct wf_live_stack_capture *d,
                                       const struct wf_live_sample_info *at, uint32_t captured) {
    if (used_from(w, at->sp) <= WF_LIVE_CAPTURE_STACK || w->deep_stack[0] == NULL) {
        wf_live_capture_stack(w, d, at->pc, at->sp, at->fp, at->sp);
        return FILLED;
    }
    if (captured >= WF_LIVE_DEEP_CAPTURES_PER_KEY) return ENOUGH;
    uint32_t k = 0;
    while (k < WF_LIVE_DEEP_BUFFERS && __atomic_load_n(&w->deep_busy[k], __ATOMIC_ACQUIRE)) k++;
    if (k == WF_LIVE_DEEP_BUFFERS) return BUSY;
    w->deep_busy[k] = 1;
    uint64_t bound = WF_LIVE_DEEP_STACK - (w->c_top != NULL ? w->c_top_bytes : 0);
    capture_into(w, d, k + 1, bound, at->pc, at->sp, at->fp, at->sp);
    return FILLED;
}

#define HIST_BUCKETS 96 /* wf_live_stats.capture_hist: 4 per power of two, up to 2^24 ticks */

uint32_t wf_live_capture_bucket(uint64_t ticks) {
    if (ticks < 4) return (uint32_t)ticks;
    uint32_t e = 63 - (uint32_t)__builtin_clzll(ticks); /* 2^e <= ticks < 2^(e+1) */
    uint32_t b = 4 * (e - 1) + (uint32_t)((ticks >> (e - 2)) & 3);
    return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

uint64_t wf_live_capture_bucket_end(uint32_t b) {
    if (b < 4) return b + 1;
    uint32_t e = b / 4 + 1, m = b % 4;
    return (uint64_t)(4 + m + 1) << (e - 2);
}

void wf_live_capture_timed(struct wf_live_worker *w, uint64_t ticks) {
    w->st.capture_copies++;
    w->capture_ticks += ticks;
    w->st.capture_hist[wf_live_capture_bucket(ticks)]++;
}

static int32_t frame_method(uintptr_t handle) {
    if (handle == 0) return -1;
    const struct wf_vm_method *m = wf_vm_method_at(handle);
    return m ? (int32_t)m->index : -2;
}

/* The kind of the shape's last frame: the frame at the first difference, or the last one. */
static uint32_t shape_tail(const struct wf_live_walk *walk, int first_diff) {
    if (walk->count == 0) return 0;
    uint32_t upto = first_diff >= 0 && (uint32_t)first_diff < walk->count ? (uint32_t)first_diff
                                                                          : walk->count - 1;
    const ASGST_Frame *f = &walk->frames[upto];
    return wf_shape_kind_of(f->type, f->comp_level);
}

/* The worker's counter of this key (NULL when its table is full); counts the sample. */
static struct wf_live_sigkey *count_key(struct wf_live_worker *w, int cls, uint32_t tail,
                                        uint64_t fault_pc, uint64_t t) {
    uint32_t n = w->key_count;
    struct wf_live_sigkey *k = NULL;
    for (uint32_t i = 0; i < n && k == NULL; i++)
        if (w->keys[i].cls == cls && w->keys[i].tail == tail && w->keys[i].fault_pc == fault_pc)
            k = &w->keys[i];
    if (k == NULL) {
        if (n == WF_LIVE_SIGNATURE_KEYS) return NULL;
        k = &w->keys[n];
        *k = (struct wf_live_sigkey){.cls = cls, .tail = tail, .fault_pc = fault_pc, .first_ns = t};
        __atomic_store_n(&w->key_count, n + 1, __ATOMIC_RELEASE); /* the entry first */
    }
    k->count++;
    k->last_ns = t;
    return k;
}

static void copy_walk(struct wf_live_capture *c, const struct wf_live_walk *walk) {
    c->run_result = walk->run_result;
    c->end = walk->end;
    c->state_after = walk->state_after;
    c->walked_count = walk->count;
    for (uint32_t k = 0; k < walk->count; k++) {
        const ASGST_Frame *f = &walk->frames[k];
        c->walked[k] = (wf_live_frame){.method = frame_method((uintptr_t)f->method),
                                       .bci = f->bci,
                                       .type = (int8_t)f->type,
                                       .level = (int8_t)f->comp_level};
    }
}

/* The expected trace, innermost first (the snapshot is outermost first). */
static void copy_expected(struct wf_live_capture *c, const struct wf_live_snapshot *s) {
    c->expected_count = s != NULL ? s->depth : 0;
    c->expected_end = c->expected_count > 0 ? s->end : ASGST_NO_TOP_JAVA_FRAME;
    for (uint32_t k = 0; k < c->expected_count; k++) {
        const struct wf_live_shadow *e = &s->frames[s->depth - 1 - k];
        c->expected[k] = (wf_live_frame){.method = (int32_t)e->method,
                                         .bci = e->bci,
                                         .type = (int8_t)(e->type & 0xff),
                                         .level = (int8_t)(e->type >> 8)};
    }
}

static void copy_signal(struct wf_live_stack_capture *d, const struct wf_live_stack_capture *s) {
    d->r = s->r;
    d->deep = 0; /* a queue slot's copy is bounded */
    __builtin_memcpy(d->stack, s->stack, s->r.bytes);
}

/* Fill ring entry c for a sample of a key captured `captured` times so far; the stack copies
   are what costs. c is unused unless FILLED (capture_signal). */
static enum fill_result fill(struct wf_live_worker *w, struct wf_live_capture *c,
                             const struct wf_live_sample_info *at, uint32_t captured, int cls,
                             int first_diff, const wf_fault *fault) {
    if (at->signal != NULL) {
        copy_signal(&c->signal, at->signal);
    } else {
        enum fill_result r = capture_signal(w, &c->signal, at, captured);
        if (r != FILLED) return r;
    }
    c->cls = cls;
    c->first_diff = first_diff;
    c->window = at->window;
    c->source = at->source;
    c->t_ns = at->t0;
    c->faulted = fault != NULL;
    if (fault != NULL) c->fault = *fault;
    copy_walk(c, &w->walk);
    copy_expected(c, at->snap);
    if (at->source == WF_EXPECTED_ELEMENT) { /* the stack now, from the safepoint stub up */
        c->poll_sp = w->poll_sp;
        c->poll_fp = w->poll_fp;
        c->poll_pc = w->poll_pc;
        wf_live_capture_stack(w, &c->safepoint, w->poll_pc, w->poll_sp, w->poll_fp,
                              w->vm->anchor.sp);
    }
    return FILLED;
}

void wf_live_capture_keep(struct wf_live_worker *w, const struct wf_live_sample_info *at, int cls,
                          int first_diff, const wf_fault *fault) {
    struct wf_live_run *run = &wf_live_current_run;
    if (run->cfg.stop_on_first) run->stop_requested = 1;
    if (w->capturing) { /* a handler inside a capture of this thread */
        w->st.capture_dropped++;
        return;
    }
    w->capturing = 1;
    wf_arch_compiler_barrier();
    uint64_t fault_pc = fault != NULL ? fault->pc : 0;
    struct wf_live_sigkey *key =
        count_key(w, cls, shape_tail(&w->walk, first_diff), fault_pc, at->t0);
    /* source 0: no sample behind it (a fault in a safepoint outside an element's walk) */
    if (run->cfg.capture && at->source != 0 && key != NULL &&
        key->captured < WF_LIVE_CAPTURES_PER_KEY) {
        uint32_t head = w->ring_head;
        if (head - __atomic_load_n(&w->ring_tail, __ATOMIC_ACQUIRE) >= WF_LIVE_CAPTURE_RING) {
            w->st.capture_dropped++;
        } else {
            uint64_t t0 = wf_live_ticks();
            struct wf_live_capture *c = &w->ring[head % WF_LIVE_CAPTURE_RING];
            enum fill_result r = fill(w, c, at, key->captured, cls, first_diff, fault);
            if (r == FILLED) {
                wf_live_capture_timed(w, wf_live_ticks() - t0);
                key->captured++;
                w->st.captured++;
                __atomic_store_n(&w->ring_head, head + 1, __ATOMIC_RELEASE);
            } else if (r == BUSY) {
                w->st.capture_dropped++;
            }
        }
    } else if (key == NULL) {
        w->st.capture_dropped++;
    }
    wf_arch_compiler_barrier();
    w->capturing = 0;
}

/* ---- the drain --------------------------------------------------------------------------- */

static uint32_t next_worker; /* round robin, so one flooding worker does not starve others */
/* The capture whose image the encoder holds: a capture that stays (out too small) is not laid
   out again, since its deep buffer may hold another capture's stack by then. */
static const struct wf_live_capture *laid_out;

static int worker_count(void) {
    return __atomic_load_n(&wf_live_current_run.worker_count, __ATOMIC_ACQUIRE);
}

int64_t wf_live_drain(wf_live_finding *info, uint8_t *out, size_t cap) {
    struct wf_live_run *run = &wf_live_current_run;
    int n = worker_count();
    for (int k = 0; k < n; k++) {
        struct wf_live_worker *w = &run->workers[(next_worker + (uint32_t)k) % (uint32_t)n];
        if (w->ring == NULL) continue;
        uint32_t tail = w->ring_tail;
        if (tail == __atomic_load_n(&w->ring_head, __ATOMIC_ACQUIRE)) continue;
        const struct wf_live_capture *c = &w->ring[tail % WF_LIVE_CAPTURE_RING];
        if (c != laid_out) {
            wf_live_case_lay_out(c, w);
            laid_out = c;
            /* the next deep sample may be captured while this one is encoded */
            if (c->signal.deep > 0)
                __atomic_store_n(&w->deep_busy[c->signal.deep - 1], 0, __ATOMIC_RELEASE);
        }
        int64_t len = wf_live_case_encode(c, run->cfg.mode, w, info, out, cap);
        if (len < 0) return len; /* out too small: the capture stays */
        laid_out = NULL;
        __atomic_store_n(&w->ring_tail, tail + 1, __ATOMIC_RELEASE);
        next_worker = (next_worker + (uint32_t)k + 1) % (uint32_t)n;
        return info->status == WF_LIVE_CASE_OK ? len : 1;
    }
    return 0;
}

static void merge(wf_live_signature *s, const struct wf_live_sigkey *k) {
    uint64_t count = k->count, first = k->first_ns, last = k->last_ns;
    if (s->count == 0 || first < s->first_ns) s->first_ns = first;
    if (last > s->last_ns) s->last_ns = last;
    s->count += count;
}

/* The slot of key k in out[0..n), or n if it has none. */
static uint32_t slot_of(const wf_live_signature *out, uint32_t n, const struct wf_live_sigkey *k) {
    uint32_t s = 0;
    while (s < n &&
           !(out[s].cls == k->cls && out[s].tail == k->tail && out[s].fault_pc == k->fault_pc))
        s++;
    return s;
}

uint32_t wf_live_signatures(wf_live_signature *out, uint32_t cap) {
    struct wf_live_run *run = &wf_live_current_run;
    uint32_t filled = 0, dropped = 0;
    for (int i = 0; i < worker_count(); i++) {
        const struct wf_live_worker *w = &run->workers[i];
        uint32_t keys = __atomic_load_n(&w->key_count, __ATOMIC_ACQUIRE);
        for (uint32_t j = 0; j < keys; j++) {
            const struct wf_live_sigkey *k = &w->keys[j];
            uint32_t s = slot_of(out, filled, k);
            if (s == filled && filled == cap) {
                dropped++; /* counted in the total only */
                continue;
            }
            if (s == filled)
                out[filled++] =
                    (wf_live_signature){.cls = k->cls, .tail = k->tail, .fault_pc = k->fault_pc};
            merge(&out[s], k);
        }
    }
    return filled + dropped;
}

int wf_live_stopped_early(void) { return wf_live_current_run.stop_requested; }

void wf_live_request_stop(void) { wf_live_current_run.stop_requested = 1; }
