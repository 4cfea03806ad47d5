/* ref_queue.c — the safepoint queue API of the reference walker (asgst.h queue block,
 * docs/queue.md): a signal handler enqueues the top Java frame, the thread's next safepoint
 * walks the rest of the stack from there.
 *
 * Memory: queues are slots of a static pool; each owns a ring allocated outside signal
 * handlers (RegisterQueue, or the end of a safepoint for a resize). One ring, one writer at a
 * time (wf_queue.h says why), so Enqueue needs no lock:
 *
 *   ring[0 .. capacity)      head = oldest element, size elements from there, wrapping
 *   +-----+-----+-----+-----+-----+
 *   |  e3 |     |     |  e1 |  e2 |      head = 3, size = 3: e1 e2 e3
 *   +-----+-----+-----+-----+-----+      GetQueueElement(q, 0) = e1, (q, -1) = e3
 *
 * A slot keeps, next to the public element (pc, fp, sp, arg), what resuming needs: the
 * interpreted top frame's method and bcp at enqueue time (its slots move on before the
 * safepoint) and the words that tell at the safepoint whether the frame still is the one
 * that was enqueued: where the frame keeps its return address and what it was, and words of
 * the callers right under it. A return address names a call site, so a compiled caller is
 * pinned by it; but some return addresses are shared by every call: every interpreted frame
 * returns to the interpreter's one return address, every interpreted callee of compiled code
 * to the c2i adapter's (a STUB), every Java upcall to the entry stub's. A frame that returned
 * and was called again from elsewhere then has the same sp and return word, and what moved
 * is under it: the interpreted caller's bcp, the adapter's own return address (live stress
 * found that one: caller bci 12 for 6), the saved anchor of the entry frame. So the chain of
 * such callers is followed, down to the first compiled caller or C frame (at most
 * WF_QUEUE_MAX_CHECKED_CALLERS frames), and each one's words are checked:
 *
 *   element (interpreted)  fp+8     return pc (c2i adapter)  checked; the same after a re-call
 *   c2i adapter (STUB, S)  sp+S-8   return pc (compiled)     checked; moved after a re-call
 *   ... compiled caller: its pc is that word, the chain ends
 *
 *   caller (interpreted)   fp-16    bcp                      checked
 *                          fp+8     return pc                checked
 *   stub, native wrapper   sp+S-8   return pc                checked
 *   entry (Java-only walks go on at its saved anchor)
 *                          fp-8 .. fp-24  saved anchor sp, fp, pc    checked
 *                          anchor sp-8    anchor frame's pc if the saved pc is 0  checked
 *
 * Ordering without atomic instructions. Who touches a queue's ring, size and attempts:
 *   - Enqueue, in a signal handler on the owner thread (it interrupts the owner's code, which
 *     never runs again before the handler returns), or on another thread while the owner is
 *     SUSPENDED (halted: running nothing);
 *   - the owner thread itself: its safepoint (which raises self.in_safepoint first, and
 *     Enqueue then rejects before it reads size or the ring), the readers (GetQueueElement,
 *     GetQueueSizeInfo), Register/Deregister.
 * So no two writers ever run at the same time, and a handler and the code it interrupts share
 * one CPU: that CPU sees its own stores in program order, and only the compiler could move
 * them. Hence no lock prefix and no fence instruction: Enqueue writes the free slot at
 * head+size, then publishes it with a release store of size (a plain mov on x86-64; it also
 * orders the slot before the size for a sampler thread enqueueing into a SUSPENDED thread's
 * queue, whose resume handshake synchronizes with the owner anyway); readers load size
 * relaxed (acquire at the safepoint). Nesting: a handler of another signal can interrupt an
 * Enqueue on the same thread and Enqueue itself. Between the outer's size load and size store
 * the inner one would write the same free slot and publish the same size (one element lost,
 * found by the `nested` queue stress), so the owner's `enqueuing` flag, raised before the size
 * load and lowered after the size store, makes the inner Enqueue refuse
 * (ASGST_ENQUEUE_OTHER_ERROR). Counters are bumped with one add instruction each (no lock
 * prefix): a signal lands before or after it, never inside, so no count is lost either.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#ifndef WF_REF_EXPORT
#pragma GCC visibility push(hidden) /* after the system headers: libc stays default */
#endif

