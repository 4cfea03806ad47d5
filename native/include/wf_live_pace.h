/* wf_live_pace.h — pacing of a live worker's sampling timer (signal and queue mode): its
 * sampling handler never takes most of the worker's time.
 *
 * On a busy machine two things take a worker's own time away: a handler that costs more than
 * the interval (the next period expires inside it), and a worker descheduled after its handler
 * armed the timer (the window passes while it waits, and the next signal is pending when the
 * handler returns, whatever the period). Either way the next handler starts less than one
 * handler's length after the last one ended: the worker is starved, and a safepoint it is in
 * makes no headway while its CPU time grows (the guard's watchdog then calls it a hang).
 *
 *   handler     own time    handler     own time
 *   |--len--|<-- gap -->|--len--| ...             starved when gap < len
 *
 * A starved worker's timer restarts with a first expiry of the handler's length (at least the
 * interval) times 2^shift, shift one more per starved signal in a row up to
 * WF_LIVE_PACE_MAX_SHIFT and back to 0 once the worker had its share, so the window outgrows
 * whatever eats it; the period stays the interval. A late signal (the timer expired again
 * while it was pending) restarts the period too, so the worker gets at least an interval.
 */
#ifndef WALKFUZZ_WF_LIVE_PACE_H
#define WALKFUZZ_WF_LIVE_PACE_H

#include <stdint.h>

/* cffi:begin */
#define WF_LIVE_PACE_MAX_SHIFT 10

typedef struct wf_live_pace {
    uint64_t exit_ns;   /* when the last handler ended (0: none yet) */
    uint64_t length_ns; /* how long it took */
    uint32_t shift;     /* starved signals in a row, up to WF_LIVE_PACE_MAX_SHIFT */
} wf_live_pace;

/* A handler that started at entered_ns (its signal late or not) has run until now_ns: the first
   expiry to restart the timer with, or 0 to leave its period alone. Async-signal-safe. */
uint64_t wf_live_pace_next(wf_live_pace *pace, uint64_t entered_ns, uint64_t now_ns, int late,
                           uint64_t interval_ns);
/* That handler ended at exit_ns. Async-signal-safe. */
void wf_live_pace_done(wf_live_pace *pace, uint64_t entered_ns, uint64_t exit_ns);
/* cffi:end */

#endif /* WALKFUZZ_WF_LIVE_PACE_H */
