/* live_sampler_thread.c — thread mode: a sampler thread stops each worker with tgkill and walks
 * it from outside while the worker waits in its SIGPROF handler (JFR's way of sampling).
 *
 * One handshake word per worker; one doorbell word for the sampler:
 *
 *   sampler                                  worker's SIGPROF handler
 *   tgkill every idle worker ------------->  snapshot, flags |= SUSPENDED
 *   (all at once: a worker that is not       IDLE -> READY (CAS), ring the doorbell
 *    on a CPU answers later, and needs       wait while READY
 *    no sample meanwhile)
 *   serve each READY worker as it comes:
 *   walk its ucontext, check
 *   READY -> DONE ------------------------>  flags &= ~SUSPENDED, DONE -> IDLE, return
 *
 * Waiting, on both sides: spin for up to HANDSHAKE_SPIN_NS, then sleep on the futex word. A
 * round trip between two running threads takes a few µs, while a futex sleep costs a wake-up
 * of an idle (virtual) CPU, several µs more per side. Spinning only pays while the other side
 * runs on another CPU: a side that last saw the other on its own CPU sleeps at once, so the
 * other can run (each handler notes its CPU, and so does the sampler). Whoever sleeps says so
 * in a flag, so the other side makes the wake syscall only when someone sleeps; both sides
 * store their word, then read the other's (sequentially consistent), so one of them always
 * sees the other.
 *
 * A worker that has not answered within HANDSHAKE_TIMEOUT_NS is given up: IDLE -> CANCELLED;
 * a late handler sees CANCELLED, sets IDLE and returns without waiting.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wf_live_worker.h"

#define HANDSHAKE_TIMEOUT_NS 1000000000ull
#define HANDSHAKE_SPIN_NS 20000ull
#define SAMPLER_TIMER_SLACK_NS 1ul /* the default 50 µs would stretch a 10 µs tick 6x */