#include "asgst.h"
#include "wf_arch.h"
#include "wf_queue.h"
#include "wf_queue_walk.h"
#include "wf_ucontext.h"
#include "wf_vm.h"

#define QUEUE_LIVE 0x51756575u /* "Queu": the slot holds a registered queue */
#define QUEUE_STRIDE 256       /* bytes per pool slot: a handle check is a mask */
#define MAX_CHECKED_WORDS (4 * WF_QUEUE_MAX_CHECKED_CALLERS) /* an entry frame checks 4 */

typedef struct queue_slot {
    ASGST_QueueElement element; /* first: GetQueueElement returns &slot->element */
    uintptr_t method, bcp;      /* interpreted top frame at enqueue time, else 0 */
    uintptr_t return_slot;      /* where the top frame keeps its return address */
    uintptr_t return_pc;        /* ... and what it held at enqueue time */
    uint32_t checked;           /* words in check[] (see above) */
    struct {
        uintptr_t addr, value; /* a caller's stack word and its value at enqueue */
    } check[MAX_CHECKED_WORDS];
} queue_slot;

typedef struct queue_thread { /* per OS thread (initial-exec TLS) */
    ASGST_Queue *head, *tail; /* registration order */
    volatile sig_atomic_t in_safepoint;
    volatile sig_atomic_t enqueuing; /* an Enqueue into one of its queues is running */
    int exited;
} queue_thread;

typedef struct queue_hook { /* a processing start/end handler */
    ASGST_OnQueueSafepointHandler fun;
    void *arg;
    int32_t options;
    bool offer_iterator;
} queue_hook;

/* What Enqueue touches comes first: live .. ring and counters.attempts, .enqueued and .full
   are the first 64 bytes of a slot (QUEUE_STRIDE-aligned): one cache line per Enqueue. */
struct _ASGST_Queue {
    volatile uint32_t live; /* QUEUE_LIVE while registered */
    uint32_t capacity, head;
    uint32_t size;                     /* atomic accesses only: see "Ordering" above */
    uint32_t attempts;                 /* since the last safepoint end; likewise */
    volatile int32_t pending_capacity; /* -1: no resize pending */
    queue_thread *owner;
    queue_slot *ring;
    wf_queue_counters counters;
    ASGST_Queue *next;
    ASGST_Handler fun;
    void *arg;
    int32_t options; /* of the element iterators */
    queue_hook on_start, on_end;
} __attribute__((aligned(QUEUE_STRIDE)));

_Static_assert(sizeof(ASGST_Queue) == QUEUE_STRIDE, "a pool slot is QUEUE_STRIDE bytes");

static ASGST_Queue POOL[WF_QUEUE_MAX_QUEUES];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t pool_next; /* next-fit: a freed slot is reused late */
static __thread queue_thread self __attribute__((tls_model("initial-exec")));

#define compiler_fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* size and attempts ("Ordering" above): never torn, never kept in a register across a
   signal, and on x86-64 each is one plain mov: no lock prefix, no fence. */
static uint32_t load_size(const ASGST_Queue *q) {
    return __atomic_load_n(&q->size, __ATOMIC_ACQUIRE);
}

static void store_size(ASGST_Queue *q, uint32_t n) {
    __atomic_store_n(&q->size, n, __ATOMIC_RELEASE);
}

static uint32_t load_attempts(const ASGST_Queue *q) {
    return __atomic_load_n(&q->attempts, __ATOMIC_RELAXED);
}

/* One add instruction on a counter ("Ordering" above): a nested Enqueue's bump and the
   owner's reset at the end of a safepoint land before or after it, never inside. */
static void bump(uint64_t *counter) { wf_arch_add_one_u64(counter); }

static void count_attempt(ASGST_Queue *q) {
    wf_arch_add_one_u32(&q->attempts);
    bump(&q->counters.attempts);
}

/* ---- handles ----------------------------------------------------------------------------- */

static int is_pool_slot(const ASGST_Queue *q) {
    uintptr_t a = (uintptr_t)q, lo = (uintptr_t)POOL;
    return a >= lo && a < lo + sizeof POOL && (a - lo) % QUEUE_STRIDE == 0;
}

