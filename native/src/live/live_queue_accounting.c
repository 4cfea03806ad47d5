/* live_queue_accounting.c — queue mode checks the walker's queue accounting on live threads:
 * what ASGST_GetQueueSizeInfo says against a model the worker keeps of its own calls
 * (asgst.h queue block):
 *
 *   attempts  every Enqueue on a live queue since the last safepoint's end, whatever its result
 *   size      elements taken and not processed yet; a safepoint processes them all
 *   capacity  as registered, then as the last ResizeQueue asked, from the end of the next
 *             safepoint on
 *
 * The model is anchored to the calls: the walker's figures at one look (the base) and how many
 * Enqueue calls had been made then (`calls`, of which `taken` returned ASGST_JAVA_TRACE). Later
 * the figures must be the base plus what the calls since did: one attempt each, one element
 * per taken one. Only handlers bump the counts, and the worker never runs inside a handler, so
 * a handler sees the model whole: it counts its Enqueue and compares right away (handlers of
 * SIGPROF do not nest). The worker looks before each safepoint and after it, and every
 * RESIZE_EVERY-th safepoint asks for another capacity (down to 2, so a queue fills up and the
 * full-queue path is counted too). Races handled without blocking signals:
 *   - a handler may run while the worker reads GetQueueSizeInfo (two fields) and the counts:
 *     the worker reads `calls` before and after, and looks again if it moved;
 *   - from just before its look before a safepoint to the end of its look after it, the worker
 *     raises `in_safepoint`: handlers count and do not compare, and only the worker writes the
 *     base then, so no handler compares against a base half written;
 *   - Enqueue calls made while the worker is inside wf_queue_safepoint land before the
 *     walker's safepoint began (taken, then processed by it), during it (refused), or after
 *     its end restarted attempts at 0 (counted, and taken or not): after the safepoint the
 *     walker's figures must lie within what the calls since the look before allow;
 *   - calls between the look after the safepoint and the lowering of `in_safepoint` came after
 *     the walker's safepoint ended, so they moved the figures like any call: the new base is
 *     anchored at the counts that look read, and the next comparison counts them in. A model
 *     that took the look's figures as they stood would lack those calls, and a handler landing
 *     between the lowering and any later fix-up would compare against it; a worker starved by
 *     back-to-back signals crawls through that stretch a few instructions per signal.
 * A mismatch is counted (queue_miscounts) and the base takes the walker's figures, so one
 * miscount is not reported again at every later check; so does a fault (of an Enqueue since the
 * base, or of the safepoint), which leaves the figures unknown. The last WF_LIVE_QUEUE_EVENTS
 * events (each Enqueue counted, each look, each safepoint call) are kept in a ring, copied into
 * the stats at the first miscount.
 */
#include <string.h>

#include "wf_live_worker.h"
#include "wf_queue.h"

#define RESIZE_EVERY 16
/* Capacities asked for in turn, as divisors of the registered one (at 32: 8, 2, 32, 4); 0 asks
   for 2, which fills up at any rate, so the full-queue path is counted too. */
static const int32_t RESIZE_DIVISOR[] = {4, 0, 1, 8};

#define fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)

_Static_assert(sizeof((wf_live_stats *)0)->queue_events ==
                   sizeof((struct wf_live_queue_model *)0)->events,
               "the stats hold the whole event ring");

/* The call counts a look or a comparison includes. */
struct counts {
    uint32_t calls, taken, faults;
};

static ASGST_QueueSizeInfo size_info(const struct wf_live_worker *w) {
    return wf_live_current_run.queue.size_info(w->queue);
}

static struct counts counts_now(const struct wf_live_queue_model *m) {
    return (struct counts){m->calls, m->taken, m->faults};
}

/* What the figures must be once the calls `c` were made. */
static ASGST_QueueSizeInfo expected(const struct wf_live_queue_model *m, struct counts c) {
    return (ASGST_QueueSizeInfo){.size = m->size + (int32_t)(c.taken - m->base_taken),
                                 .capacity = m->capacity,
                                 .attempts = m->attempts + (int32_t)(c.calls - m->base_calls)};
}

