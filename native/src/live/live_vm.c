/* live_vm.c — building the live VM: classes, methods, the code heap (fixed stubs copied from
 * live_stubs.c, compiled methods and wrappers from live_emit.c), transition windows, and the
 * root with one live thread record per worker (wf_vm.h: live_threads). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vm/vm_image.h"
#include "wf_live_vm.h"

_Static_assert(offsetof(struct wf_live_thread, vm) == WF_LIVE_T_VM, "thread layout");
_Static_assert(offsetof(struct wf_live_thread, depth) == WF_LIVE_T_DEPTH, "thread layout");
_Static_assert(offsetof(struct wf_live_thread, poll) == WF_LIVE_T_POLL, "thread layout");
_Static_assert(offsetof(struct wf_live_thread, safepoint_entry) == WF_LIVE_T_SAFEPOINT, "layout");
_Static_assert(offsetof(struct wf_live_thread, shadow) == WF_LIVE_T_SHADOW, "thread layout");
_Static_assert(sizeof(struct wf_live_shadow) == 16, "shadow record");
_Static_assert(offsetof(struct wf_live_method, handle) == WF_LIVE_M_HANDLE, "method layout");
_Static_assert(offsetof(struct wf_live_method, code_base) == WF_LIVE_M_CODE_BASE, "layout");
_Static_assert(offsetof(struct wf_live_method, program) == WF_LIVE_M_PROGRAM, "method layout");
_Static_assert(offsetof(struct wf_live_method, entry) == WF_LIVE_M_ENTRY, "method layout");
_Static_assert(offsetof(struct wf_live_method, index) == WF_LIVE_M_INDEX, "method layout");
_Static_assert(offsetof(struct wf_live_method, shadow_type) == WF_LIVE_M_TYPE, "method layout");
_Static_assert(offsetof(struct wf_live_method, shadow_bci0) == WF_LIVE_M_BCI0, "method layout");
_Static_assert(offsetof(struct wf_vm_thread, state) == WF_LIVE_V_STATE, "vm thread layout");
_Static_assert(offsetof(struct wf_vm_thread, anchor.sp) == WF_LIVE_V_ANCHOR_SP, "anchor");
_Static_assert(offsetof(struct wf_vm_thread, anchor.fp) == WF_LIVE_V_ANCHOR_FP, "anchor");
_Static_assert(offsetof(struct wf_vm_thread, anchor.pc) == WF_LIVE_V_ANCHOR_PC, "anchor");
_Static_assert(sizeof(struct wf_live_insn) == 16, "insn");
_Static_assert(WF_THREAD_IN_JAVA_VALUE == WF_THREAD_IN_JAVA, "state value");
_Static_assert(WF_THREAD_IN_NATIVE_VALUE == WF_THREAD_IN_NATIVE, "state value");
_Static_assert(WF_THREAD_IN_VM_VALUE == WF_THREAD_IN_VM, "state value");
_Static_assert(WF_VM_LIVE_THREADS + WF_VM_MAX_LIVE_THREADS * sizeof(struct wf_vm_thread) <=
                   WF_VM_CLASSES,
               "live thread records fit below the class table");

#define LIVE_CLASSES 4

extern const uint8_t wf_live_interp_begin[], wf_live_interp_frame_done[], wf_live_interp_bci_lo[],
    wf_live_interp_bci_hi[], wf_live_interp_epi_lo[], wf_live_interp_epi_hi[],
    wf_live_interp_call_lo[], wf_live_interp_call_hi[], wf_live_interp_end[], wf_live_entry_begin[],
    wf_live_entry_call_lo[], wf_live_entry_call_hi[], wf_live_entry_end[];

struct wf_vm_thread *wf_live_vm_thread(uint32_t i) {
    return (struct wf_vm_thread *)(uintptr_t)WF_VM_LIVE_THREADS + i;
}

static const char *pool_string(const char *s) {
    return wf_vm_image_string((const uint8_t *)s, (uint32_t)strlen(s));
}

static int write_classes(void) {
    for (uint32_t c = 0; c < LIVE_CLASSES; c++) {
        char name[32];
        snprintf(name, sizeof name, "Lwf/live/W%u;", c);
        struct wf_vm_class *k = WF_VM_CLASS_MUT(c);
        k->name = pool_string(name);
        k->name_length = (uint32_t)strlen(name);
        k->generic_name = pool_string("");
        k->index = c;
        k->modifiers = 1; /* public */
        if (k->name == NULL || k->generic_name == NULL) return -1;
    }
    return 0;
}

