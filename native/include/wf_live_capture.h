/* wf_live_capture.h — every failed sample of a live stress run (fault, hang, invalid trace) as
 * a replayable case (docs/stress.md "Findings", docs/case-format.md).
 *
 * In the handler (signal, thread mode: when the walk is judged; queue mode: at the signal for
 * every enqueued element, into its slot, and again at the safepoint when the element's walk
 * is judged) the sampler copies into preallocated per-worker buffers: the registers, the VM
 * thread record and anchor, the stack words from sp up to the stack top (at most
 * WF_LIVE_CAPTURE_STACK bytes into the ring entry; a deeper stack, as the recursive workload's
 * past the depth limit, whole into a free one of the worker's WF_LIVE_DEEP_BUFFERS deep buffers
 * of WF_LIVE_DEEP_STACK bytes, held by the entry until the drain laid it out; a key gets
 * WF_LIVE_DEEP_CAPTURES_PER_KEY of them per worker, so frequent keys leave the buffers to rarer
 * ones, and with every buffer held a deep failed sample is counted as capture_dropped; the top
 * beyond a bound is left out and the finding says how much), the expected trace and what
 * the walk returned. A capture goes into the worker's ring (WF_LIVE_CAPTURE_RING entries; single
 * producer, single consumer, lock-free: release-store of the head after the entry, acquire-load by
 * the drain); a full ring drops and counts (wf_live_stats.capture_dropped). At most
 * WF_LIVE_CAPTURES_PER_KEY captures per signature key and worker; every failed sample is counted
 * under its key (wf_live_signatures).
 *
 * The drain (wf_live_drain, on a thread of its own while wf_live_run runs, and after it)
 * encodes each capture as a case: the live VM's classes, methods and code blobs read from
 * their fixed addresses (they do not change during a run), the stack image placed at the
 * case's stack top with every word pointing into the live stack relocated, THREAD, CONTEXT,
 * WALK as the sampler walked, section 9 for queue mode (REGISTER, ENQUEUE at the signal,
 * POKEs that turn the signal-time stack into the safepoint-time one, THREAD as at the
 * safepoint, SAFEPOINT) and section 11 EXPECTED.
 */
#ifndef WALKFUZZ_WF_LIVE_CAPTURE_H
#define WALKFUZZ_WF_LIVE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "wf_live.h"

/* cffi:begin */
#define WF_LIVE_CAPTURE_STACK 65536 /* stack bytes a capture copies from sp up */
#define WF_LIVE_DEEP_STACK 1048576  /* a deep capture's bound: a case's stack (WF_VM_STACK_SIZE) */
#define WF_LIVE_FINDING_FRAMES 64   /* walked / expected frames a drained finding shows */
#define WF_LIVE_CASE_MAX 2097152    /* a drained case is never longer (1 MiB of stack and more) */

enum wf_live_case_status {
    WF_LIVE_CASE_OK = 0,
    WF_LIVE_CASE_TOO_MANY_POKES = -1 /* the stack changed in more words than section 9 holds */
};

typedef struct wf_live_finding {
    int32_t status; /* wf_live_case_status: 0 = the case was encoded */
    int32_t cls;    /* WF_LIVE_CLS_*, -1 fault, -2 hang */
    int32_t first_diff;
    int32_t worker;
    uint32_t mode, source, window;             /* WF_LIVE_MODE_*, wf_expected_source, window kind */
    uint64_t t_ns;                             /* when it was sampled (CLOCK_MONOTONIC) */
    int32_t run_result, end_code, state_after; /* end_code: run_result if < 0, else the end */
    uint32_t walked_count, expected_count;
    int32_t expected_end;
    uint32_t thread_state, thread_flags;
    uint64_t pc, sp, fp; /* interrupted registers (live addresses) */
    uint64_t fault_pc, fault_addr;
    int32_t fault_signo, fault_kind;
    uint32_t stack_bytes;   /* stack image of the case */
    uint32_t stack_dropped; /* used stack bytes the bound left out (0: all of it) */
    uint32_t pokes;         /* queue: stack words that changed before the safepoint */
    uint32_t shape_len;
    uint8_t shape[32];        /* wf_shape_kind of the frames up to the first difference */
    wf_live_frame walked[64]; /* the first WF_LIVE_FINDING_FRAMES, innermost first */
    wf_live_frame expected[64];
} wf_live_finding;

/* Failed samples of one signature key, summed over the workers. */
typedef struct wf_live_signature {
    int32_t cls;       /* WF_LIVE_CLS_*, -1 fault, -2 hang */
    uint32_t tail;     /* wf_shape_kind of the shape's last frame, 0 none */
    uint64_t fault_pc; /* faults and hangs */
    uint64_t count;
    uint64_t first_ns, last_ns; /* CLOCK_MONOTONIC of the first and the last one */
} wf_live_signature;

/* Take the oldest capture of the next worker that has one and encode it as a case into out
   (capacity cap). Returns its length (info->status 0), 0 if nothing is pending, or minus the
   capacity needed (the capture stays). A capture that cannot be encoded is taken with
   info->status < 0 and returns 1 (out unused). One drain thread at a time; safe while
   wf_live_run runs on another thread, and after it returned. */
int64_t wf_live_drain(wf_live_finding *info, uint8_t *out, size_t cap);
/* The signature keys counted so far (all workers merged), at most cap; how many there are. */
uint32_t wf_live_signatures(wf_live_signature *out, uint32_t cap);
/* Whether the running (or last) run stopped early (stop_on_first, or wf_live_request_stop). */
int wf_live_stopped_early(void);
/* End the running run's phases at their next look (every STOP_CHECK_NS), as stop_on_first
   does: an interrupted stress run still returns its result. Async-signal-safe. */
void wf_live_request_stop(void);
/* cffi:end */

#endif /* WALKFUZZ_WF_LIVE_CAPTURE_H */
