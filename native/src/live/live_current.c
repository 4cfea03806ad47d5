/* live_current.c — the live run in progress (one per process) and the monotonic clock: what
 * every live file reads, defined apart from the files that drive the run (live_run.c) and
 * sample it (live_sampler.c), so that reading them depends on neither.
 */
#define _GNU_SOURCE
#include <time.h>

#include "wf_live_worker.h"

struct wf_live_run wf_live_current_run;

uint64_t wf_live_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