static const char *KIND_NAMES[] = {"interpreted", "compiled", "native"};

static int write_method(struct wf_live_method *m) {
    char name[48];
    snprintf(name, sizeof name, "m%u_%s", m->index, KIND_NAMES[m->kind]);
    struct wf_vm_method *vm = WF_VM_METHOD_MUT(m->index);
    vm->klass = (const struct wf_vm_class *)wf_vm_class_handle(m->index % LIVE_CLASSES);
    vm->code_base = WF_VM_BYTECODE + (uintptr_t)m->index * WF_VM_BYTECODE_STRIDE;
    vm->code_size = 3 * m->insn_count;
    vm->modifiers = m->kind == WF_LIVE_NATIVE ? 0x109 : 0x9; /* public static [native] */
    vm->name = pool_string(name);
    vm->signature = pool_string("()V");
    vm->generic_signature = pool_string("");
    vm->name_length = (uint32_t)strlen(name);
    vm->signature_length = 3;
    vm->index = m->index;
    m->handle = wf_vm_method_handle(m->index);
    m->code_base = vm->code_base;
    return vm->name && vm->signature && vm->generic_signature ? 0 : -1;
}

static void fixed_window(struct wf_live_codegen *g, uintptr_t copy, const uint8_t *begin,
                         const uint8_t *lo, const uint8_t *hi, uint32_t kind) {
    wf_live_add_window(g, copy + (uintptr_t)(lo - begin), copy + (uintptr_t)(hi - begin), kind);
}

static void emit_fixed_code(struct wf_live_codegen *g, struct wf_live_vm *vm,
                            uintptr_t safepoint_fn) {
    const uint8_t *ib = wf_live_interp_begin;
    vm->interp_entry = wf_live_emit_fixed(g, ib, wf_live_interp_end, WF_BLOB_INTERPRETER,
                                          (uint32_t)(wf_live_interp_frame_done - ib));
    fixed_window(g, vm->interp_entry, ib, ib, wf_live_interp_frame_done, WF_LIVE_WIN_PROLOGUE);
    fixed_window(g, vm->interp_entry, ib, wf_live_interp_bci_lo, wf_live_interp_bci_hi,
                 WF_LIVE_WIN_BCI);
    fixed_window(g, vm->interp_entry, ib, wf_live_interp_epi_lo, wf_live_interp_epi_hi,
                 WF_LIVE_WIN_EPILOGUE);
    fixed_window(g, vm->interp_entry, ib, wf_live_interp_call_lo, wf_live_interp_call_hi,
                 WF_LIVE_WIN_CALL);
    vm->c2i_entry = wf_live_emit_c2i(g, vm->interp_entry);
    const uint8_t *eb = wf_live_entry_begin;
    vm->entry_stub = wf_live_emit_fixed(g, eb, wf_live_entry_end, WF_BLOB_ENTRY, 0);
    fixed_window(g, vm->entry_stub, eb, wf_live_entry_call_lo, wf_live_entry_call_hi,
                 WF_LIVE_WIN_CALL);
    vm->safepoint_entry =
        wf_live_emit_transition(g, WF_BLOB_STUB, NULL, WF_THREAD_IN_VM, safepoint_fn);
}

static int by_lo(const void *a, const void *b) {
    uintptr_t x = ((const struct wf_live_window *)a)->lo,
              y = ((const struct wf_live_window *)b)->lo;
    return x < y ? -1 : x > y;
}