static long futex(volatile uint32_t *word, int op, uint32_t val, const struct timespec *ts) {
    return syscall(SYS_futex, word, op, val, ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

static uint32_t load(volatile uint32_t *word) { return __atomic_load_n(word, __ATOMIC_SEQ_CST); }

/* Spin while *word == value, until the clock reaches `until` (ns); whether it still is.
   Async-signal-safe. */
static int spin_while(volatile uint32_t *word, uint32_t value, uint64_t until) {
    while (load(word) == value && wf_live_now_ns() < until) __builtin_ia32_pause();
    return load(word) == value;
}

/* ---- the worker's side (in its SIGPROF handler) --------------------------------------- */

/* While the word at `word` equals value: spin (unless the sampler was last seen on this CPU:
   it could not run), then sleep. Async-signal-safe. */
static void wait_while(volatile uint32_t *word, uint32_t value, volatile uint32_t *sleeping,
                       int my_cpu) {
    int sampler_cpu = __atomic_load_n(&wf_live_current_run.sampler_cpu, __ATOMIC_RELAXED);
    uint64_t spin_end = sampler_cpu == my_cpu ? 0 : wf_live_now_ns() + HANDSHAKE_SPIN_NS;
    spin_while(word, value, spin_end);
    while (load(word) == value) {
        __atomic_store_n(sleeping, 1, __ATOMIC_SEQ_CST);
        futex(word, FUTEX_WAIT_PRIVATE, value, NULL);
        __atomic_store_n(sleeping, 0, __ATOMIC_SEQ_CST);
    }
}

static void ring_doorbell(struct wf_live_run *run) {
    __atomic_add_fetch(&run->doorbell, 1, __ATOMIC_SEQ_CST);
    if (load(&run->sampler_sleeping)) futex(&run->doorbell, FUTEX_WAKE_PRIVATE, 1, NULL);
}

void wf_live_wait_for_sampler(struct wf_live_worker *w, void *uc) {
    uint32_t idle = WF_LIVE_HS_IDLE;
    wf_live_snapshot_take(&w->jt, &w->snap);
    w->handshake_uc = uc;
    int cpu = sched_getcpu(); /* glibc reads it from rseq: no lock, no call */
    __atomic_store_n(&w->last_cpu, cpu, __ATOMIC_RELAXED);
    __atomic_or_fetch(&w->vm->flags, WF_THREAD_SUSPENDED, __ATOMIC_SEQ_CST);
    if (__atomic_compare_exchange_n(&w->handshake, &idle, WF_LIVE_HS_READY, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST)) {
        ring_doorbell(&wf_live_current_run);
        wait_while(&w->handshake, WF_LIVE_HS_READY, &w->worker_sleeping, cpu);
    } /* else CANCELLED: the sampler gave up on us */
    __atomic_and_fetch(&w->vm->flags, ~(uint32_t)WF_THREAD_SUSPENDED, __ATOMIC_SEQ_CST);
    __atomic_store_n(&w->handshake, WF_LIVE_HS_IDLE, __ATOMIC_SEQ_CST);
}

/* ---- the sampler thread -------------------------------------------------------------- */

/* What the sampler knows of one worker. */
struct request {
    int pending; /* signalled, not served yet */
    uint64_t sent_ns;
};

struct sampler {
    struct wf_live_run *run;
    struct request requests[WF_LIVE_MAX_WORKERS];
    int pending; /* workers signalled and not served */
};

static void signal_idle_workers(struct sampler *s, uint64_t now) {
    for (int i = 0; i < s->run->worker_count; i++) {
        struct wf_live_worker *w = &s->run->workers[i];
        struct request *r = &s->requests[i];
        if (r->pending || load(&w->handshake) != WF_LIVE_HS_IDLE) continue;
        if (syscall(SYS_tgkill, getpid(), w->tid, SIGPROF) != 0) continue;
        *r = (struct request){.pending = 1, .sent_ns = now};
        s->pending++;
    }
}

static void release(struct wf_live_worker *w) {
    __atomic_store_n(&w->handshake, WF_LIVE_HS_DONE, __ATOMIC_SEQ_CST);
    if (load(&w->worker_sleeping)) futex(&w->handshake, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* Give up on a worker that never answered, unless it answers right now. 1 if given up. */
static int cancel(struct wf_live_worker *w) {
    uint32_t idle = WF_LIVE_HS_IDLE;
    return __atomic_compare_exchange_n(&w->handshake, &idle, WF_LIVE_HS_CANCELLED, 0,
                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Walk and release every worker that is waiting; give up on the ones past the timeout. */
static void serve_ready_workers(struct sampler *s, uint64_t now) {
    for (int i = 0; i < s->run->worker_count; i++) {
        struct wf_live_worker *w = &s->run->workers[i];
        struct request *r = &s->requests[i];
        if (!r->pending) continue;
        if (load(&w->handshake) == WF_LIVE_HS_READY) {
            wf_live_note_delivery(w, r->sent_ns);
            wf_live_sample(w, w->handshake_uc, 0, r->sent_ns);
            release(w);
        } else if (now - r->sent_ns <= HANDSHAKE_TIMEOUT_NS || !cancel(w)) {
            continue; /* not yet: still pending */
        }
        r->pending = 0;
        s->pending--;
    }
}

static struct timespec at_ns(uint64_t ns) {
    return (struct timespec){(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
}

/* Whether a worker was last seen on CPU `mine`, the sampler's: spinning there would keep it
   from running, so from answering. */
static int shares_cpu(const struct sampler *s, int mine) {
    for (int i = 0; i < s->run->worker_count; i++)
        if (__atomic_load_n(&s->run->workers[i].last_cpu, __ATOMIC_RELAXED) == mine) return 1;
    return 0;
}

/* Until `deadline` or the doorbell rings: spin while a worker is expected to answer soon (or
   the deadline is near) and no worker needs this CPU, else sleep (FUTEX_WAIT_BITSET: an
   absolute CLOCK_MONOTONIC deadline). */
static void wait_for_doorbell(struct sampler *s, uint64_t deadline) {
    struct wf_live_run *run = s->run;
    uint32_t rung = load(&run->doorbell);
    int mine = sched_getcpu();
    __atomic_store_n(&run->sampler_cpu, mine, __ATOMIC_RELAXED); /* the workers' spin rule */
    uint64_t now = wf_live_now_ns();
    int event_soon = s->pending > 0 || deadline - now <= HANDSHAKE_SPIN_NS;
    uint64_t spin_end = event_soon && !shares_cpu(s, mine) ? now + HANDSHAKE_SPIN_NS : now;
    if (!spin_while(&run->doorbell, rung, spin_end < deadline ? spin_end : deadline) ||
        wf_live_now_ns() >= deadline)
        return;
    struct timespec until = at_ns(deadline);
    __atomic_store_n(&run->sampler_sleeping, 1, __ATOMIC_SEQ_CST);
    futex(&run->doorbell, FUTEX_WAIT_BITSET_PRIVATE, rung, &until);
    __atomic_store_n(&run->sampler_sleeping, 0, __ATOMIC_SEQ_CST);
}

static void *sampler_main(void *arg) {
    struct sampler s = {.run = arg};
    struct wf_live_run *run = s.run;
    wf_live_guard_prepare(run->cfg.walk_budget_ns);
    prctl(PR_SET_TIMERSLACK, SAMPLER_TIMER_SLACK_NS);
    uint64_t next = wf_live_now_ns();
    while (run->phase == WF_LIVE_SAMPLING || s.pending > 0) {
        uint64_t now = wf_live_now_ns();
        if (now >= next) { /* a tick; after the phase, only serve */
            if (run->phase == WF_LIVE_SAMPLING) signal_idle_workers(&s, now);
            next += run->cfg.interval_ns;
            if (next <= now) next = now + run->cfg.interval_ns; /* behind: don't burst */
        }
        serve_ready_workers(&s, now);
        wait_for_doorbell(&s, next);
    }
    return NULL;
}

int wf_live_sampler_thread_start(struct wf_live_run *run, char *err, size_t errlen) {
    run->sampler_cpu = -1;
    if (pthread_create(&run->sampler, NULL, sampler_main, run) != 0) {
        snprintf(err, errlen, "cannot start the sampler thread");
        return -1;
    }
    run->has_sampler = 1;
    return 0;
}
