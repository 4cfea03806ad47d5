/* guard_internal.h — state shared by guard.c (the signal handlers) and guard_watchdog.c (the
 * watchdog thread). Not part of the module's API.
 *
 * A watched thread owns one slot. Its guarded calls number themselves from slot->next_seq and
 * publish the innermost running call in slot->active_seq (0 when idle); only the owner writes
 * those two. The watchdog reads them, and when active_seq has not changed for the budget it
 * writes kill_seq = active_seq and sends the hang signal; the handler unwinds to the frame whose
 * seq equals kill_seq, or ignores the signal when that call has already returned.
 */
#ifndef WF_GUARD_INTERNAL_H
#define WF_GUARD_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

typedef struct wf_watch_slot {
    pid_t tid;              /* owner thread; 0 = free */
    uint64_t budget_ns;     /* 0 = not watched */
    uint64_t next_seq;      /* last sequence number handed out; never reset, so stale kills miss */
    uint64_t active_seq;    /* innermost running guarded call, 0 = none */
    uint64_t kill_seq;      /* call the watchdog interrupted last */
} wf_watch_slot;

/* This thread's watchdog slot, or NULL if it never set a budget. */
extern __thread wf_watch_slot *wf_guard_watch_slot __attribute__((tls_model("initial-exec")));

/* Install the hang-signal handler (idempotent); called before the watchdog first sends it. */
void wf_guard_install_hang_handler(void);

#endif /* WF_GUARD_INTERNAL_H */
