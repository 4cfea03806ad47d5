/* guard.c — the crash guard: guarded calls, the fault and hang signal handlers, chaining.
 * Contracts are in wf_guard.h; the watchdog thread is in guard_watchdog.c.
 *
 * Handlers follow the house rules: no malloc, no locks, no stdio; they read initial-exec TLS,
 * write the caller's fault record and siglongjmp.
 */
#define _GNU_SOURCE
#include "wf_guard.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "guard_internal.h"
#include "wf_ucontext.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WF_GUARD_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define WF_GUARD_ASAN 1
#endif

#ifdef WF_GUARD_ASAN
#include <dlfcn.h>
#include <sanitizer/asan_interface.h>
#endif

/* Alternate signal stack given to a thread that has none: room for our handler plus a chained
   one (ASan's report, libFuzzer's crash callback), and a PROT_NONE page below it. */
enum { WF_GUARD_ALTSTACK_BYTES = 256 * 1024 };
/* ASan flavour: a jump that abandons more stack than this came from another stack. */
#define WF_GUARD_MAX_UNPOISON_BYTES (64ull << 20)

static const int guarded_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
enum { GUARDED_SIGNAL_COUNT = sizeof guarded_signals / sizeof guarded_signals[0] };

/* The handler each guarded signal had before ours; written once, before ours is installed. */
static struct sigaction previous_actions[GUARDED_SIGNAL_COUNT];
static int handlers_installed; /* read with acquire, set under install_lock */
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static wf_guard_first_responder_fn first_responder; /* atomic pointer */

__thread wf_guard_frame *wf_guard_top __attribute__((tls_model("initial-exec")));
static __thread int thread_ready __attribute__((tls_model("initial-exec")));
/* Defined beside the handlers that read it, so that the watchdog, which claims it, depends on
   this file and this file on nothing of the watchdog's. */
__thread wf_watch_slot *wf_guard_watch_slot __attribute__((tls_model("initial-exec")));

static pthread_key_t altstack_key; /* its destructor frees a thread's alternate stack */
static pthread_once_t altstack_key_once = PTHREAD_ONCE_INIT;

/* ---- the jump back --------------------------------------------------------------------------- */

#ifdef WF_GUARD_ASAN
/* ASan's siglongjmp interceptor unpoisons the thread's whole stack and, on the main thread,
   finds its bounds by parsing /proc/self/maps: about a millisecond per caught fault. The ASan
   flavour jumps with glibc's own siglongjmp instead and unpoisons only what the jump abandoned:
   the stack between the faulting sp and the guarded call, and the alternate signal stack. */
typedef void (*siglongjmp_fn)(sigjmp_buf env, int value);
static siglongjmp_fn libc_siglongjmp = siglongjmp;

static void find_libc_siglongjmp(void) {
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    siglongjmp_fn found = libc != NULL ? (siglongjmp_fn)dlsym(libc, "siglongjmp") : NULL;
    if (found != NULL) libc_siglongjmp = found;
}

static void unpoison_abandoned_stacks(const wf_guard_frame *frame, uintptr_t guard_fp) {
    if (frame->fault_sp < guard_fp && guard_fp - frame->fault_sp < WF_GUARD_MAX_UNPOISON_BYTES)
        __asan_unpoison_memory_region((void *)frame->fault_sp, guard_fp - frame->fault_sp);
    stack_t altstack;
    if (sigaltstack(NULL, &altstack) == 0 && !(altstack.ss_flags & SS_DISABLE))
        __asan_unpoison_memory_region(altstack.ss_sp, altstack.ss_size);
}
#endif

/* Never returns, but is not declared noreturn: ASan instruments every call of a noreturn
   function with __asan_handle_no_return, the millisecond the ASan flavour avoids. */
static void jump_back(wf_guard_frame *frame) {
#ifdef WF_GUARD_ASAN
    libc_siglongjmp(frame->env, 1);
#else
    siglongjmp(frame->env, 1);
#endif
}

/* The frame pointer of a guarded call, which only the ASan flavour needs (taking it would cost
   the plain build a frame-pointer set-up on the fast path). */
#ifdef WF_GUARD_ASAN
#define GUARDED_CALL_FP() ((uintptr_t)__builtin_frame_address(0))
#else
#define GUARDED_CALL_FP() ((uintptr_t)0)
#endif

/* The guarded call `frame` (whose frame pointer is guard_fp) was jumped back to. */
static inline void after_jump(const wf_guard_frame *frame, uintptr_t guard_fp) {
#ifdef WF_GUARD_ASAN
    unpoison_abandoned_stacks(frame, guard_fp);
#endif
}

/* ---- signal handlers ------------------------------------------------------------------------ */

static uintptr_t faulting_pc(const void *ucontext) { return wf_uc_pc(ucontext); }

