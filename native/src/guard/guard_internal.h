/* guard_internal.h — state shared by guard.c (the signal handlers) and guard_watchdog.c (the
 * watchdog thread). Not part of the module's API.
 *
 * A watched thread owns one slot. Its guarded calls number themselves from slot->next_seq and
 * publish the innermost running call in slot->active_seq (0 when idle); only the owner writes
 * those two. The watchdog reads them, and when active_seq has not changed for the budget of
 * the thread's CPU time it writes
 * kill_seq = active_seq and sends the hang signal; the handler unwinds to the frame whose seq
 * equals kill_seq, or ignores the signal when that call has already returned, or, when the
 * thread is inside the C library or the loader (which may hold a lock an unwind would leave
 * taken), clears kill_seq so that the watchdog asks again one period later.
 */
#ifndef WF_GUARD_INTERNAL_H
#define WF_GUARD_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

typedef struct wf_watch_slot {
    pid_t tid;           /* owner thread; 0 = free */
    clockid_t cpu_clock; /* the owner's CPU-time clock: a budget counts its CPU time */
    uint64_t budget_ns;  /* 0 = not watched */
    uint64_t next_seq;   /* last sequence number handed out; never reset, so stale kills miss */
    uint64_t active_seq; /* innermost running guarded call, 0 = none */
    uint64_t kill_seq;   /* call the watchdog interrupted last */
} wf_watch_slot;

/* This thread's watchdog slot, or NULL if it never set a budget. */
extern __thread wf_watch_slot *wf_guard_watch_slot __attribute__((tls_model("initial-exec")));

/* Install the hang-signal handler (idempotent); called before the watchdog first sends it,
   outside any signal handler (it looks up where the C library and the loader lie). */
void wf_guard_install_hang_handler(void);

/* Find where the C library, the allocator and the loader lie (once; not signal-safe), and
   whether pc lies there (Async-signal-safe): guard_unsafe_code.c. */
void wf_guard_find_unsafe_code(void);
int wf_guard_in_unsafe_code(uintptr_t pc);

#endif /* WF_GUARD_INTERNAL_H */
