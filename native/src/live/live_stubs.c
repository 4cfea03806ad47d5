/* live_stubs.c — the live VM's fixed machine code: the interpreter and the entry stub, written
 * by hand in the architecture's folder (native/include/arch/x86_64/wf_live_stubs.h, which
 * draws the frames they build). live_vm.c copies their bytes into the code heap.
 */
#include "arch/x86_64/wf_live_stubs.h"
