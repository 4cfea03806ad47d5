/* wf_arch_x86_64.h — one instruction (or none: what the compiler may not move or drop) each,
 * behind a name, for x86-64 (included through wf_arch.h). Each is inlined where it is called,
 * so that an instruction a signal must find in its caller (a syscall) is there.
 */
#ifndef WF_ARCH_X86_64_H
#define WF_ARCH_X86_64_H

#include <stdint.h>

#define WF_ARCH_INLINE static inline __attribute__((always_inline, unused))

/* The compiler neither moves memory accesses across this point nor keeps memory in registers
   over it (it emits no instruction). Async-signal-safe. */
WF_ARCH_INLINE void wf_arch_compiler_barrier(void) { __asm__ volatile("" ::: "memory"); }

/* The compiler takes *p as read through p here: the stores before stay. Async-signal-safe. */
WF_ARCH_INLINE void wf_arch_keep_memory(const volatile void *p) {
    __asm__ volatile("" : : "r"(p) : "memory");
}

/* The compiler takes x as used here: the computation of x is not optimised away. */
WF_ARCH_INLINE void wf_arch_keep_value(uint64_t x) { __asm__ volatile("" : : "r"(x)); }

/* The compiler cannot see through *x (kept in a register, its value unknown after this):
   a loop computing it is not folded away. Async-signal-safe. */
WF_ARCH_INLINE void wf_arch_opaque(uintptr_t *x) { __asm__ volatile("" : "+r"(*x)); }

/* As wf_arch_opaque for two values, with no barrier: the compiler keeps both in registers
   and does not fold the constants they hold into the addresses computed from them. */
WF_ARCH_INLINE void wf_arch_opaque_pair(uintptr_t *a, uintptr_t *b) {
    __asm__("" : "+r"(*a), "+r"(*b));
}

/* *counter += 1 as one instruction: a signal handler running on this thread sees the counter
   before or after it, never halfway. Async-signal-safe. */
WF_ARCH_INLINE void wf_arch_add_one_u64(uint64_t *counter) {
    __asm__ volatile("addq $1, %0" : "+m"(*counter));
}
WF_ARCH_INLINE void wf_arch_add_one_u32(uint32_t *counter) {
    __asm__ volatile("addl $1, %0" : "+m"(*counter));
}

/* System call nr with three arguments as one `syscall` instruction in the caller (not in the
   C library): a signal it raises, or one that interrupts it, has the caller's pc. Returns
   what the kernel returned (a negative errno on failure). Async-signal-safe. */
WF_ARCH_INLINE long wf_arch_syscall3(long nr, long a, long b, long c) {
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

#endif /* WF_ARCH_X86_64_H */
