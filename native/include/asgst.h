/* asgst.h — the asynchronous stack trace API (ASGST) as walkfuzz fuzzes it.
 *
 * Sources: JEP 435 (shared/reference/000), the iterator API ("AsyncGetCallTrace Reworked",
 * shared/reference/003) and the safepoint queue API (shared/reference/001). A walker library
 * for the simulated VM exports every function below; the harness loads it with
 * wf_walker_load (wf_walker.h).
 *
 * Decisions on details the texts leave open (tested in tests/native/test_reference_walker*):
 *  - No JNI types: jint is int32_t; JNIEnv* in ASGST_RegisterQueue is `void *env` (NULL =
 *    the current thread).
 *  - ASGST_RunWithIterator / ...FromFrame return the trace kind (ASGST_JAVA_TRACE, or
 *    ASGST_CPP_TRACE for a thread that is not a Java thread walked with
 *    ASGST_INCLUDE_NON_JAVA_FRAMES) after calling the handler, or an error (< 0) without
 *    calling it. Errors found while walking come from ASGST_NextFrame.
 *  - Options other than the two defined bits are ignored.
 *  - ASGST_NextFrame's end/error code is sticky: once it returned 0 or < 0 it returns the same
 *    code again and leaves *frame untouched. ASGST_State returns 1 until then, then that code.
 *  - Inlined scopes of one compiled frame are emitted innermost first; all but the outermost
 *    have type ASGST_FRAME_JAVA_INLINED, the outermost ASGST_FRAME_JAVA. All of them report
 *    the physical frame's pc, sp and fp.
 *  - comp_level: 0 interpreted, 1..4 compiled, -1 native wrapper and non-Java frames.
 *    bci: -1 for native wrapper and non-Java frames and for compiled pcs without debug info.
 *  - Threads not in Java (in VM, in native, blocked) are walked from their last-Java-frame
 *    anchor: the first frame reported is the anchor's Java frame; the C frames above it are
 *    not reported (walk them yourself, e.g. with ASGST_RunWithIteratorFromFrame).
 *  - GetMethodInfo/GetClassInfo: each *_length is the buffer capacity on entry and the full
 *    length of the string on return; strings are truncated to capacity-1 bytes plus NUL.
 *    An invalid handle yields empty strings, lengths 0, modifiers 0, klass NULL.
 *  - Implementation-specific error codes (< -16) are listed in ASGST_WfError; a walker of the
 *    simulated VM returns no other codes. The exact rules: docs/case-format.md §4.
 *  - The queue API is declared here; a walker library exports it only if its
 *    ASGST_Capabilities() has ASGST_REGISTER_QUEUE (the reference walker does: ref_queue.c;
 *    the queue decisions are in the block before the queue declarations below).
 *  - In the walkfuzz core the reference walker defines these symbols with hidden visibility,
 *    so a walker library loaded next to it always binds to its own definitions.
 *  - ASGST_QueueElement is the enqueued top frame plus the argument;
 *    ASGST_GetEnqueuableElement returns what ASGST_Enqueue would enqueue.
 * Async-signal-safe: every iterator function, GetMethodInfo, GetClassInfo, ThreadState,
 * Capabilities, Enqueue, GetQueueElement, GetEnqueuableElement, ResizeQueue,
 * GetQueueSizeInfo. Not: RegisterQueue, DeregisterQueue, SetOnQueueProcessingStart/End.
 */
#ifndef WALKFUZZ_ASGST_H
#define WALKFUZZ_ASGST_H

#include <stdbool.h>
#include <stdint.h>

/* cffi:begin */
typedef struct _ASGST_Method *ASGST_Method;    /* method handle (validated before use) */
typedef struct _ASGST_Class *ASGST_Class;      /* class handle */
typedef struct _ASGST_Iterator ASGST_Iterator; /* opaque, lives on the walker's stack */
typedef struct _ASGST_Queue ASGST_Queue;       /* opaque */

enum ASGST_Options {
    ASGST_INCLUDE_NON_JAVA_FRAMES = 1, /* report stub, entry and C frames too */
    ASGST_WALK_SAME_THREAD = 2         /* the ucontext is the calling thread's own */
};

enum ASGST_TraceKind {
    ASGST_JAVA_TRACE = 1,
    ASGST_CPP_TRACE = 2,
    ASGST_GC_TRACE = 4,
    ASGST_DEOPT_TRACE = 8,
    ASGST_UNKNOWN_TRACE = 16
};

