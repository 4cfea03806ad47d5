/* Capture of a known chain as a snapshot, from a live sample: the chain's bottom sends a signal
 * to its own thread with a raw syscall instruction, so the interrupted pc is inside the bottom
 * itself, and the handler copies the registers and the stack into preallocated memory.
 *
 *   wf_uw_chain_run (root)               <- truth[T-1]
 *     wf_uw_chain_<path[0]> ... <path[depth-1]>
 *       capture_bottom: syscall tgkill   <- truth[0], pc exact (the instruction after syscall)
 *         on_sample (signal frame)       copies rdx..rip and [sp, min(sp + bytes, top))
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wf_snap_image.h"
#include "wf_arch.h"
#include "wf_ucontext.h"
#include "wf_uw_chain.h"

/* The handler's only memory: filled in the signal handler, read after it returned. */
static struct {
    volatile sig_atomic_t done;
    uintptr_t top; /* the thread's stack top: the copy never reads past it */
    size_t want;   /* bytes asked for */
    uintptr_t regs[WF_SNAP_REGS];
    uintptr_t stack_addr;
    size_t stack_len;
    uint8_t stack[WF_SNAP_MAX_STACK];
} sample;

/* The live stack holds other frames' locals and, under ASan, their redzones: reading them is the
   point here, so this copy is not instrumented (and not a memcpy, which ASan intercepts). */
__attribute__((no_sanitize_address)) static void copy_stack(uint8_t *dst, uintptr_t from,
                                                            size_t n) {
    const volatile uint8_t *src = (const volatile uint8_t *)from;
    for (size_t i = 0; i < n; i++) dst[i] = src[i];
}

static void on_sample(int signo, siginfo_t *info, void *ucontext) {
    (void)signo, (void)info;
    int saved = errno;
    const ucontext_t *uc = ucontext;
    wf_uc_dwarf_regs(uc, sample.regs);
    uintptr_t sp = wf_uc_sp(uc);
    size_t n = sp < sample.top ? sample.top - sp : 0;
    if (n > sample.want) n = sample.want;
    copy_stack(sample.stack, sp, n);
    sample.stack_addr = sp;
    sample.stack_len = n;
    sample.done = 1;
    errno = saved;
}

WF_UW_GENERATED("wf_uw_chain_root_code")
uintptr_t wf_uw_chain_run(wf_uw_chain *c) {
    volatile uintptr_t keep = c->depth;
    uintptr_t r = wf_uw_chain_fns[c->path[0]](c, 0);
    return r + keep;
}

/* The signal arrives on the way out of the syscall: the handler's ucontext has this
   function's pc, sp and registers. */
WF_UW_GENERATED("wf_uw_bottom_code")
static uintptr_t capture_bottom(wf_uw_chain *c) {
    long tid = syscall(SYS_gettid);
    long ret = wf_arch_syscall3(SYS_tgkill, (long)getpid(), tid, (long)c->arg);
    return (uintptr_t)ret + sample.done;
}

static int stack_top(uintptr_t *top) {
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return -1;
    int rc = pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    *top = (uintptr_t)addr + size;
    return rc;
}

static void put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

extern const char __start_wf_uw_bottom_code[], __stop_wf_uw_bottom_code[];
extern const char __start_wf_uw_chain_root_code[], __stop_wf_uw_chain_root_code[];

static void put_range(uint8_t *p, uintptr_t start, uintptr_t end) {
    put64(p, start);
    put64(p + 8, end);
}

static size_t write_snapshot(uint32_t depth, const uint8_t *path, uint8_t *out) {
    uint32_t truth = depth + 2;
    memset(out, 0, WF_SNAP_HEADER);
    memcpy(out, "WFSNAP1", 8);
    out[8] = WF_SNAP_FLAG_EXACT_PC;
    out[10] = (uint8_t)truth;
    put64(out + 16, sample.stack_addr);
    for (int i = 0; i < WF_SNAP_REGS; i++) put64(out + 32 + 8 * i, sample.regs[i]);
    uint8_t *t = out + WF_SNAP_HEADER;
    put_range(t, (uintptr_t)__start_wf_uw_bottom_code, (uintptr_t)__stop_wf_uw_bottom_code);
    for (uint32_t level = depth; level-- > 0;) {
        const wf_uw_range *r = &wf_uw_chain_ranges[path[level]];
        put_range(t += 16, r->start, r->end);
    }
    put_range(t + 16, (uintptr_t)__start_wf_uw_chain_root_code,
              (uintptr_t)__stop_wf_uw_chain_root_code);
    size_t at = wf_snap_map_offset(truth);
    memcpy(out + at, sample.stack, sample.stack_len);
    return at + sample.stack_len;
}

int64_t wf_snap_capture_chain(uint32_t depth, const uint8_t *path, uint32_t stack_bytes,
                              uint8_t *out, size_t cap) {
    if (depth < 1 || depth > WF_UW_MAX_DEPTH || stack_bytes > WF_SNAP_MAX_STACK ||
        cap < wf_snap_map_offset(depth + 2) + stack_bytes || stack_top(&sample.top) != 0)
        return -1;
    int signo = SIGRTMIN + 4;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sample;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(signo, &sa, &old) != 0) return -1;
    sample.done = 0;
    sample.want = stack_bytes;
    wf_uw_chain chain = {.depth = depth, .bottom = capture_bottom, .arg = (void *)(intptr_t)signo};
    for (uint32_t i = 0; i < depth; i++) chain.path[i] = path[i] % WF_UW_CHAIN_FUNCTIONS;
    wf_uw_chain_run(&chain);
    sigaction(signo, &old, NULL);
    if (!sample.done) return -1;
    return (int64_t)write_snapshot(depth, chain.path, out);
}