static int same(ASGST_QueueSizeInfo a, ASGST_QueueSizeInfo b) {
    return a.size == b.size && a.capacity == b.capacity && a.attempts == b.attempts;
}

enum where { AT_ENQUEUE = 1, BEFORE_SAFEPOINT, AFTER_SAFEPOINT };

/* One event into the ring. The slot is claimed with one atomic add, so a handler that
   interrupts the worker's event takes the next slot (the worker's may be half written when
   that handler copies the ring). */
static void note(struct wf_live_worker *w, int kind, int64_t rc, ASGST_QueueSizeInfo got,
                 struct counts c) {
    struct wf_live_queue_model *m = &w->qm;
    uint32_t k = __atomic_fetch_add(&m->event_next, 1, __ATOMIC_RELAXED) % WF_LIVE_QUEUE_EVENTS;
    ASGST_QueueSizeInfo model = expected(m, c);
    int64_t fields[WF_LIVE_QUEUE_EVENT_FIELDS] = {
        kind,           m->in_safepoint, rc,         got.size,
        got.capacity,   got.attempts,    model.size, model.capacity,
        model.attempts, c.calls,         c.taken,    (int64_t)wf_live_ticks()};
    memcpy(m->events[k], fields, sizeof fields);
}

/* The first miscount's figures go into the stats (wf_live.h queue_miscount, queue_events), so
   a report shows what disagreed, by how much and what led there. */
static void record_miscount(struct wf_live_worker *w, enum where at, ASGST_QueueSizeInfo got,
                            struct counts c) {
    const struct wf_live_queue_model *m = &w->qm;
    int64_t *r = w->st.queue_miscount;
    if (r[0] != 0) return;
    wf_queue_counters q = {.safepoints = UINT64_MAX, .other = UINT64_MAX, .full = UINT64_MAX};
    if (wf_live_current_run.api->handle == NULL) wf_queue_get_counters(w->queue, &q);
    ASGST_QueueSizeInfo model = expected(m, c);
    int64_t fields[16] = {at,
                          got.size,
                          got.capacity,
                          got.attempts,
                          model.size,
                          model.capacity,
                          model.attempts,
                          m->pending,
                          (int32_t)(c.calls - m->start_calls),
                          (int32_t)(c.taken - m->start_taken),
                          m->safepoints,
                          c.calls,
                          m->last_result,
                          (int64_t)q.safepoints,
                          (int64_t)q.other,
                          (int64_t)q.full};
    memcpy(r, fields, sizeof fields);
    uint32_t next = m->event_next;
    int64_t now = (int64_t)wf_live_ticks();
    for (uint32_t i = 0; i < WF_LIVE_QUEUE_EVENTS; i++) {
        int64_t *e = w->st.queue_events[i];
        memcpy(e, m->events[(next + i) % WF_LIVE_QUEUE_EVENTS], sizeof m->events[0]);
        if (e[0] != 0) e[WF_LIVE_QUEUE_EVENT_FIELDS - 1] = now - e[WF_LIVE_QUEUE_EVENT_FIELDS - 1];
    }
}

/* The walker's figures `got` become the base, anchored at the counts they include. */
static void rebase(struct wf_live_queue_model *m, ASGST_QueueSizeInfo got, struct counts c) {
    m->size = got.size;
    m->capacity = got.capacity;
    m->attempts = got.attempts;
    m->base_calls = c.calls;
    m->base_taken = c.taken;
    m->base_faults = c.faults;
}

/* Count a comparison of the walker's figures `got` (which include the calls `c`) with the
   model; after a mismatch, or when they are unknown (a fault since the base, or `unknown`),
   the base takes them. */
static void judge(struct wf_live_worker *w, enum where at, ASGST_QueueSizeInfo got, struct counts c,
                  int agrees, int unknown) {
    struct wf_live_queue_model *m = &w->qm;
    w->st.queue_checks++;
    unknown |= c.faults != m->base_faults;
    if (agrees && !unknown) return;
    if (!unknown) {
        w->st.queue_miscounts++;
        record_miscount(w, at, got, c);
    }
    rebase(m, got, c);
}

