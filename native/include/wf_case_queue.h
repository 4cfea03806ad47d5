/* wf_case_queue.h — section 9 of a case: a sequence of queue operations run against the mapped
 * case, and the log of what happened, which a Python model (fuzz/targets/minivm/queue/model.py)
 * predicts event by event. Format: docs/case-format.md §7.
 *
 *   u32 op_count, then per op: u8 opcode, operands by opcode
 *     1 REGISTER    s32 size, u32 options            -> queue index r = registrations so far
 *     2 DEREGISTER  u8 queue
 *     3 ENQUEUE     u8 queue, u64 pc, u64 sp, u64 fp, u64 arg     (a ucontext with RIP/RSP/RBP)
 *     4 SET_ARG     u8 queue, s32 n, u64 arg          GetQueueElement(q, n)->arg = arg
 *     5 COMPRESS    u8 queue, u64 pc, u64 sp, u64 fp  the compression pattern of the post
 *     6 RESIZE      u8 queue, s32 size
 *     7 SIZE_INFO   u8 queue
 *     8 HANDLER     u8 queue, u8 which (0 start, 1 end), u8 mode (0 remove, 1 plain,
 *                   2 offered an iterator), u32 options
 *     9 SAFEPOINT   u64 pc, u64 sp, u64 fp (the poll's frame), u16 inner_at, u16 inner_count:
 *                   the next inner_count ops run inside the handler of the inner_at-th element
 *                   this safepoint processes (skipped if it processes fewer)
 *    10 THREAD_EXIT
 *    11 POKE        u64 addr, u64 value   (a stack word changes, as the running thread would)
 *    12 THREAD      u8 state, u8 flags, u64 anchor sp, u64 anchor fp, u64 anchor pc: the
 *                   thread record becomes that (as the running thread would change it between
 *                   a signal and its safepoint; restored after the run)
 *    13 FILL        register queues of size 0 until RegisterQueue refuses (at most
 *                   WF_QUEUE_FILL_MAX), then deregister them: result = how many it took
 *    14 ALIAS       u8 queue, s32 offset (not a multiple of 8): a registration whose handle
 *                   is queue's handle (an alias's base, for an alias) + offset, a pointer
 *                   RegisterQueue never returned
 *    15 MISUSE      u8 kind (wf_queue_misuse), u8 queue: one call with an argument the API
 *                   refuses
 *   A queue operand r names the r-th registration of the program (REGISTER, ALIAS, a
 *   registering MISUSE); its handle is NULL if that register failed or has not run yet, and
 *   stays the (dead) handle after DEREGISTER - until a FILL has run: from then on a queue that
 *   ended is NULL (a pool walker may hand its slot to a later RegisterQueue).
 */
#ifndef WALKFUZZ_WF_CASE_QUEUE_H
#define WALKFUZZ_WF_CASE_QUEUE_H

#include <stdint.h>

#include "asgst.h"

struct wf_walker; /* wf_walker.h */

/* cffi:begin */
#define WF_QUEUE_MAX_OPS 4096
#define WF_QUEUE_MAX_REGISTRATIONS 255
#define WF_QUEUE_WALK_MAX_FRAMES 4096 /* frames one handler records; more: code 1 */
#define WF_QUEUE_MAX_EVENTS 65536
#define WF_QUEUE_MAX_LOGGED_FRAMES 262144
#define WF_QUEUE_CONTEXT_SIZE 1024 /* bytes for a ucontext_t (936 on x86-64 glibc) */
#define WF_QUEUE_FILL_MAX 4096     /* FILL stops there: a walker without a pool limit */
#define WF_QUEUE_MISUSE_KINDS 5

enum wf_queue_opcode {
    WF_QOP_REGISTER = 1,
    WF_QOP_DEREGISTER = 2,
    WF_QOP_ENQUEUE = 3,
    WF_QOP_SET_ARG = 4,
    WF_QOP_COMPRESS = 5,
    WF_QOP_RESIZE = 6,
    WF_QOP_SIZE_INFO = 7,
    WF_QOP_HANDLER = 8,
    WF_QOP_SAFEPOINT = 9,
    WF_QOP_THREAD_EXIT = 10,
    WF_QOP_POKE = 11,
    WF_QOP_THREAD = 12,
    WF_QOP_FILL = 13,
    WF_QOP_ALIAS = 14,
    WF_QOP_MISUSE = 15
};