enum ASGST_FrameTypeId {
    ASGST_FRAME_JAVA = 1,         /* interpreted or compiled (outermost scope) */
    ASGST_FRAME_JAVA_INLINED = 2, /* an inlined scope of a compiled frame */
    ASGST_FRAME_JAVA_NATIVE = 3,  /* native wrapper: Java calling C */
    ASGST_FRAME_NON_JAVA = 4      /* stub, entry (C -> Java) and C frames */
};

enum ASGST_Error {
    ASGST_NO_FRAME = 0,            /* end of the walk */
    ASGST_NO_THREAD = -1,          /* no Java thread, or not in the mode the options ask */
    ASGST_THREAD_EXIT = -2,        /* dying thread */
    ASGST_UNSAFE_STATE = -3,       /* thread new or in a state transition */
    ASGST_NO_TOP_JAVA_FRAME = -4,  /* thread outside Java without a last-Java-frame anchor */
    ASGST_ENQUEUE_NO_QUEUE = -5,   /* no queue registered */
    ASGST_ENQUEUE_FULL_QUEUE = -6, /* safepoint queue is full */
    ASGST_ENQUEUE_OTHER_ERROR = -7 /* other enqueue error, like being at a safepoint */
};

/* Implementation-specific codes of walkers for the walkfuzz VM (all < -16). */
enum ASGST_WfError {
    ASGST_WF_BAD_PC = -17,       /* pc is not code, in no blob, or a bad return address */
    ASGST_WF_BAD_SP = -18,       /* sp outside the stack, misaligned or not growing */
    ASGST_WF_BAD_FP = -19,       /* fp-based frame with fp outside its legal range */
    ASGST_WF_BAD_METHOD = -20,   /* interpreted frame's method slot is no method handle */
    ASGST_WF_BAD_BCP = -21,      /* interpreted frame's bcp outside its method's bytecode */
    ASGST_WF_DEPTH_LIMIT = -22,  /* more than WF_WALK_MAX_DEPTH physical frames */
    ASGST_WF_BAD_ARGUMENT = -23, /* NULL handler, iterator, frame, or needed ucontext */
    ASGST_WF_FRAME_GONE = -24    /* queue: the element's frame left the stack before the
                                    safepoint (docs/queue.md) */
};

enum ASGST_Capabilities {
    ASGST_REGISTER_QUEUE = 1, /* everything safepoint queue related */
    ASGST_MARK_FRAME = 2      /* frame marking related */
};

typedef struct {
    uint8_t type;        /* ASGST_FrameTypeId */
    int comp_level;      /* 0 interpreted, 1..4 compiled, -1 undefined */
    int bci;             /* -1 if not available */
    ASGST_Method method; /* NULL for non-Java frames */
    void *pc;            /* program counter inside this frame */
    void *sp;            /* stack pointer of this frame */
    void *fp;            /* frame pointer value of this frame */
} ASGST_Frame;

typedef struct {
    char *method_name;
    int32_t method_name_length;
    char *signature;
    int32_t signature_length;
    char *generic_signature;
    int32_t generic_signature_length;
    int32_t modifiers;
    ASGST_Class klass;
} ASGST_MethodInfo;

typedef struct {
    char *class_name;
    int32_t class_name_length;
    char *generic_class_name;
    int32_t generic_class_name_length;
    int32_t modifiers;
} ASGST_ClassInfo;

typedef void (*ASGST_IteratorHandler)(ASGST_Iterator *iterator, void *arg);

/* Create an iterator at the thread's top frame (from ucontext, or the anchor when the thread
   is not in Java) and call fun(iterator, arg). Returns the trace kind, or an error without
   calling fun. Async-signal-safe. */
int ASGST_RunWithIterator(void *ucontext, int32_t options, ASGST_IteratorHandler fun,
                          void *argument);
/* Same, starting at the frame (sp, fp, pc) whatever the thread state. Async-signal-safe. */
int ASGST_RunWithIteratorFromFrame(void *sp, void *fp, void *pc, int32_t options,
                                   ASGST_IteratorHandler fun, void *argument);
/* Next frame: 1 and *frame filled, 0 at the end, < 0 on error (sticky). Async-signal-safe. */
int ASGST_NextFrame(ASGST_Iterator *iterator, ASGST_Frame *frame);
/* Back to the first frame, as freshly created. Async-signal-safe. */
void ASGST_RewindIterator(ASGST_Iterator *iterator);
/* 1 while NextFrame has only returned frames, else its sticky code; 0 for NULL.
   Async-signal-safe. */