static ASGST_Queue *live_queue(ASGST_Queue *q) {
    return is_pool_slot(q) && q->live == QUEUE_LIVE ? q : NULL;
}

static int valid_size(int size) { return size >= 0 && size <= WF_QUEUE_MAX_CAPACITY; }

/* ---- finding the top Java frame (Enqueue, GetEnqueuableElement) -------------------------- */

typedef struct probe {
    const struct wf_vm_thread *thread; /* whose stack is walked (the walk's, see probe_top) */
    queue_slot *slot;                  /* filled in when the top frame is found */
    int code;                          /* 1 found, else why not */
} probe;

/* The VM thread whose stack holds sp (wf_vm_thread_for: the synthetic case's only thread).
   Like ref_walker.c it binds to nothing in the core (so a walker library built from these
   sources loads on its own): the harness maps the span before any walker call, and between
   cases the root's magic is 0. */
static const struct wf_vm_thread *mapped_thread(uintptr_t sp) {
    return WF_VM->magic == WF_VM_MAGIC ? wf_vm_thread_for(sp) : NULL;
}

/* The sp a walk of ucontext starts from (our own stack without one). */
static uintptr_t walked_sp(void *ucontext) {
    return ucontext ? wf_uc_sp(ucontext) : (uintptr_t)__builtin_frame_address(0);
}

static int is_bytecode_frame(const ASGST_Frame *f) {
    return f->type == ASGST_FRAME_JAVA || f->type == ASGST_FRAME_JAVA_INLINED;
}

static int is_interpreted(const ASGST_Frame *f) {
    return f->type == ASGST_FRAME_JAVA && f->comp_level == 0;
}

/* A thread's stack bounds in registers: the build has -fno-strict-aliasing, so the stores
   into a slot between two reads through t would make the compiler reload t's fields. */
typedef struct stack_bounds {
    uintptr_t lo, hi; /* lo UINTPTR_MAX: no stack, every word reads 0 */
} stack_bounds;

static stack_bounds bounds_of(const struct wf_vm_thread *t) {
    return t == NULL ? (stack_bounds){UINTPTR_MAX, 0} : (stack_bounds){t->stack_lo, t->stack_hi};
}

/* The word at addr if it is an aligned word of the stack bounded by b, else 0. */
static uintptr_t bounded_word(stack_bounds b, uintptr_t addr) {
    if (addr % 8 != 0 || addr < b.lo || addr > b.hi - 8) return 0;
    return *(const uintptr_t *)addr;
}

/* The word at addr if it is an aligned word of t's stack, else 0. */
static uintptr_t stack_word(const struct wf_vm_thread *t, uintptr_t addr) {
    return bounded_word(bounds_of(t), addr);
}

/* The top frame's return address identifies it: a return pops that word, a new call there
   writes another (or the same, for the same call site: then the walk is the same too). */
static void record_return(ASGST_Iterator *it, stack_bounds b, queue_slot *s) {
    s->return_slot = wf_ref_return_slot(it);
    s->return_pc = bounded_word(b, s->return_slot);
}

static void record_top(const ASGST_Frame *f, queue_slot *s) {
    s->element = (ASGST_QueueElement){f->pc, f->fp, f->sp, NULL};
    s->method = s->bcp = 0;
    if (is_interpreted(f)) {
        const struct wf_vm_method *m = wf_vm_method_at((uintptr_t)f->method);
        s->method = (uintptr_t)f->method;
        s->bcp = m->code_base + (uintptr_t)f->bci;
    }
}

typedef struct chain_frame {
    uintptr_t sp, fp, pc; /* a caller as a Java-only walk would step to it */
} chain_frame;

static void check_word(stack_bounds b, queue_slot *s, uintptr_t addr) {
    s->check[s->checked].addr = addr;
    s->check[s->checked].value = bounded_word(b, addr);
    s->checked++;
}

/* Record caller c's words (see the top of this file) and move c to the frame a Java-only
   walk reads next; 0 when the chain ends at c (compiled, C code, no older Java segment).
   Frame layouts: wf_vm.h. */
