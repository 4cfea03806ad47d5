/* wf_arch.h — the machine's instructions written by hand, behind names: the one header that
 * picks the architecture's folder under native/include/arch/. Nothing else in native/ writes
 * inline assembly; a whole stub of hand-written code is a header of that folder, included by
 * the one file that owns it (live_stubs.c, wf_unw_libgcc.c, guard_testing.c). The registers
 * of a signal's ucontext are wf_ucontext.h's.
 */
#ifndef WF_ARCH_H
#define WF_ARCH_H

#if defined(__x86_64__)
#include "arch/x86_64/wf_arch_x86_64.h"
#else
#error "walkfuzz's hand-written machine code is for x86-64 only (native/include/arch/)"
#endif

#endif /* WF_ARCH_H */