int ASGST_State(ASGST_Iterator *iterator);
/* JVMTI-style state bits of the walked thread, -1 if it is not a Java thread.
   Async-signal-safe. */
int ASGST_ThreadState(void);
/* Names, modifiers and class of a method handle. Async-signal-safe. */
void ASGST_GetMethodInfo(ASGST_Method method, ASGST_MethodInfo *info);
/* Names and modifiers of a class handle. Async-signal-safe. */
void ASGST_GetClassInfo(ASGST_Class klass, ASGST_ClassInfo *info);
/* Bit set of ASGST_Capabilities the walker implements. Async-signal-safe. */
int ASGST_Capabilities(void);

/* ---- safepoint queue API (optional: ASGST_REGISTER_QUEUE) ----------------------------
 * Implemented by native/walkers/reference/ref_queue.c; normative text docs/queue.md. Decisions on
 * what shared/reference/001 leaves open:
 *  - Threads: a queue belongs to the OS thread that registered it (env must be NULL: the
 *    simulated VM has no JNIEnv; non-NULL env -> RegisterQueue NULL, DeregisterQueue 0) and
 *    walks the mapped VM thread. RegisterQueue succeeds while fewer than WF_QUEUE_MAX_QUEUES
 *    queues are live in the process, for sizes 0..WF_QUEUE_MAX_CAPACITY (else it returns NULL;
 *    size 0 = always full) and a non-NULL handler.
 *  - Handles: queues live in a static pool, so a deregistered handle stays readable: every
 *    call checks it and treats a dead or foreign pointer as "no queue" (Enqueue ->
 *    ASGST_ENQUEUE_NO_QUEUE, GetQueueElement -> NULL, GetQueueSizeInfo -> zeros, the rest
 *    no-ops / 0) - until a later RegisterQueue hands its slot out again.
 *  - Enqueue, checks in order: no queue -> ENQUEUE_NO_QUEUE (not counted); then the attempt
 *    is counted (attempts = every Enqueue on a live queue since the last safepoint end,
 *    whatever its result); caller is not the owner thread and the VM thread is not
 *    SUSPENDED -> ENQUEUE_OTHER_ERROR; the owner thread is inside a safepoint (a signal
 *    landed in a handler) -> ENQUEUE_OTHER_ERROR; the owner thread is inside another Enqueue
 *    (a second signal's handler interrupted it) -> ENQUEUE_OTHER_ERROR; queue full ->
 *    ENQUEUE_FULL_QUEUE; the walk
 *    from the ucontext (Java frames only, the walker's thread checks and checked reads)
 *    fails -> its code (NO_THREAD, THREAD_EXIT, UNSAFE_STATE, NO_TOP_JAVA_FRAME, ASGST_WF_*);
 *    it ends without a bytecode-backed frame (JAVA or JAVA_INLINED; native wrappers are
 *    passed) -> NO_TOP_JAVA_FRAME; else the element is appended -> ASGST_JAVA_TRACE (1).
 *    No malloc, no lock, no syscall: a fixed ring preallocated by RegisterQueue / a safepoint.
 *  - Element: (pc, sp, fp) of the top bytecode-backed physical frame; hidden next to it, the
 *    interpreted frame's method and bcp at enqueue time, and what identifies the frame at the
 *    safepoint: where it keeps its return address and its value, and words of the callers
 *    under it whose return address is shared by every call site (interpreted: bcp and return
 *    address; stub or native wrapper: return address; entry: the saved anchor), down to the
 *    first compiled caller or C frame (at most WF_QUEUE_MAX_CHECKED_CALLERS frames, read
 *    along their layouts: no iterator, bounded). Only arg is meant to be modified.
 *  - GetEnqueuableElement fills *element as Enqueue would store it (arg NULL) and returns 1,
 *    or returns Enqueue's walk error without touching *element (the signature of the
 *    reference implementation's profile2.h, not "pc NULL"); a NULL element ->
 *    ASGST_WF_BAD_ARGUMENT before anything is read.
 *  - Enqueue / GetEnqueuableElement with a NULL ucontext walk the calling thread as
 *    RunWithIterator(NULL) does: a thread in Java has no registers to start from
 *    (ASGST_WF_BAD_ARGUMENT), one that is not starts at its anchor.
 *  - Safepoint (wf_queue_safepoint, wf_queue.h): the owner thread's queues in registration
 *    order; for a non-empty queue: start handler, then fun(iterator, queue_arg, arg) per
 *    element oldest first, then end handler; the queue is then empty. Start/end iterators (if
 *    offered) walk from the safepoint frame with the handler's options; element iterators
 *    start at the element with the queue's options. An element whose frame is gone (its sp
 *    below the safepoint frame's sp, its return address word changed, or a checked word of
 *    its callers changed) gets an iterator whose NextFrame
 *    returns ASGST_WF_FRAME_GONE. Decision for a caller that moved on: gone, not a walk with
 *    the recorded bcp. A caller's bcp moves only while it runs, i.e. after the enqueued frame
 *    returned (interpreted frames all return to the interpreter, so a re-call from the same
 *    caller has the same sp and return word); the post assumes a safepoint before every
 *    return, so such an element's frame is no longer on the stack, and a walk with the old
 *    bcp would splice the enqueue-time top onto callers read from the stack as it is now
 *    (what was past the checked callers may have changed too). So a handler gets either the
 *    trace at enqueue time or ASGST_WF_FRAME_GONE. At the end of every safepoint (empty queues too)
 *    a pending resize takes effect and attempts restart at 0.
 *  - During a safepoint: Enqueue -> ENQUEUE_OTHER_ERROR; ResizeQueue applies at its end;
 *    GetQueueElement sees the elements not yet processed (the one being processed is index 0);
 *    RegisterQueue -> NULL and DeregisterQueue -> 0 on that thread; a nested safepoint is a
 *    no-op returning -1.
 *  - ResizeQueue: any size in range is taken (out of range: ignored); the queue is empty when
 *    it applies, so shrinking never drops an element. Several calls: the last one wins.
 *  - DeregisterQueue with elements pending: they are dropped, no handler is called.
 *    Thread exit (wf_queue_thread_exit): the same for every queue of the thread.
 */