static int check_caller(stack_bounds b, queue_slot *s, chain_frame *c) {
    const struct wf_vm_blob *blob = wf_ref_find_blob(c->pc);
    uint32_t kind = blob != NULL ? blob->kind : 0;
    if (kind == WF_BLOB_INTERPRETER) {
        check_word(b, s, c->fp - 16);
        check_word(b, s, c->fp + 8);
        *c = (chain_frame){c->fp + 16, bounded_word(b, c->fp), bounded_word(b, c->fp + 8)};
        return 1;
    }
    if (kind == WF_BLOB_STUB || kind == WF_BLOB_NATIVE_WRAPPER) {
        uintptr_t slot = c->sp + blob->frame_size - 8;
        check_word(b, s, slot);
        *c = (chain_frame){slot + 8, bounded_word(b, slot - 8), bounded_word(b, slot)};
        return 1;
    }
    if (kind != WF_BLOB_ENTRY) return 0;
    for (uintptr_t at = 8; at <= 24; at += 8) check_word(b, s, c->fp - at);
    *c = (chain_frame){bounded_word(b, c->fp - 8), bounded_word(b, c->fp - 16),
                       bounded_word(b, c->fp - 24)};
    if (c->sp == 0) return 0;
    if (c->pc == 0) {
        check_word(b, s, c->sp - 8);
        c->pc = bounded_word(b, c->sp - 8);
    }
    return 1;
}

/* The callers right under the top frame whose return addresses do not pin them, read along
   their frame layouts rather than with the iterator, which would decode the top frame's
   outer scopes and the first compiled caller for nothing: an Enqueue with a compiled caller
   pays one blob lookup. The top frame's caller has fp [return slot - 8] (sp+S-16 or the
   saved fp), or the top's own fp while a fixed frame is not built (return slot == sp,
   case-format §4.4). Reads are checked (bounded_word), so a wild frame only records zeros. */
static void record_callers(stack_bounds b, queue_slot *s) {
    chain_frame c = {s->return_slot + 8,
                     s->return_slot == (uintptr_t)s->element.sp
                         ? (uintptr_t)s->element.fp
                         : bounded_word(b, s->return_slot - 8),
                     s->return_pc};
    s->checked = 0;
    for (uint32_t n = 0; n < WF_QUEUE_MAX_CHECKED_CALLERS; n++)
        if (!check_caller(b, s, &c)) return;
}

static void find_top(ASGST_Iterator *it, void *arg) {
    probe *p = arg;
    ASGST_Frame f;
    int rc;
    while ((rc = ASGST_NextFrame(it, &f)) == 1)
        if (is_bytecode_frame(&f)) {
            stack_bounds b = bounds_of(p->thread);
            record_top(&f, p->slot);
            record_return(it, b, p->slot);
            record_callers(b, p->slot);
            p->code = 1;
            return;
        }
    p->code = rc == ASGST_NO_FRAME ? ASGST_NO_TOP_JAVA_FRAME : rc; /* only C / native frames */
}

/* Walk ucontext like a Java-only ASGST_RunWithIterator of the thread's own (CURRENT) or a
   halted (SUSPENDED) thread; 1 and *slot filled in, or the walk's error. t is
   mapped_thread(walked_sp(ucontext)), the thread that walk reads: every frame it finds lies
   in t's stack, so the words recorded next to the top frame are read against t's bounds. */
static int probe_top(void *ucontext, const struct wf_vm_thread *t, queue_slot *slot) {
    int32_t options = t != NULL && (t->flags & WF_THREAD_CURRENT) ? ASGST_WALK_SAME_THREAD : 0;
    probe p = {t, slot, ASGST_NO_TOP_JAVA_FRAME};
    int rc = ASGST_RunWithIterator(ucontext, options, find_top, &p);
    return rc < 0 ? rc : p.code;
}

/* ---- the API ----------------------------------------------------------------------------- */

#define POOL_WRAP WF_QUEUE_MAX_QUEUES

static ASGST_Queue *claim_pool_slot(void) {
    for (uint32_t n = 0; n < WF_QUEUE_MAX_QUEUES; n++) {
        ASGST_Queue *q = &POOL[(pool_next + n) % POOL_WRAP];
        if (q->live != QUEUE_LIVE) {
            pool_next = (uint32_t)(q - POOL + 1) % WF_QUEUE_MAX_QUEUES;
            return q;
        }
    }
    return NULL;
}