void wf_live_queue_model_start(struct wf_live_worker *w, int32_t capacity) {
    w->qm = (struct wf_live_queue_model){.capacity = capacity, .pending = -1};
}

void wf_live_queue_count_enqueue(struct wf_live_worker *w, int faulted, intptr_t rc) {
    struct wf_live_queue_model *m = &w->qm;
    m->calls++;
    m->taken += !faulted && rc == ASGST_JAVA_TRACE;
    m->faults += faulted != 0;
    struct counts c = counts_now(m);
    ASGST_QueueSizeInfo got = size_info(w);
    note(w, WF_LIVE_QUEUE_EVENT_ENQUEUE, faulted ? INT32_MIN : rc, got, c);
    if (m->in_safepoint || faulted) return; /* the worker's look, or the next one, judges */
    judge(w, AT_ENQUEUE, got, c, same(got, expected(m, c)), 0);
}

/* GetQueueSizeInfo and the counts it includes: no handler's Enqueue between the two. */
static ASGST_QueueSizeInfo look(struct wf_live_worker *w, struct counts *c) {
    const struct wf_live_queue_model *m = &w->qm;
    for (;;) {
        uint32_t before = m->calls;
        fence();
        *c = counts_now(m);
        ASGST_QueueSizeInfo got = size_info(w);
        fence();
        if (m->calls == before) return got;
    }
}

void wf_live_queue_check_before(struct wf_live_worker *w) {
    struct wf_live_queue_model *m = &w->qm;
    m->in_safepoint = 1; /* from here on the base is the worker's */
    fence();
    struct counts c;
    ASGST_QueueSizeInfo got = look(w, &c);
    note(w, WF_LIVE_QUEUE_EVENT_BEFORE, 0, got, c);
    judge(w, BEFORE_SAFEPOINT, got, c, same(got, expected(m, c)), 0);
    m->start_calls = c.calls;
    m->start_taken = c.taken;
    if (++m->safepoints % RESIZE_EVERY == 0) {
        int32_t divisor = RESIZE_DIVISOR[(m->safepoints / RESIZE_EVERY) % 4];
        int32_t to = divisor ? wf_live_current_run.queue_capacity / divisor : 2;
        wf_live_current_run.queue.resize(w->queue, to);
        m->pending = to;
        w->st.queue_resizes++;
    }
}

void wf_live_queue_note_safepoint(struct wf_live_worker *w, int faulted, intptr_t processed) {
    struct wf_live_queue_model *m = &w->qm;
    m->last_result = faulted ? INT32_MIN : (int32_t)processed;
    struct counts c;
    ASGST_QueueSizeInfo got = look(w, &c);
    note(w, WF_LIVE_QUEUE_EVENT_SAFEPOINT, m->last_result, got, c);
}

/* After a safepoint: every element it found was processed and the pending capacity applies;
   what is left was taken after its end, and each such element is one of the attempts counted
   since then, which are some of the calls made since the look before it. */
static int agrees_after(ASGST_QueueSizeInfo got, const struct wf_live_queue_model *m,
                        struct counts c) {
    int32_t capacity = m->pending >= 0 ? m->pending : m->capacity;
    int32_t calls = (int32_t)(c.calls - m->start_calls);
    int32_t taken = (int32_t)(c.taken - m->start_taken);
    return got.capacity == capacity && got.size >= 0 && got.size <= taken &&
           got.attempts >= got.size && got.attempts <= calls;
}

void wf_live_queue_check_after(struct wf_live_worker *w, int faulted) {
    struct wf_live_queue_model *m = &w->qm;
    struct counts c;
    ASGST_QueueSizeInfo got = look(w, &c);
    note(w, WF_LIVE_QUEUE_EVENT_AFTER, 0, got, c);
    judge(w, AFTER_SAFEPOINT, got, c, agrees_after(got, m, c), faulted);
    rebase(m, got, c); /* the model after the safepoint */
    m->pending = -1;
    fence();
    m->in_safepoint = 0; /* calls since the look count in from the base */
}