typedef struct {
    void *pc; /* the enqueued top Java frame */
    void *fp;
    void *sp;
    void *arg; /* the argument given to ASGST_Enqueue; may be modified */
} ASGST_QueueElement;

typedef struct {
    int32_t size;     /* number of elements in the queue */
    int32_t capacity; /* capacity of the queue */
    int32_t attempts; /* enqueue attempts since the last safepoint end */
} ASGST_QueueSizeInfo;

/* Called at a safepoint for each queued element, in insertion order. */
typedef void (*ASGST_Handler)(ASGST_Iterator *iterator, void *queue_arg, void *arg);
/* Called before/after a non-empty queue is processed; iterator NULL unless offered. */
typedef void (*ASGST_OnQueueSafepointHandler)(ASGST_Queue *queue, ASGST_Iterator *iterator,
                                              void *arg);

/* Register a queue of `size` elements for the thread `env` (NULL = current). Not signal-safe. */
ASGST_Queue *ASGST_RegisterQueue(void *env, int size, int options, ASGST_Handler fun,
                                 void *argument);
/* Remove a queue from its thread, dropping pending elements; 1 if it was registered.
   Not signal-safe. */
int ASGST_DeregisterQueue(void *env, ASGST_Queue *queue);
/* Enqueue the top Java frame of ucontext; 1 or an error (ENQUEUE_*, walk errors).
   Async-signal-safe. */
int ASGST_Enqueue(ASGST_Queue *queue, void *ucontext, void *argument);
/* n-th element, 0 oldest, -1 youngest; NULL if out of bounds. Async-signal-safe. */
ASGST_QueueElement *ASGST_GetQueueElement(ASGST_Queue *queue, int n);
/* The element ASGST_Enqueue would enqueue for ucontext: 1 and *element, or the walk error.
   Async-signal-safe. */
int ASGST_GetEnqueuableElement(void *ucontext, ASGST_QueueElement *element);
/* Resize at the end of the next (or current) safepoint. Async-signal-safe. */
void ASGST_ResizeQueue(ASGST_Queue *queue, int size);
/* Size, capacity, attempts. Async-signal-safe. */
ASGST_QueueSizeInfo ASGST_GetQueueSizeInfo(ASGST_Queue *queue);
/* Handler run before a non-empty queue is processed (NULL removes). Not signal-safe. */
void ASGST_SetOnQueueProcessingStart(ASGST_Queue *queue, int options, bool offerIterator,
                                     ASGST_OnQueueSafepointHandler before, void *arg);
/* Handler run after a non-empty queue is processed (NULL removes). Not signal-safe. */
void ASGST_SetOnQueueProcessingEnd(ASGST_Queue *queue, int options, bool offerIterator,
                                   ASGST_OnQueueSafepointHandler end, void *arg);
/* cffi:end */

#endif /* WALKFUZZ_ASGST_H */
