/* wf_guard.h — the crash guard: run a call so that a fault or a hang inside it comes back as
 * data instead of killing the process. Modelled on HotSpot's ThreadCrashProtection.
 *
 * A guarded call pushes a guard frame on the caller's stack and links it into a per-thread
 * chain whose head is an initial-exec TLS pointer. The frame holds the sigjmp_buf, so guards
 * nest (a sampling signal handler may run a guarded walk while the interrupted thread is itself
 * inside a guarded call) and the TLS footprint stays at a few words, which matters because the
 * module is dlopen'ed and initial-exec TLS comes out of glibc's small static-TLS surplus.
 *
 *     TLS wf_guard_top ──► wf_guard_frame (innermost, on the stack of wf_guard_call)
 *                            env, fault*, progress, seq
 *                            prev ──► wf_guard_frame (outer call) ── prev ──► NULL
 *
 * On SIGSEGV/SIGBUS/SIGILL/SIGFPE the handler (installed lazily by the first guarded call of the
 * process, so that under libFuzzer the chain is guard → libFuzzer) asks the first responder, if
 * one is set; then, if the thread has a guard frame, it fills the fault record and siglongjmps
 * to that frame; otherwise it chains to the handler that was installed before it (SA_SIGINFO or
 * plain; SIG_DFL/SIG_IGN: default action restored and the signal re-raised).
 *
 * Hangs: wf_guard_set_budget_ns() registers the thread with a watchdog thread. A guarded call
 * only bumps a sequence number in the thread's slot (no syscall, no clock read); the watchdog
 * polls the slots every budget/8 and tgkills a thread whose call has not changed for the whole
 * budget with wf_guard_hang_signal(), whose handler siglongjmps out with WF_FAULT_HANG. A hang
 * while that signal is blocked (libunwind blocks all signals around its locks) cannot be
 * interrupted; the worker supervisor is the last resort for those.
 *
 * x86-64 Linux only: the faulting pc comes from the ucontext (wf_ucontext.h).
 */
#ifndef WF_GUARD_H
#define WF_GUARD_H

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>

#if !defined(__x86_64__) || !defined(__linux__)
#error "walkfuzz's crash guard supports x86-64 Linux only"
#endif

/* cffi:begin */
typedef enum { WF_FAULT_NONE = 0, WF_FAULT_SIGNAL = 1, WF_FAULT_HANG = 2 } wf_fault_kind;

typedef struct wf_fault {
    int kind;           /* wf_fault_kind */
    int signo, si_code; /* for a hang: wf_guard_hang_signal(), SI_TKILL */
    uintptr_t addr;     /* si_addr (0 for a hang, and for a non-canonical address on x86-64) */
    uintptr_t pc;       /* faulting pc, from the ucontext */
    uint64_t frames;    /* progress marker: frames produced when it faulted */
    uintptr_t last_sp, last_fp, last_pc; /* progress marker: last frame reached */
} wf_fault;

typedef intptr_t (*wf_guarded_fn)(void *arg);

/* Install the fault handlers (first call of the process) and give this thread an alternate
   signal stack if it has none, so that a stack overflow in a guarded call is caught too. The
   first guarded call of a thread does this itself; call it first on a thread whose first
   guarded call may come from a signal handler, since this part is not async-signal-safe. */
void wf_guard_prepare_thread(void);

/* Run fn(arg) under the guard. 0 = returned normally (*result set), 1 = faulted (*fault set).
   Async-signal-safe on a prepared thread (see wf_guard_prepare_thread). */
int wf_guard_call(wf_guarded_fn fn, void *arg, intptr_t *result, wf_fault *fault);

/* Same, restoring the full signal mask on a fault (sigsetjmp(env,1), one syscall a call); for
   walkers that block signals internally, e.g. libunwind. Async-signal-safe on a prepared
   thread. */
int wf_guard_call_masked(wf_guarded_fn fn, void *arg, intptr_t *result, wf_fault *fault);

/* Watchdog: a guarded call of this thread running longer than budget_ns is interrupted and
   returns a WF_FAULT_HANG fault, at most about budget_ns * 1.25 after it started (plus
   scheduling delay). 0 disables. Per thread; call it again in a child after fork().
   0 = done; -1 = not watched: 1024 threads already hold a budget, or no watchdog thread. */
int wf_guard_set_budget_ns(uint64_t budget_ns);

/* This thread's watchdog budget in ns; 0 when none is set. Async-signal-safe. */
uint64_t wf_guard_budget_ns(void);

/* The real-time signal the watchdog sends to interrupt a hung call (SIGRTMAX - 2).
   Async-signal-safe. */
int wf_guard_hang_signal(void);

/* Number of guard frames active on this thread (0 outside any guarded call).
   Async-signal-safe. */
int wf_guard_depth(void);
/* cffi:end */

/* A first responder sees every fault signal before the guard does; it returns nonzero when it
   handled the fault (for instance JVM_handle_linux_signal fixing up a SafeFetch or an implicit
   null check), and the guard then returns from its handler. NULL removes it. Set it before
   the faults it must see; it is one process-wide pointer. */
typedef int (*wf_guard_first_responder_fn)(int sig, siginfo_t *info, void *ucontext);
void wf_guard_set_first_responder(wf_guard_first_responder_fn fn);

/* One active guarded call. Lives on the stack of wf_guard_call; fields are the guard's own. */
typedef struct wf_guard_frame {
    sigjmp_buf env;
    struct wf_guard_frame *prev; /* the enclosing guarded call on this thread, or NULL */
    wf_fault *fault;             /* where the handler writes the fault record */
    uint64_t seq;                /* watchdog sequence number of this call; 0 = not watched */
    uint64_t outer_seq;          /* the slot's active sequence number before this call */
    int masked;                  /* entered through wf_guard_call_masked */
    uintptr_t fault_sp;          /* sp at the fault: the stack the jump abandons ends there */
    volatile uint64_t frames;    /* progress marker, written by wf_guard_progress */
    volatile uintptr_t last_sp, last_fp, last_pc;
} wf_guard_frame;

/* Head of this thread's guard-frame chain (innermost active call), or NULL. */
extern __thread wf_guard_frame *wf_guard_top __attribute__((tls_model("initial-exec")));

/* Progress marker a walker updates as it goes; copied into the fault record if the call faults.
   No effect outside a guarded call. Async-signal-safe. */
static inline void wf_guard_progress(uint64_t frames, uintptr_t sp, uintptr_t fp, uintptr_t pc) {
    wf_guard_frame *frame = wf_guard_top;
    if (frame == NULL) return;
    frame->last_sp = sp;
    frame->last_fp = fp;
    frame->last_pc = pc;
    frame->frames = frames;
}

#endif /* WF_GUARD_H */