ASGST_Queue *ASGST_RegisterQueue(void *env, int size, int options, ASGST_Handler fun,
                                 void *argument) {
    if (env != NULL || fun == NULL || !valid_size(size)) return NULL; /* no such thread/queue */
    if (self.exited || self.in_safepoint) return NULL; /* dead thread / queue set frozen */
    queue_slot *ring = calloc(size > 0 ? (size_t)size : 1, sizeof *ring);
    if (ring == NULL) return NULL;
    pthread_mutex_lock(&pool_lock);
    ASGST_Queue *q = claim_pool_slot();
    if (q != NULL) {
        *q = (ASGST_Queue){.owner = &self,
                           .fun = fun,
                           .arg = argument,
                           .options = options,
                           .ring = ring,
                           .capacity = (uint32_t)size,
                           .pending_capacity = -1};
        compiler_fence();
        q->live = QUEUE_LIVE;
    }
    pthread_mutex_unlock(&pool_lock);
    if (q == NULL) {
        free(ring);
        return NULL; /* pool exhausted */
    }
    if (self.tail != NULL) self.tail->next = q;
    else self.head = q;
    self.tail = q;
    return q;
}

static void unlink_queue(ASGST_Queue *q) {
    ASGST_Queue **link = &self.head, *prev = NULL;
    while (*link != q) {
        prev = *link;
        link = &(*link)->next;
    }
    *link = q->next;
    if (self.tail == q) self.tail = prev;
}

/* Mark dead first (a signal handler then sees no queue), then free the ring. */
static void discard(ASGST_Queue *q) {
    q->counters.dropped += load_size(q);
    q->live = 0;
    compiler_fence();
    free(q->ring);
    q->ring = NULL;
    store_size(q, 0);
}

int ASGST_DeregisterQueue(void *env, ASGST_Queue *queue) {
    ASGST_Queue *q = live_queue(queue);
    if (env != NULL || q == NULL || q->owner != &self || self.in_safepoint) return 0;
    unlink_queue(q);
    discard(q);
    return 1;
}

static int reject(int code, uint64_t *counter) {
    bump(counter);
    return code;
}

/* Walk the top frame straight into the free slot at head+size, which no reader looks at
   until the release store of size publishes it; a failed walk leaves only that unpublished
   slot written. No division: head and size are both below capacity, so head+size wraps with
   one subtraction. Runs with the owner's `enqueuing` flag raised. */
static int enqueue_top(ASGST_Queue *q, void *ucontext, const struct wf_vm_thread *t,
                       void *argument) {
    uint32_t size = load_size(q), capacity = q->capacity;
    if (size >= capacity) return reject(ASGST_ENQUEUE_FULL_QUEUE, &q->counters.full);
    uint32_t at = q->head + size;
    queue_slot *slot = &q->ring[at >= capacity ? at - capacity : at];
    int rc = probe_top(ucontext, t, slot);
    if (rc != 1) return reject(rc, &q->counters.walk_failed);
    slot->element.arg = argument;
    store_size(q, size + 1); /* the slot before the size */
    bump(&q->counters.enqueued);
    return ASGST_JAVA_TRACE;
}

/* Async-signal-safe, nested signals included ("Ordering" above). */
int ASGST_Enqueue(ASGST_Queue *queue, void *ucontext, void *argument) {
    ASGST_Queue *q = live_queue(queue);
    if (q == NULL) return ASGST_ENQUEUE_NO_QUEUE;
    count_attempt(q);
    const struct wf_vm_thread *t = mapped_thread(walked_sp(ucontext));
    if (q->owner != &self && !(t != NULL && (t->flags & WF_THREAD_SUSPENDED)))
        return reject(ASGST_ENQUEUE_OTHER_ERROR, &q->counters.other); /* running elsewhere */
    queue_thread *owner = q->owner;
    if (owner->in_safepoint)
        return reject(ASGST_ENQUEUE_OTHER_ERROR, &q->counters.other); /* at its safepoint */
    if (owner->enqueuing)
        return reject(ASGST_ENQUEUE_OTHER_ERROR, &q->counters.other); /* inside an Enqueue */
    owner->enqueuing = 1;
    compiler_fence();
    int rc = enqueue_top(q, ucontext, t, argument);
    compiler_fence();
    owner->enqueuing = 0;
    return rc;
}

