/* live_queue.c — queue mode of a live stress run (the safepoint queue API of asgst.h):
 *
 *   SIGPROF handler: copy the shadow stack into a free slot, ASGST_Enqueue(queue, uc, slot),
 *                    request a safepoint (poll word = 1)
 *   next poll:       the safepoint stub (IN_VM, anchor = its frame) calls wf_live_safepoint,
 *                    which runs the walker's wf_queue_safepoint from the stub's Java caller,
 *                    guarded; the walker calls on_element per element with an iterator that
 *                    starts at the enqueued frame
 *   on_element:      drain the iterator, judge it against the slot's snapshot: the trace
 *                    walked at the safepoint must equal the shadow stack at the signal
 *   around both:     GetQueueSizeInfo against the worker's own count of its calls, and a
 *                    ResizeQueue now and then (live_queue_accounting.c)
 *
 * The truth of an element is the trace expected at the signal (the shadow stack there, after
 * wf_live_expect) minus native wrapper frames on top (an element is the top bytecode-backed
 * frame). An element whose frame left the stack before the safepoint walks to ASGST_WF_FRAME_GONE;
 * it is counted (queue_gone), not judged. A failed enqueue whose code is a walk error is
 * judged as an empty walk ending with that code (the thread may be outside Java); a full
 * queue or "other" error is counted in queue_rejected.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_live_worker.h"
#include "wf_queue.h"

#define STUB_FRAME 32 /* the safepoint stub's frame size (live_emit.c TRANSITION_FRAME) */

static const struct wf_live_queue_api REFERENCE_QUEUE = {
    .register_queue = ASGST_RegisterQueue,
    .deregister_queue = ASGST_DeregisterQueue,
    .enqueue = ASGST_Enqueue,
    .safepoint = wf_queue_safepoint,
    .resize = ASGST_ResizeQueue,
    .size_info = ASGST_GetQueueSizeInfo,
};

/* What arrives at the interval within WF_LIVE_QUEUE_WAIT_NS, within the capacity bounds. */
static int32_t capacity_for(uint64_t interval_ns) {
    uint64_t n = WF_LIVE_QUEUE_WAIT_NS / interval_ns;
    return n < WF_LIVE_QUEUE_CAPACITY       ? WF_LIVE_QUEUE_CAPACITY
           : n > WF_LIVE_QUEUE_MAX_CAPACITY ? WF_LIVE_QUEUE_MAX_CAPACITY
                                            : (int32_t)n;
}

int wf_live_queue_bind(struct wf_live_run *run, char *err, size_t errlen) {
    int caps = run->api->capabilities();
    if (!(caps & ASGST_REGISTER_QUEUE)) {
        snprintf(err, errlen,
                 "queue mode: walker %s lacks the safepoint queue API "
                 "(ASGST_Capabilities() = %#x, no ASGST_REGISTER_QUEUE)",
                 run->api->name, caps);
        return -1;
    }
    run->queue_capacity = capacity_for(run->cfg.interval_ns);
    run->queue_slots = 2 * (uint32_t)run->queue_capacity;
    if (run->api->handle == NULL) {
        run->queue = REFERENCE_QUEUE;
        return 0;
    }
    static const char *const names[] = {"ASGST_RegisterQueue", "ASGST_DeregisterQueue",
                                        "ASGST_Enqueue",       "wf_queue_safepoint",
                                        "ASGST_ResizeQueue",   "ASGST_GetQueueSizeInfo"};
    void *syms[6];
    for (int i = 0; i < 6; i++) {
        syms[i] = dlsym(run->api->handle, names[i]);
        if (syms[i] == NULL) {
            snprintf(err, errlen,
                     "queue mode: walker %s reports ASGST_REGISTER_QUEUE but "
                     "lacks %s",
                     run->api->name, names[i]);
            return -1;
        }
    }
    memcpy(&run->queue.register_queue, &syms[0], sizeof syms[0]);
    memcpy(&run->queue.deregister_queue, &syms[1], sizeof syms[1]);
    memcpy(&run->queue.enqueue, &syms[2], sizeof syms[2]);
    memcpy(&run->queue.safepoint, &syms[3], sizeof syms[3]);
    memcpy(&run->queue.resize, &syms[4], sizeof syms[4]);
    memcpy(&run->queue.size_info, &syms[5], sizeof syms[5]);
    return 0;
}