static void record_fault(wf_guard_frame *frame, int kind, int signo, int si_code, uintptr_t addr,
                         const void *ucontext) {
    wf_fault *fault = frame->fault;
    fault->kind = kind;
    fault->signo = signo;
    fault->si_code = si_code;
    fault->addr = addr;
    fault->pc = faulting_pc(ucontext);
    frame->fault_sp = wf_uc_sp(ucontext);
    fault->frames = frame->frames;
    fault->last_sp = frame->last_sp;
    fault->last_fp = frame->last_fp;
    fault->last_pc = frame->last_pc;
}

/* Leave the handler for the guarded call `frame`. The fast variant saved no signal mask, so the
   signal being handled would stay blocked after the jump and the next fault would kill us:
   unblock it first. The masked variant's siglongjmp restores the whole saved mask. Never
   returns (see jump_back). */
static void unwind_to(wf_guard_frame *frame, int signo) {
    if (!frame->masked) {
        sigset_t handled;
        sigemptyset(&handled);
        sigaddset(&handled, signo);
        pthread_sigmask(SIG_UNBLOCK, &handled, NULL);
    }
    jump_back(frame);
}

static const struct sigaction *previous_action(int signo) {
    for (int i = 0; i < GUARDED_SIGNAL_COUNT; i++)
        if (guarded_signals[i] == signo) return &previous_actions[i];
    return NULL;
}

/* A fault outside any guard goes where it would have gone without us. For SIG_DFL (and SIG_IGN,
   which the kernel overrides for a synchronous fault) restore the default action: a real fault
   then re-executes and dies with its own state; a sent signal is raised again. */
static void chain_to_previous(int signo, siginfo_t *info, void *ucontext) {
    const struct sigaction *previous = previous_action(signo);
    if (previous->sa_flags & SA_SIGINFO) {
        previous->sa_sigaction(signo, info, ucontext);
        return;
    }
    if (previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
        previous->sa_handler(signo);
        return;
    }
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    sigaction(signo, &default_action, NULL);
    if (info->si_code <= 0) raise(signo);
}

/* Only faults the thread's own instructions caused (si_code > 0) belong to a guarded call; a
   SIGSEGV someone sent with kill() is passed on. */
static void on_fault(int signo, siginfo_t *info, void *ucontext) {
    int saved_errno = errno;
    wf_guard_first_responder_fn responder = __atomic_load_n(&first_responder, __ATOMIC_ACQUIRE);
    if (responder != NULL && responder(signo, info, ucontext)) {
        errno = saved_errno;
        return;
    }
    wf_guard_frame *frame = wf_guard_top;
    if (frame != NULL && info->si_code > 0) {
        record_fault(frame, WF_FAULT_SIGNAL, signo, info->si_code, (uintptr_t)info->si_addr,
                     ucontext);
        unwind_to(frame, signo);
    }
    chain_to_previous(signo, info, ucontext);
    errno = saved_errno;
}

/* The watchdog interrupted the call numbered kill_seq. If that call is still on this thread's
   chain, unwind to it (possibly past inner guarded calls); if it already returned, ignore.
   Inside the C library, the allocator or the loader (which may hold a lock the unwind would
   leave taken), let it run on: kill_seq cleared, the watchdog asks again a period later. */
static void on_hang(int signo, siginfo_t *info, void *ucontext) {
    wf_watch_slot *slot = wf_guard_watch_slot;
    if (slot == NULL) return;
    if (wf_guard_in_unsafe_code(faulting_pc(ucontext))) {
        __atomic_store_n(&slot->kill_seq, 0, __ATOMIC_RELEASE);
        return;
    }
    uint64_t target = __atomic_load_n(&slot->kill_seq, __ATOMIC_ACQUIRE);
    for (wf_guard_frame *frame = wf_guard_top; frame != NULL; frame = frame->prev) {
        if (frame->seq == target) {
            record_fault(frame, WF_FAULT_HANG, signo, info->si_code, 0, ucontext);
            unwind_to(frame, signo);
        }
    }
}

/* ---- installation --------------------------------------------------------------------------- */

static void install_action(int signo, void (*handler)(int, siginfo_t *, void *), int flags) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | flags;
    sigemptyset(&action.sa_mask);
    sigaction(signo, &action, NULL);
}

/* Read every previous action before installing any of ours, so that a fault on another thread
   in between never chains to an unwritten record. */