int ASGST_GetEnqueuableElement(void *ucontext, ASGST_QueueElement *element) {
    if (element == NULL) return ASGST_WF_BAD_ARGUMENT;
    queue_slot slot;
    int rc = probe_top(ucontext, mapped_thread(walked_sp(ucontext)), &slot);
    if (rc == 1) *element = slot.element;
    return rc;
}

ASGST_QueueElement *ASGST_GetQueueElement(ASGST_Queue *queue, int n) {
    ASGST_Queue *q = live_queue(queue);
    if (q == NULL) return NULL;
    int64_t size = load_size(q), i = n < 0 ? size + n : n;
    if (i < 0 || i >= size) return NULL; /* out of bounds */
    return &q->ring[(q->head + (uint64_t)i) % q->capacity].element;
}

void ASGST_ResizeQueue(ASGST_Queue *queue, int size) {
    ASGST_Queue *q = live_queue(queue);
    if (q != NULL && q->owner == &self && valid_size(size)) q->pending_capacity = size;
}

ASGST_QueueSizeInfo ASGST_GetQueueSizeInfo(ASGST_Queue *queue) {
    ASGST_Queue *q = live_queue(queue);
    if (q == NULL) return (ASGST_QueueSizeInfo){0, 0, 0};
    return (ASGST_QueueSizeInfo){(int32_t)load_size(q), (int32_t)q->capacity,
                                 (int32_t)load_attempts(q)};
}

static void set_hook(queue_hook *hook, int options, bool offer, ASGST_OnQueueSafepointHandler fun,
                     void *arg) {
    *hook = (queue_hook){fun, arg, options, offer};
}

void ASGST_SetOnQueueProcessingStart(ASGST_Queue *queue, int options, bool offerIterator,
                                     ASGST_OnQueueSafepointHandler before, void *arg) {
    ASGST_Queue *q = live_queue(queue);
    if (q != NULL) set_hook(&q->on_start, options, offerIterator, before, arg);
}

void ASGST_SetOnQueueProcessingEnd(ASGST_Queue *queue, int options, bool offerIterator,
                                   ASGST_OnQueueSafepointHandler end, void *arg) {
    ASGST_Queue *q = live_queue(queue);
    if (q != NULL) set_hook(&q->on_end, options, offerIterator, end, arg);
}

/* ---- the safepoint ----------------------------------------------------------------------- */

typedef struct safepoint {
    const struct wf_vm_thread *thread; /* NULL: nothing mapped, every walk says NO_THREAD */
    wf_walk_start frame;               /* the thread's top Java frame at the poll */
} safepoint;

typedef struct hook_call {
    ASGST_Queue *queue;
    const queue_hook *hook;
} hook_call;

static void call_hook(ASGST_Iterator *it, void *arg) {
    hook_call *c = arg;
    c->hook->fun(c->queue, it, c->hook->arg);
}

static void run_hook(const safepoint *sp, ASGST_Queue *q, const queue_hook *hook) {
    if (hook->fun == NULL) return;
    if (!hook->offer_iterator) {
        hook->fun(q, NULL, hook->arg);
        return;
    }
    hook_call c = {q, hook};
    wf_ref_run_at(sp->thread, &sp->frame, hook->options, call_hook, &c);
}

/* Is the enqueued frame still there? Not if it is newer than the poll's frame (popped), nor
   if its return address word changed (another frame lives there now), nor if a checked word
   of its callers changed (the frame returned, a caller ran on and called again from the same
   sp: the trace at enqueue time is no longer on the stack). */
static int frame_gone(const safepoint *sp, const queue_slot *s) {
    if ((uintptr_t)s->element.sp < sp->frame.sp) return 1;
    if (stack_word(sp->thread, s->return_slot) != s->return_pc) return 1;
    for (uint32_t i = 0; i < s->checked; i++)
        if (stack_word(sp->thread, s->check[i].addr) != s->check[i].value) return 1;
    return 0;
}

