/* live_queue_accounting.c — queue mode checks the walker's queue accounting on live threads:
 * what ASGST_GetQueueSizeInfo says against a model the worker keeps of its own calls
 * (asgst.h queue block):
 *
 *   attempts  every Enqueue on a live queue since the last safepoint's end, whatever its result
 *   size      elements taken and not processed yet; a safepoint processes them all
 *   capacity  as registered, then as the last ResizeQueue asked, from the end of the next
 *             safepoint on
 *
 * The handler counts each Enqueue it makes and compares right away (handlers of SIGPROF do
 * not nest). The worker compares before each safepoint and after it, and every
 * RESIZE_EVERY-th safepoint asks for another capacity (down to 2, so a queue fills up and
 * the full-queue path is counted too). Two races are handled without blocking signals:
 *   - a handler may run between the worker's GetQueueSizeInfo and its comparison: the
 *     worker reads `calls` (bumped by every handler's Enqueue) before and after, and
 *     compares again if it moved;
 *   - Enqueue calls made while the worker is inside wf_queue_safepoint land before the
 *     walker's safepoint began (taken, then processed by it), during it (refused), or after
 *     its end restarted attempts at 0 (counted, and taken or not): the handler counts them
 *     apart (attempts_inside, enqueued_inside), and after the safepoint the walker's figures
 *     must lie within what those counts allow.
 * A mismatch is counted (queue_miscounts) and the model takes the walker's figures, so one
 * miscount is not reported again at every later check.
 */
#include <string.h>

#include "wf_live_worker.h"
#include "wf_queue.h"

#define RESIZE_EVERY 16
static const int32_t RESIZE_TO[] = {8, 2, 32, 4};

#define fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)

static ASGST_QueueSizeInfo size_info(const struct wf_live_worker *w) {
    return wf_live_current_run.queue.size_info(w->queue);
}

static int same(ASGST_QueueSizeInfo got, const struct wf_live_queue_model *m) {
    return got.size == m->size && got.capacity == m->capacity && got.attempts == m->attempts;
}

enum where { AT_ENQUEUE = 1, BEFORE_SAFEPOINT, AFTER_SAFEPOINT };

/* The first miscount's figures go into the stats (wf_live.h queue_miscount), so a report
   shows what disagreed and by how much. */
static void record_miscount(struct wf_live_worker *w, enum where at, ASGST_QueueSizeInfo got) {
    const struct wf_live_queue_model *m = &w->qm;
    int64_t *r = w->st.queue_miscount;
    if (r[0] != 0) return;
    wf_queue_counters c = {.safepoints = UINT64_MAX, .other = UINT64_MAX, .full = UINT64_MAX};
    if (wf_live_current_run.api->handle == NULL) wf_queue_get_counters(w->queue, &c);
    int64_t fields[16] = {at,
                          got.size,
                          got.capacity,
                          got.attempts,
                          m->size,
                          m->capacity,
                          m->attempts,
                          m->pending,
                          m->attempts_inside,
                          m->enqueued_inside,
                          m->safepoints,
                          m->calls,
                          m->last_result,
                          (int64_t)c.safepoints,
                          (int64_t)c.other,
                          (int64_t)c.full};
    memcpy(r, fields, sizeof fields);
}

/* Count a comparison of the walker's figures with the model; after a mismatch (or a fault,
   which leaves them unknown) the model takes the walker's figures. */
static void judge(struct wf_live_worker *w, enum where at, ASGST_QueueSizeInfo got, int agrees) {
    struct wf_live_queue_model *m = &w->qm;
    w->st.queue_checks++;
    if (agrees && !m->resync) return;
    if (!agrees && !m->resync) {
        w->st.queue_miscounts++;
        record_miscount(w, at, got);
    }
    m->resync = 0;
    m->size = got.size;
    m->capacity = got.capacity;
    m->attempts = got.attempts;
}

void wf_live_queue_model_start(struct wf_live_worker *w, int32_t capacity) {
    w->qm = (struct wf_live_queue_model){.capacity = capacity, .pending = -1};
}

void wf_live_queue_count_enqueue(struct wf_live_worker *w, int faulted, intptr_t rc) {
    struct wf_live_queue_model *m = &w->qm;
    m->calls++;
    if (m->in_safepoint) { /* judged after the safepoint */
        m->attempts_inside++;
        m->enqueued_inside += !faulted && rc == ASGST_JAVA_TRACE;
        m->resync |= faulted;
        return;
    }
    if (faulted) {
        m->resync = 1;
        return;
    }
    m->attempts++;
    m->size += rc == ASGST_JAVA_TRACE;
    ASGST_QueueSizeInfo got = size_info(w);
    judge(w, AT_ENQUEUE, got, same(got, m));
}

/* GetQueueSizeInfo with no handler's Enqueue between it and the caller's look at the model. */
static ASGST_QueueSizeInfo settled_info(struct wf_live_worker *w, uint32_t *calls) {
    for (;;) {
        uint32_t before = w->qm.calls;
        fence();
        ASGST_QueueSizeInfo got = size_info(w);
        fence();
        if (w->qm.calls == before) {
            *calls = before;
            return got;
        }
    }
}

void wf_live_queue_check_before(struct wf_live_worker *w) {
    struct wf_live_queue_model *m = &w->qm;
    uint32_t calls;
    for (;;) {
        ASGST_QueueSizeInfo got = settled_info(w, &calls);
        int agrees = same(got, m);
        fence();
        if (m->calls != calls) continue; /* a handler counted meanwhile: look again */
        judge(w, BEFORE_SAFEPOINT, got, agrees);
        break;
    }
    if (++m->safepoints % RESIZE_EVERY == 0) {
        int32_t to = RESIZE_TO[(m->safepoints / RESIZE_EVERY) % 4];
        wf_live_current_run.queue.resize(w->queue, to);
        m->pending = to;
        w->st.queue_resizes++;
    }
    m->attempts_inside = m->enqueued_inside = 0;
    fence();
    m->in_safepoint = 1;
}

/* After a safepoint: every element it found was processed and the pending capacity applies;
   what is left was taken after its end, and each such element is one of the attempts counted
   since then, which are some of the calls made inside. */
static int agrees_after(ASGST_QueueSizeInfo got, const struct wf_live_queue_model *m) {
    int32_t capacity = m->pending >= 0 ? m->pending : m->capacity;
    return got.capacity == capacity && got.size >= 0 && got.size <= m->enqueued_inside &&
           got.attempts >= got.size && got.attempts <= m->attempts_inside;
}

void wf_live_queue_check_after(struct wf_live_worker *w, int faulted) {
    struct wf_live_queue_model *m = &w->qm;
    m->resync |= faulted;
    for (;;) {
        int32_t inside = m->attempts_inside;
        fence();
        ASGST_QueueSizeInfo got = size_info(w);
        int agrees = agrees_after(got, m);
        fence();
        if (m->attempts_inside != inside) continue; /* a handler counted meanwhile */
        judge(w, AFTER_SAFEPOINT, got, agrees);
        m->size = got.size; /* the model after the safepoint */
        m->capacity = got.capacity;
        m->attempts = got.attempts;
        m->pending = -1;
        fence();
        m->in_safepoint = 0;
        fence();
        if (m->attempts_inside == inside) return; /* none slipped in before the clear */
        m->in_safepoint = 1;                      /* one did: its call is in the figures */
    }
}
