/* live_queue_testing.c — queue mode's accounting single-stepped (wf_live_queue_testing.h).
 *
 * The SIGTRAP handler plays the SIGPROF handler's part: at a chosen boundary it makes the
 * simulated queue's Enqueue and counts it in the model (wf_live_queue_count_enqueue), as a
 * sampling signal landing there would. The simulated queue keeps asgst.h's accounting the way
 * the reference walker does (ref_queue.c): the attempt counted first, then refused inside its
 * safepoint or when full; its safepoint empties the queue, applies a pending capacity and
 * restarts attempts at 0 before it ends. Its fields are volatile and each is written by one
 * store, so a step lands between two of them as a signal would.
 */
#define _GNU_SOURCE
#include "wf_live_queue_testing.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "wf_live_worker.h"
#include "wf_ucontext.h"

#define TRAP_FLAG 0x100 /* EFLAGS.TF: a debug trap after every instruction */
#define CAPACITY 4      /* small: a burst fills the queue */
#define UNSTEPPED                                                    \
    15 /* safepoints before the stepped one, which asks for a resize \
          (live_queue_accounting.c RESIZE_EVERY) */

static struct { volatile int32_t size, capacity, attempts, pending, in_safepoint; } queue;

static int enqueue(void) {
    queue.attempts = queue.attempts + 1;
    if (queue.in_safepoint) return ASGST_ENQUEUE_OTHER_ERROR;
    if (queue.size >= queue.capacity) return ASGST_ENQUEUE_FULL_QUEUE;
    queue.size = queue.size + 1;
    return ASGST_JAVA_TRACE;
}

static ASGST_QueueSizeInfo size_info(ASGST_Queue *unused) {
    (void)unused;
    return (ASGST_QueueSizeInfo){
        .size = queue.size, .capacity = queue.capacity, .attempts = queue.attempts};
}

static void resize(ASGST_Queue *unused, int size) {
    (void)unused;
    queue.pending = size;
}

static void safepoint(void) {
    queue.in_safepoint = 1;
    queue.size = 0;
    if (queue.pending >= 0) queue.capacity = queue.pending;
    queue.pending = -1;
    queue.attempts = 0;
    queue.in_safepoint = 0;
}

static struct {
    struct wf_live_worker *w;
    volatile int on;             /* stepping wanted */
    uint64_t step;               /* boundaries stepped so far in this run */
    uint64_t from, every, until; /* inject at from, from + every, ... below until */
    wf_live_queue_stepped *out;
} stepper;

static void on_trap(int signo, siginfo_t *info, void *context) {
    (void)signo;
    greg_t *flags = wf_uc_slot((ucontext_t *)context, WF_UC_FLAGS);
    if (info->si_code <= 0 || !stepper.on) { /* raise() starts stepping; `on` 0 ends it */
        *flags = stepper.on ? *flags | TRAP_FLAG : *flags & ~(greg_t)TRAP_FLAG;
        return;
    }
    uint64_t k = stepper.step++;
    if (stepper.until != 0 && k + 1 >= stepper.until) {
        *flags &= ~(greg_t)TRAP_FLAG; /* the rest runs at full speed */
        stepper.on = 0;
    }
    if (k < stepper.from || k >= stepper.until || (k - stepper.from) % stepper.every != 0) return;
    struct wf_live_worker *w = stepper.w;
    int rc = enqueue();
    stepper.out->injected++;
    stepper.out->injected_looking += w->qm.in_safepoint != 0;
    stepper.out->taken += rc == ASGST_JAVA_TRACE;
    wf_live_queue_count_enqueue(w, 0, rc);
}

static void one_safepoint(struct wf_live_worker *w) {
    wf_live_queue_check_before(w);
    safepoint();
    wf_live_queue_check_after(w, 0);
}

/* One run: fresh queue and model, UNSTEPPED safepoints, two stepped ones with the pattern,
   then one more Enqueue and a look. Returns the boundaries stepped. */
static uint64_t run(struct wf_live_worker *w, uint64_t from, uint64_t every, uint64_t until) {
    queue.size = queue.attempts = queue.in_safepoint = 0;
    queue.capacity = CAPACITY;
    queue.pending = -1;
    memset(&w->st, 0, sizeof w->st);
    wf_live_queue_model_start(w, CAPACITY);
    for (int i = 0; i < UNSTEPPED; i++) one_safepoint(w);
    stepper.step = 0;
    stepper.from = from;
    stepper.every = every;
    stepper.until = until;
    stepper.on = 1;
    raise(SIGTRAP);
    one_safepoint(w);
    stepper.on = 0;
    uint64_t steps = stepper.step;
    wf_live_queue_count_enqueue(w, 0, enqueue());
    wf_live_queue_check_before(w);
    wf_live_queue_stepped *out = stepper.out;
    out->runs++;
    out->checks += w->st.queue_checks;
    out->miscounts += w->st.queue_miscounts;
    if (w->st.queue_miscounts != 0 && out->first_miscount[0] == 0) {
        memcpy(out->first_miscount, w->st.queue_miscount, sizeof out->first_miscount);
        out->first_from = from;
        out->first_every = every;
    }
    return steps;
}

int wf_live_queue_stepped_check(uint32_t max_every, uint32_t burst, wf_live_queue_stepped *out) {
    memset(out, 0, sizeof *out);
    struct wf_live_worker *w = calloc(1, sizeof *w);
    if (w == NULL) return -1;
    struct wf_live_run *live = &wf_live_current_run;
    struct wf_live_queue_api saved_queue = live->queue;
    const wf_walker *saved_api = live->api;
    live->queue.size_info = size_info;
    live->queue.resize = resize;
    live->api = wf_walker_reference();
    w->queue = (ASGST_Queue *)&queue; /* only ever passed to the two above */
    struct sigaction trap = {.sa_sigaction = on_trap, .sa_flags = SA_SIGINFO}, saved_trap;
    sigemptyset(&trap.sa_mask);
    sigaction(SIGTRAP, &trap, &saved_trap);
    stepper.w = w;
    stepper.out = out;
    out->steps = run(w, 0, 1, 0);
    for (uint64_t every = 1; out->steps != 0 && every <= max_every; every++)
        for (uint64_t from = 0; from < out->steps; from++)
            run(w, from, every, from + (uint64_t)burst * every);
    sigaction(SIGTRAP, &saved_trap, NULL);
    live->queue = saved_queue;
    live->api = saved_api;
    free(w);
    return out->steps != 0 ? 0 : -1;
}