typedef struct element_call {
    ASGST_Queue *queue;
    void *arg;
} element_call;

static void call_element(ASGST_Iterator *it, void *arg) {
    element_call *c = arg;
    c->queue->fun(it, c->queue->arg, c->arg);
}

/* The oldest element: the handler runs while it is still index 0, then it is removed. */
static void process_element(const safepoint *sp, ASGST_Queue *q) {
    const queue_slot *s = &q->ring[q->head];
    wf_walk_start start = {(uintptr_t)s->element.sp,
                           (uintptr_t)s->element.fp,
                           (uintptr_t)s->element.pc,
                           s->method,
                           s->bcp,
                           sp->frame.error};
    if (start.error == 0 && frame_gone(sp, s)) {
        start.error = ASGST_WF_FRAME_GONE;
        q->counters.gone++;
    }
    element_call c = {q, s->element.arg};
    wf_ref_run_at(sp->thread, &start, q->options, call_element, &c);
    q->head = q->head + 1 == q->capacity ? 0 : q->head + 1;
    store_size(q, load_size(q) - 1);
    q->counters.processed++;
}

static int process_queue(const safepoint *sp, ASGST_Queue *q) {
    uint32_t n = load_size(q); /* fixed: Enqueue rejects during the safepoint */
    if (n == 0) return 0;
    run_hook(sp, q, &q->on_start);
    for (uint32_t i = 0; i < n; i++) process_element(sp, q);
    run_hook(sp, q, &q->on_end);
    return (int)n;
}

/* End of the safepoint: the queue is empty, so a resize only swaps the ring. */
static void finish_queue(ASGST_Queue *q) {
    int32_t want = q->pending_capacity;
    q->pending_capacity = -1;
    if (want >= 0 && (uint32_t)want != q->capacity) {
        queue_slot *ring = calloc(want > 0 ? (size_t)want : 1, sizeof *ring);
        if (ring != NULL) { /* out of memory: keep the old capacity */
            free(q->ring);
            q->ring = ring;
            q->capacity = (uint32_t)want;
            q->head = 0;
        }
    }
    __atomic_store_n(&q->attempts, 0, __ATOMIC_RELAXED);
    q->counters.safepoints++;
}

int wf_queue_safepoint(uintptr_t sp, uintptr_t fp, uintptr_t pc) {
    if (self.in_safepoint) return -1; /* a poll inside a handler: already processing */
    self.in_safepoint = 1;
    compiler_fence();
    safepoint at = {.thread = mapped_thread(sp), .frame = {sp, fp, pc, 0, 0, 0}};
    if (at.thread == NULL) at.frame.error = ASGST_NO_THREAD; /* nothing to walk */
    int total = 0;
    for (ASGST_Queue *q = self.head; q != NULL; q = q->next) total += process_queue(&at, q);
    for (ASGST_Queue *q = self.head; q != NULL; q = q->next) finish_queue(q);
    compiler_fence();
    self.in_safepoint = 0;
    return total;
}

/* ---- thread exit ------------------------------------------------------------------------- */

static int discard_all(void) {
    int n = 0;
    while (self.head != NULL) {
        ASGST_Queue *q = self.head;
        self.head = q->next;
        discard(q);
        n++;
    }
    self.tail = NULL;
    return n;
}

int wf_queue_thread_exit(void) {
    if (self.in_safepoint) return -1;
    self.exited = 1;
    return discard_all();
}

/* correctness fix (queue harness, fault inside a safepoint): the VM resets a thread only
   outside its polls, so in_safepoint set here was left by a fault the guard siglongjmp'ed out
   of a handler or an element walk. Leaving it set froze the thread (every later Register,
   Enqueue and safepoint refused): clear it, then start over. */
void wf_queue_thread_reset(void) {
    self.in_safepoint = 0;
    self.enqueuing = 0; /* likewise for a fault inside an Enqueue */
    discard_all();
    self.exited = 0;
}

void wf_queue_get_counters(ASGST_Queue *queue, wf_queue_counters *out) {
    if (is_pool_slot(queue)) *out = queue->counters;
    else memset(out, 0, sizeof *out);
}
