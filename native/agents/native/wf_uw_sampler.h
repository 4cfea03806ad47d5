/* A sampled workload thread: its workload, its timer, what its samples found (internal). */
#ifndef WF_UW_SAMPLER_H
#define WF_UW_SAMPLER_H

#include <pthread.h>
#include <time.h>
#include <ucontext.h>

#include "wf_uw_worker.h"
#include "wf_unwind.h"

typedef struct wf_uw_sampler {
    wf_uw_worker worker;
    const wf_uw_stress_config *cfg;
    pthread_t thread;
    timer_t timer;
    volatile int timed;       /* timer created and armed (the stopper disarms it) */
    volatile int armed;       /* the handler samples only while set */
    uint64_t samples;         /* handler entries, for ALTERNATE */
    uint64_t last_ns;         /* time of the previous sample */
    wf_uw_stress_stats stats; /* this thread's; summed by wf_uw_stress_run */
} wf_uw_sampler;

/* The sampler of the current thread, for the signal handler. */
extern __thread wf_uw_sampler *wf_uw_current_sampler __attribute__((tls_model("initial-exec")));

/* The sampling signal handler (SA_SIGINFO). Async-signal-safe: saves errno, no locks of its
   own, no malloc; libunwind's are taken with signals blocked and never by the workload. */
void wf_uw_on_sample(int signo, siginfo_t *info, void *ucontext);

/* Log2 histogram bucket of a duration. Async-signal-safe. */
unsigned wf_uw_log2_bucket(uint64_t ns);

uint64_t wf_uw_now_ns(void);

#endif