static void on_element(ASGST_Iterator *it, void *queue_arg, void *arg) {
    struct wf_live_worker *w = queue_arg;
    uintptr_t k = (uintptr_t)arg;
    if (k >= wf_live_current_run.queue_slots) return;
    struct wf_live_queued *slot = &w->queued[k];
    w->st.queue_walked++;
    wf_live_record(w->waits, &w->wait_count, wf_live_now_ns() - slot->at.t0);
    wf_live_walk_reset(&w->walk, ASGST_JAVA_TRACE);
    slot->at.source = WF_EXPECTED_ELEMENT;
    w->queue_current = (int32_t)k; /* a fault in the walk is this element's */
    wf_live_collect(it, &w->walk);
    w->queue_current = -1;
    if (w->walk.end == ASGST_WF_FRAME_GONE && w->walk.count == 0) w->st.queue_gone++;
    else wf_live_judge(w, &slot->at, NULL);
    slot->busy = 0;
}

int wf_live_queue_register(struct wf_live_worker *w) {
    const struct wf_live_run *run = &wf_live_current_run;
    uint32_t slots = run->queue_slots;
    w->queued = calloc(slots, sizeof *w->queued);
    w->waits = calloc(run->cfg.record_cap, sizeof *w->waits);
    if (w->queued == NULL || w->waits == NULL) return -1;
    for (uint32_t k = 0; k < slots; k++)
        w->queued[k].snap = (struct wf_live_snapshot){.cap = WF_LIVE_QUEUED_SHADOW_MAX,
                                                      .frames = w->queued[k].frames};
    if (run->cfg.capture) wf_live_prefault(w->queued, slots * sizeof *w->queued);
    w->queue = run->queue.register_queue(NULL, run->queue_capacity, 0, on_element, w);
    wf_live_queue_model_start(w, run->queue_capacity);
    return w->queue != NULL ? 0 : -1;
}

void wf_live_queue_deregister(struct wf_live_worker *w) {
    if (w->queue != NULL) wf_live_current_run.queue.deregister_queue(NULL, w->queue);
    w->queue = NULL;
}

/* An element is the top bytecode-backed frame (asgst.h queue block: native wrappers on top
   are passed), so the truth at the safepoint is the shadow stack without them. */
static void drop_native_top(struct wf_live_snapshot *snap) {
    while (snap->depth > 0 &&
           (snap->frames[snap->depth - 1].type & 0xff) == ASGST_FRAME_JAVA_NATIVE)
        snap->depth--;
}

struct enqueue_call {
    struct wf_live_worker *w;
    void *uc;
    uintptr_t slot;
};

static intptr_t guarded_enqueue(void *arg) {
    struct enqueue_call *c = arg;
    return wf_live_current_run.queue.enqueue(c->w->queue, c->uc, (void *)c->slot);
}

/* With capture on, every element's thread at the signal goes into its slot: whether its walk
   at the safepoint is right is not known yet, and by then the stack has moved on. */
static void capture_signal(struct wf_live_worker *w, struct wf_live_queued *slot) {
    slot->at.signal = NULL;
    if (!wf_live_current_run.cfg.capture) return;
    uint64_t t0 = wf_live_ticks();
    const struct wf_live_sample_info *at = &slot->at;
    wf_live_capture_stack(w, &slot->signal, at->pc, at->sp, at->fp, at->sp);
    slot->at.signal = &slot->signal;
    wf_live_capture_timed(w, wf_live_ticks() - t0);
}

