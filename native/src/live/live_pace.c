/* live_pace.c — pacing of a live worker's sampling timer (wf_live_pace.h). */
#include "wf_live_pace.h"

uint64_t wf_live_pace_next(wf_live_pace *pace, uint64_t entered_ns, uint64_t now_ns, int late,
                           uint64_t interval_ns) {
    int starved = pace->exit_ns != 0 && entered_ns - pace->exit_ns < pace->length_ns;
    if (!starved) pace->shift = 0;
    else if (pace->shift < WF_LIVE_PACE_MAX_SHIFT) pace->shift++;
    if (!starved && !late) return 0;
    uint64_t spent = now_ns - entered_ns;
    return (spent > interval_ns ? spent : interval_ns) << pace->shift;
}

void wf_live_pace_done(wf_live_pace *pace, uint64_t entered_ns, uint64_t exit_ns) {
    pace->exit_ns = exit_ns;
    pace->length_ns = exit_ns - entered_ns;
}