static int emit_methods(struct wf_live_codegen *g, struct wf_live_method *ms, uint32_t n,
                        uintptr_t native_fn) {
    for (uint32_t i = 0; i < n && !g->failed; i++) {
        struct wf_live_method *m = &ms[i];
        if (m->kind == WF_LIVE_COMPILED) m->entry = wf_live_emit_compiled(g, m);
        else if (m->kind == WF_LIVE_NATIVE)
            m->entry = wf_live_emit_transition(g, WF_BLOB_NATIVE_WRAPPER,
                                               (const struct wf_vm_method *)m->handle,
                                               WF_THREAD_IN_NATIVE, native_fn);
        else m->entry = g->vm->interp_entry;
    }
    return g->failed ? -1 : 0;
}

int wf_live_vm_build(struct wf_live_vm *vm, struct wf_live_method *ms, uint32_t n, uint32_t threads,
                     uintptr_t native_fn, uintptr_t safepoint_fn, char *err, size_t errlen) {
    if (threads > WF_VM_MAX_LIVE_THREADS || n > WF_VM_MAX_METHODS) {
        snprintf(err, errlen, "live VM: %u threads / %u methods is too many", threads, n);
        return -1;
    }
    int rc = wf_vm_image_begin();
    if (rc != 0) {
        snprintf(err, errlen, "live VM: cannot map the VM address space (errno %d)", -rc);
        return -1;
    }
    if (write_classes() != 0) goto pool;
    for (uint32_t i = 0; i < n; i++)
        if (write_method(&ms[i]) != 0) goto pool;
    if (mprotect((void *)(uintptr_t)WF_VM_CODE_HEAP, WF_VM_CODE_HEAP_SIZE,
                 PROT_READ | PROT_WRITE)) {
        snprintf(err, errlen, "live VM: code heap not writable");
        return -1;
    }
    struct wf_live_codegen g = {.heap = (uint8_t *)(uintptr_t)WF_VM_CODE_HEAP, .vm = vm};
    vm->window_count = 0;
    emit_fixed_code(&g, vm, safepoint_fn);
    rc = emit_methods(&g, ms, n, native_fn);
    wf_vm_image_touched(LIVE_CLASSES, n, g.blob_count, g.desc_count);
    if (mprotect((void *)(uintptr_t)WF_VM_CODE_HEAP, WF_VM_CODE_HEAP_SIZE, PROT_READ | PROT_EXEC)) {
        snprintf(err, errlen, "live VM: code heap cannot be made executable");
        return -1;
    }
    if (rc != 0) {
        snprintf(err, errlen, "live VM: code heap or tables full (%u bytes, %u blobs, %u descs)",
                 g.used, g.blob_count, g.desc_count);
        return -1;
    }
    qsort(vm->windows, vm->window_count, sizeof vm->windows[0], by_lo);
    vm->method_count = n;
    vm->methods = ms;
    wf_vm_image_commit(LIVE_CLASSES, n, g.blob_count, g.desc_count);
    struct wf_vm *root = WF_VM_MUT;
    memset(wf_live_vm_thread(0), 0, threads * sizeof(struct wf_vm_thread));
    root->live_threads = wf_live_vm_thread(0);
    root->live_thread_count = threads;
    root->thread = NULL; /* live: walkers find the record by stack (wf_vm_thread_for) */
    return 0;
pool:
    snprintf(err, errlen, "live VM: string pool full");
    return -1;
}

void wf_live_vm_unpublish(void) {
    struct wf_vm *root = WF_VM_MUT;
    root->magic = 0;
    root->live_thread_count = 0;
    root->live_threads = NULL;
}

uint32_t wf_live_window_at(const struct wf_live_vm *vm, uintptr_t pc) {
    uint32_t lo = 0, hi = vm->window_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct wf_live_window *w = &vm->windows[mid];
        if (pc < w->lo) hi = mid;
        else if (pc >= w->hi) lo = mid + 1;
        else return w->kind;
    }
    return WF_LIVE_WIN_NONE;
}