void wf_live_queue_sample(struct wf_live_worker *w, void *uc, uint64_t t0) {
    wf_live_note_delivery(w, t0);
    uint32_t k = w->queued_next % wf_live_current_run.queue_slots;
    struct wf_live_queued *slot = &w->queued[k];
    if (slot->busy) { /* every slot waits for a safepoint */
        w->st.queue_rejected++;
        w->st.queue_full++;
        return;
    }
    wf_live_snapshot_take(&w->jt, &slot->snap);
    wf_live_info(&slot->at, w, &slot->snap, uc, t0); /* the trace at the signal, then */
    drop_native_top(&slot->snap);                    /* from the top bytecode frame */
    slot->at.source = WF_EXPECTED_ENQUEUE;
    struct enqueue_call call = {.w = w, .uc = uc, .slot = k};
    intptr_t rc;
    wf_fault fault;
    __atomic_or_fetch(&w->vm->flags, WF_THREAD_CURRENT, __ATOMIC_RELAXED);
    capture_signal(w, slot); /* as the Enqueue sees the thread */
    int faulted = wf_guard_call(guarded_enqueue, &call, &rc, &fault);
    __atomic_and_fetch(&w->vm->flags, ~(uint32_t)WF_THREAD_CURRENT, __ATOMIC_RELAXED);
    wf_live_queue_count_enqueue(w, faulted, rc);
    if (!faulted && rc == ASGST_JAVA_TRACE) {
        w->st.queue_enqueued++;
        slot->busy = 1;
        w->queued_next++;
        w->jt.poll = 1;
        return;
    }
    if (!faulted && (rc == ASGST_ENQUEUE_FULL_QUEUE || rc == ASGST_ENQUEUE_OTHER_ERROR ||
                     rc == ASGST_ENQUEUE_NO_QUEUE)) {
        w->st.queue_rejected++;
        w->st.queue_full += rc == ASGST_ENQUEUE_FULL_QUEUE;
        return;
    }
    wf_live_walk_reset(&w->walk, faulted ? 0 : (int32_t)rc); /* enqueue's walk failed */
    wf_live_judge(w, &slot->at, faulted ? &fault : NULL);
}

struct safepoint_call {
    uintptr_t sp, fp, pc;
};

static intptr_t guarded_safepoint(void *arg) {
    struct safepoint_call *c = arg;
    return wf_live_current_run.queue.safepoint(c->sp, c->fp, c->pc);
}

void wf_live_queue_safepoint(struct wf_live_worker *w) {
    /* the top Java frame is the safepoint stub's caller (the anchor is the stub's frame) */
    const uintptr_t *stub = (const uintptr_t *)w->vm->anchor.sp;
    struct safepoint_call call = {.sp = w->vm->anchor.sp + STUB_FRAME,
                                  .fp = stub[STUB_FRAME / 8 - 2],
                                  .pc = stub[STUB_FRAME / 8 - 1]};
    intptr_t processed = 0; /* a faulted call leaves it unset */
    wf_fault fault;
    w->poll_sp = call.sp; /* what a capture of an element replays */
    w->poll_fp = call.fp;
    w->poll_pc = call.pc;
    w->queue_current = -1;
    wf_live_queue_check_before(w);
    int faulted = wf_guard_call(guarded_safepoint, &call, &processed, &fault);
    wf_live_queue_note_safepoint(w, faulted, processed);
    wf_live_queue_check_after(w, faulted);
    if (faulted) {
        int32_t k = w->queue_current; /* the element whose walk faulted, if any */
        w->queue_current = -1;
        if (k >= 0) {
            wf_live_judge(w, &w->queued[k].at, &fault);
            w->queued[k].busy = 0;
            return;
        }
        struct wf_live_sample_info at = {.pc = fault.pc,
                                         .sp = call.sp,
                                         .t0 = wf_live_now_ns(),
                                         .state = w->vm->state,
                                         .snap = NULL};
        wf_live_walk_reset(&w->walk, 0);
        wf_live_judge(w, &at, &fault);
    }
}
