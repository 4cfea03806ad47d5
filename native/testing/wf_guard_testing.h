/* wf_guard_testing.h — instruments that exercise the crash guard from Python tests (through
 * cffi) and from child processes: functions that fault in a known way, loops that count faults
 * in C, threads, mappings, and a previous handler that records what reached it.
 *
 * Functions of type wf_guarded_fn (intptr_t fn(void *)) are meant to be passed to
 * wf_guard_call; the others are called directly.
 */
#ifndef WF_GUARD_TESTING_H
#define WF_GUARD_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "wf_guard.h"

/* cffi:begin */
/* Reads the word at addr; the load is the function's first instruction, so a fault's pc is the
   function's address. Hand-written assembly: no sanitizer checks a wild pointer first. */
intptr_t wf_guard_test_read(void *addr);

/* Executes ud2 as its first instruction: SIGILL/ILL_ILLOPN at the function's address. */
intptr_t wf_guard_test_illegal(void *unused);

/* Divides dividend by zero with idiv within its first 16 bytes: SIGFPE/FPE_INTDIV. */
intptr_t wf_guard_test_divide_by_zero(void *dividend);

/* Reads the word at addr like wf_guard_test_read; when the safefetch first responder is on, a
   fault resumes at a continuation that returns -1 (HotSpot's SafeFetch, in miniature). */
intptr_t wf_guard_test_safefetch(void *addr);

/* Sets (on != 0) or removes the first responder that resumes faults in wf_guard_test_safefetch
   and declines every other fault. */
void wf_guard_test_use_safefetch_responder(int on);

/* Returns arg. */
intptr_t wf_guard_test_identity(void *arg);

/* Returns wf_guard_depth() as seen inside the call. */
intptr_t wf_guard_test_depth(void *unused);

/* Spins until limit_ns (the argument, as an integer) have elapsed, then returns 0; a safety
   valve, so that a broken watchdog fails a test instead of hanging it. */
intptr_t wf_guard_test_spin(void *limit_ns);
/* Sleep ns (blocked: no CPU time), with the syscall in this code rather than the C library. */
intptr_t wf_guard_test_sleep(void *ns);
/* malloc and free 100 KiB blocks until limit_ns have passed; the rounds done. */
intptr_t wf_guard_test_alloc_spin(void *limit_ns);

/* Marks progress (frames 3, sp 0x7000, fp 0x7100, pc 0x7200), then reads the word at addr. */
intptr_t wf_guard_test_progress_then_read(void *addr);

/* Makes a guarded read of addr inside this call; returns the inner fault's address, or -1 if
   the inner call returned normally. */
intptr_t wf_guard_test_nested_read(void *addr);

/* Puts an address-taken array on its stack (redzones under ASan), then reads the word at addr. */
intptr_t wf_guard_test_redzones_then_read(void *addr);

/* Fills 16 KiB of its stack with memset called from uninstrumented code. Under ASan, a redzone
   left on that stack by a call the guard jumped out of is reported as a stack-buffer-overflow.
   Returns 0. */
intptr_t wf_guard_test_fill_stack(void *unused);

/* Blocks SIGUSR2 in the calling thread, then reads the word at addr. */
intptr_t wf_guard_test_block_then_read(void *addr);

/* A new thread with a stack of stack_bytes recurses without bound under wf_guard_call.
   Returns the guard's status (1 = faulted, *fault set) or -1 if the thread could not start. */
int wf_guard_test_overflow_in_thread(size_t stack_bytes, wf_fault *fault);

/* 1 if the calling thread has an alternate signal stack, else 0. */
int wf_guard_test_has_altstack(void);

/* count guarded reads of addr on this thread. Returns the faults that came back with SIGSEGV
   and addr; *wrong counts the calls that returned or reported anything else. */
uint64_t wf_guard_test_fault_loop(uintptr_t addr, uint64_t count, uint64_t *wrong);

typedef struct wf_guard_test_thread {
    uintptr_t addr;      /* in: the address this thread reads */
    uint64_t faults;     /* out: faults reported with SIGSEGV and this thread's addr */
    uint64_t wrong;      /* out: calls that returned, or reported another signal or address */
    uintptr_t last_addr; /* out: address in this thread's last fault record */
} wf_guard_test_thread;

/* count threads (at most 64), released together by a barrier, each make faults_each guarded
   reads of its own threads[i].addr. 0 = all ran; -1 = a thread could not start. */
int wf_guard_test_concurrent_faults(wf_guard_test_thread *threads, int count, uint64_t faults_each);

/* mmap(NULL, len, prot, ...) of fd (MAP_SHARED), or anonymous memory when fd < 0. 0 on error. */
uintptr_t wf_guard_test_map(size_t len, int prot, int fd);

/* munmap(addr, len); 0 or -1. */
int wf_guard_test_unmap(uintptr_t addr, size_t len);

/* Installs, for signo, a handler that writes one line "recorded signo=N code=N addr=0xN" (or
   "recorded signo=N plain" for a non-SA_SIGINFO handler) to fd 1 and _exit()s with 42 (43 for
   plain). For child processes that prove a fault outside a guard reaches the previous handler.
   0 or -1. */
int wf_guard_test_install_recording_handler(int signo, int siginfo);
/* cffi:end */

#endif /* WF_GUARD_TESTING_H */