/* MISUSE kinds and what asgst.h says the call returns. */
enum wf_queue_misuse {
    WF_MISUSE_REGISTER_ENV = 0,    /* RegisterQueue(non-NULL env, 1, 0, fun, arg): NULL */
    WF_MISUSE_REGISTER_NO_FUN = 1, /* RegisterQueue(NULL, 1, 0, NULL, arg): NULL */
    WF_MISUSE_DEREGISTER_ENV = 2,  /* DeregisterQueue(non-NULL env, queue): 0, queue kept */
    WF_MISUSE_NO_ELEMENT = 3,      /* GetEnqueuableElement(ucontext, NULL): WF_BAD_ARGUMENT */
    WF_MISUSE_NO_CONTEXT = 4       /* Enqueue(queue, NULL, 0): the caller's own stack, which is
                                      no VM thread's here: an Enqueue failing with NO_THREAD */
};

enum wf_queue_event_kind {
    WF_QEV_OP = 1,      /* an op ran: code = its result (docs/case-format.md §7) */
    WF_QEV_ELEMENT = 2, /* the element handler ran: arg, the element (index 0), the walk */
    WF_QEV_START = 3,   /* the processing start handler ran: the walk, code 2 = no iterator */
    WF_QEV_END = 4,     /* the processing end handler ran: likewise */
    WF_QEV_PENDING = 5  /* after the last op: one per element still queued */
};

typedef struct wf_queue_event {
    int32_t kind;        /* wf_queue_event_kind */
    int32_t op;          /* index of the op that ran (the SAFEPOINT for handler events) */
    int32_t queue;       /* registration index, -1 for ops without a queue */
    int32_t code;        /* OP: result; handlers: walk end code, 1 = cut at the frame limit */
    uint64_t arg;        /* ELEMENT, PENDING: the element's arg */
    uint64_t pc, sp, fp; /* ELEMENT, PENDING: the element */
    int32_t size, capacity, attempts;  /* OP of SIZE_INFO (and every OP): size info after it */
    uint32_t frame_begin, frame_count; /* handlers: frames walked, in the result's frames */
    int32_t state;                     /* handlers with an iterator: ASGST_State after the walk */
} wf_queue_event;

typedef struct wf_queue_result {
    int32_t status; /* 0, or -1: no queue section, -2: log full (events cut) */
    uint32_t event_count;
    uint32_t frame_count;
    uint32_t violations;    /* executor's own bookkeeping checks that failed */
    char violation[200];    /* the first one, naming op and values */
    int32_t violation_op;   /* the op of the first one */
    wf_queue_event *events; /* WF_QUEUE_MAX_EVENTS, owned */
    ASGST_Frame *frames;    /* WF_QUEUE_MAX_LOGGED_FRAMES, owned */
} wf_queue_result;

/* A result with its buffers, or NULL. Not signal-safe. */
wf_queue_result *wf_queue_result_new(void);
void wf_queue_result_free(wf_queue_result *r);
/* Fill buf (WF_QUEUE_CONTEXT_SIZE bytes) with a zeroed ucontext_t whose RIP, RSP, RBP are
   pc, sp, fp: what a signal would hand ASGST_Enqueue. */
void wf_queue_make_context(void *buf, uint64_t pc, uint64_t sp, uint64_t fp);
/* Ops in the mapped case's queue section (0: none). */
uint32_t wf_case_queue_op_count(void);
/* Run the mapped case's queue ops on the calling thread (its queues are reset before and
   after; stack words POKEd are restored after) and log into r. Returns r->status. */
int wf_case_queue_run(wf_queue_result *r);
/* The same with walker w's queue entries and iterator (w->has_queue must be 1). */
int wf_case_queue_run_walker(const struct wf_walker *w, wf_queue_result *r);
/* cffi:end */

#endif /* WALKFUZZ_WF_CASE_QUEUE_H */
