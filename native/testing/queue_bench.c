/* queue_bench.c — the queue's costs against a direct walk (wf_queue_bench.h). */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "asgst.h"
#include "wf_queue.h"
#include "wf_queue_bench.h"
#include "wf_ucontext.h"
#include "wf_vm.h"
#include "wf_walker.h"

/* The reference walker's table: its ASGST and wf_queue symbols are hidden in the core, so
   this extension calls them through it. Set before any queue exists. */
static const wf_walker *ref;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void walk_all(ASGST_Iterator *it, void *arg) {
    ASGST_Frame f;
    uint32_t *frames = arg;
    *frames = 0;
    while (ref->next_frame(it, &f) == 1) ++*frames;
}

static void on_element(ASGST_Iterator *it, void *queue_arg, void *arg) { walk_all(it, queue_arg); }

static int32_t walk_options(void) {
    return (WF_VM->thread->flags & WF_THREAD_CURRENT) ? ASGST_WALK_SAME_THREAD : 0;
}

/* One round: fill the queue (timed), then one safepoint (timed). */
static int round_trip(ASGST_Queue *q, ucontext_t *uc, const uint64_t poll[3], uint32_t n,
                      uint64_t *enqueue_ns, uint64_t *process_ns) {
    uint64_t t0 = now_ns();
    for (uint32_t i = 0; i < n; i++) {
        int rc = ref->enqueue(q, uc, NULL);
        if (rc != 1) return rc;
    }
    uint64_t t1 = now_ns();
    ref->queue_safepoint(poll[1], poll[2], poll[0]);
    *process_ns += now_ns() - t1;
    *enqueue_ns += t1 - t0;
    return 0;
}

int wf_queue_bench(uint64_t pc, uint64_t sp, uint64_t fp, uint32_t elements, uint32_t rounds,
                   wf_queue_bench_result *out) {
    memset(out, 0, sizeof *out);
    ref = wf_walker_reference();
    if (!wf_vm_is_mapped() || WF_VM->thread == NULL) return out->error = ASGST_NO_THREAD;
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    wf_uc_set_frame(&uc, pc, sp, fp);
    uint32_t frames = 0;
    ref->queue_thread_reset();
    ASGST_Queue *q = ref->register_queue(NULL, (int)elements, 0, on_element, &frames);
    if (q == NULL) return out->error = ASGST_ENQUEUE_NO_QUEUE;
    const uint64_t poll[3] = {pc, sp, fp};
    uint64_t enqueue_ns = 0, process_ns = 0, walk_ns = 0;
    for (uint32_t r = 0; r < rounds && out->error == 0; r++)
        out->error = round_trip(q, &uc, poll, elements, &enqueue_ns, &process_ns);
    uint64_t t0 = now_ns();
    for (uint64_t i = 0; i < (uint64_t)rounds * elements && out->error == 0; i++) {
        int rc = ref->run_with_iterator(&uc, walk_options(), walk_all, &out->frames);
        if (rc < 0) out->error = rc;
    }
    walk_ns = now_ns() - t0;
    ref->deregister_queue(NULL, q);
    double n = (double)rounds * elements;
    out->enqueue_ns = (double)enqueue_ns / n;
    out->process_ns = (double)process_ns / n;
    out->direct_walk_ns = (double)walk_ns / n;
    return out->error;
}