static void install_fault_handlers(void) {
    pthread_mutex_lock(&install_lock);
    if (!__atomic_load_n(&handlers_installed, __ATOMIC_ACQUIRE)) {
#ifdef WF_GUARD_ASAN
        find_libc_siglongjmp();
#endif
        for (int i = 0; i < GUARDED_SIGNAL_COUNT; i++)
            sigaction(guarded_signals[i], NULL, &previous_actions[i]);
        for (int i = 0; i < GUARDED_SIGNAL_COUNT; i++)
            install_action(guarded_signals[i], on_fault, 0);
        __atomic_store_n(&handlers_installed, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&install_lock);
}

void wf_guard_install_hang_handler(void) {
    wf_guard_find_unsafe_code();
    install_action(wf_guard_hang_signal(), on_hang, SA_RESTART);
}

static void free_altstack(void *base) {
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && current.ss_sp == (char *)base + getpagesize()) {
        stack_t disable = {.ss_flags = SS_DISABLE};
        sigaltstack(&disable, NULL);
    }
    munmap(base, (size_t)getpagesize() + WF_GUARD_ALTSTACK_BYTES);
}

static void create_altstack_key(void) { pthread_key_create(&altstack_key, free_altstack); }

/* Without an alternate stack a stack overflow inside a guarded call has nowhere to run the
   handler and kills the process. Keep a stack someone else (the JVM, ASan, faulthandler) set. */
static void give_thread_altstack(void) {
    stack_t current;
    if (sigaltstack(NULL, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;
    size_t page = (size_t)getpagesize();
    char *base = mmap(NULL, page + WF_GUARD_ALTSTACK_BYTES, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) return;
    mprotect(base, page, PROT_NONE);
    stack_t altstack = {.ss_sp = base + page, .ss_size = WF_GUARD_ALTSTACK_BYTES, .ss_flags = 0};
    if (sigaltstack(&altstack, NULL) != 0) {
        munmap(base, page + WF_GUARD_ALTSTACK_BYTES);
        return;
    }
    pthread_once(&altstack_key_once, create_altstack_key);
    pthread_setspecific(altstack_key, base);
}

void wf_guard_prepare_thread(void) {
    if (thread_ready) return;
    if (!__atomic_load_n(&handlers_installed, __ATOMIC_ACQUIRE)) install_fault_handlers();
    give_thread_altstack();
    thread_ready = 1;
}

/* ---- guarded calls -------------------------------------------------------------------------- */

/* Everything a guarded call sets before sigsetjmp, so nothing the jump returns to was changed
   in between except the volatile progress fields. */
static inline void frame_init(wf_guard_frame *frame, wf_fault *fault, int masked) {
    if (__builtin_expect(!thread_ready, 0)) wf_guard_prepare_thread();
    frame->prev = wf_guard_top;
    frame->fault = fault;
    frame->masked = masked;
    frame->frames = 0;
    frame->last_sp = frame->last_fp = frame->last_pc = 0;
    wf_watch_slot *slot = wf_guard_watch_slot;
    if (slot != NULL) {
        frame->seq = ++slot->next_seq;
        frame->outer_seq = slot->active_seq;
    } else {
        frame->seq = frame->outer_seq = 0;
    }
}

static inline void frame_pop(const wf_guard_frame *frame) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (frame->seq != 0)
        __atomic_store_n(&wf_guard_watch_slot->active_seq, frame->outer_seq, __ATOMIC_RELEASE);
    wf_guard_top = frame->prev;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline intptr_t frame_run(wf_guard_frame *frame, wf_guarded_fn fn, void *arg) {
    wf_guard_top = frame;
    if (frame->seq != 0)
        __atomic_store_n(&wf_guard_watch_slot->active_seq, frame->seq, __ATOMIC_RELEASE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    intptr_t result = fn(arg);
    frame_pop(frame);
    return result;
}

int wf_guard_call(wf_guarded_fn fn, void *arg, intptr_t *result, wf_fault *fault) {
    wf_guard_frame frame;
    frame_init(&frame, fault, 0);
    if (sigsetjmp(frame.env, 0) != 0) {
        after_jump(&frame, GUARDED_CALL_FP());
        frame_pop(&frame);
        return 1;
    }
    *result = frame_run(&frame, fn, arg);
    return 0;
}

int wf_guard_call_masked(wf_guarded_fn fn, void *arg, intptr_t *result, wf_fault *fault) {
    wf_guard_frame frame;
    frame_init(&frame, fault, 1);
    if (sigsetjmp(frame.env, 1) != 0) {
        after_jump(&frame, GUARDED_CALL_FP());
        frame_pop(&frame);
        return 1;
    }
    *result = frame_run(&frame, fn, arg);
    return 0;
}

int wf_guard_depth(void) {
    int depth = 0;
    for (const wf_guard_frame *frame = wf_guard_top; frame != NULL; frame = frame->prev) depth++;
    return depth;
}

int wf_guard_hang_signal(void) { return SIGRTMAX - 2; }

void wf_guard_set_first_responder(wf_guard_first_responder_fn fn) {
    __atomic_store_n(&first_responder, fn, __ATOMIC_RELEASE);
}
