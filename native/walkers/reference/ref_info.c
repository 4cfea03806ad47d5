/* ref_info.c — the reference walker's non-iterator calls: method and class info, the walked
 * thread's state, capabilities (asgst.h; rules in docs/case-format.md §4.5). */
#ifndef WF_REF_EXPORT
#pragma GCC visibility push(hidden)
#endif
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "asgst.h"
#include "wf_vm.h"

/* JVMTI thread state bits used by ASGST_ThreadState. */
enum {
    JVMTI_ALIVE = 0x1,
    JVMTI_TERMINATED = 0x2,
    JVMTI_RUNNABLE = 0x4,
    JVMTI_BLOCKED_ON_MONITOR_ENTER = 0x400,
    JVMTI_SUSPENDED = 0x100000,
    JVMTI_IN_NATIVE = 0x400000
};

/* Copy a name into (buffer, capacity), truncated with NUL; set *length to its full length.
   length is a field of the caller's info, never NULL. */
static void copy_name(char *buffer, int32_t *length, const char *name, uint32_t name_length) {
    int32_t capacity = *length;
    if (buffer != NULL && capacity > 0) {
        uint32_t n = name_length < (uint32_t)capacity - 1 ? name_length : (uint32_t)capacity - 1;
        if (n > 0) memcpy(buffer, name, n);
        buffer[n] = '\0';
    }
    *length = (int32_t)name_length;
}

/* The method and class records behind handles, or NULL for what is not one. */
static const struct wf_vm_method *method_at(ASGST_Method method) {
    return wf_vm_method_at((uintptr_t)method);
}

static const struct wf_vm_class *class_at(ASGST_Class klass) {
    return wf_vm_class_at((uintptr_t)klass);
}

/* A case is mapped (the harness maps the span before any walker call). */
static int vm_mapped(void) { return WF_VM->magic == WF_VM_MAGIC; }

void ASGST_GetMethodInfo(ASGST_Method method, ASGST_MethodInfo *info) {
    if (info == NULL) return;
    const struct wf_vm_method *m = vm_mapped() ? method_at(method) : NULL;
    static const char empty[] = "";
    copy_name(info->method_name, &info->method_name_length, m ? m->name : empty,
              m ? m->name_length : 0);
    copy_name(info->signature, &info->signature_length, m ? m->signature : empty,
              m ? m->signature_length : 0);
    copy_name(info->generic_signature, &info->generic_signature_length,
              m ? m->generic_signature : empty, m ? m->generic_signature_length : 0);
    info->modifiers = m ? m->modifiers : 0;
    info->klass = m ? (ASGST_Class)m->klass : NULL;
}

void ASGST_GetClassInfo(ASGST_Class klass, ASGST_ClassInfo *info) {
    if (info == NULL) return;
    const struct wf_vm_class *k = vm_mapped() ? class_at(klass) : NULL;
    static const char empty[] = "";
    copy_name(info->class_name, &info->class_name_length, k ? k->name : empty,
              k ? k->name_length : 0);
    copy_name(info->generic_class_name, &info->generic_class_name_length,
              k ? k->generic_name : empty, k ? k->generic_name_length : 0);
    info->modifiers = k ? k->modifiers : 0;
}

int ASGST_ThreadState(void) {
    /* the calling thread's record (live VM) or the case's thread (synthetic) */
    const struct wf_vm_thread *t =
        vm_mapped() ? wf_vm_thread_for((uintptr_t)__builtin_frame_address(0)) : NULL;
    if (t == NULL) return -1;
    int bits;
    switch (t->state) {
    case WF_THREAD_NEW: bits = 0; break;
    case WF_THREAD_IN_JAVA:
    case WF_THREAD_IN_VM:
    case WF_THREAD_IN_TRANSITION: bits = JVMTI_ALIVE | JVMTI_RUNNABLE; break;
    case WF_THREAD_IN_NATIVE: bits = JVMTI_ALIVE | JVMTI_RUNNABLE | JVMTI_IN_NATIVE; break;
    case WF_THREAD_BLOCKED: bits = JVMTI_ALIVE | JVMTI_BLOCKED_ON_MONITOR_ENTER; break;
    case WF_THREAD_EXITING: bits = JVMTI_TERMINATED; break;
    default: return -1; /* not a Java thread */
    }
    return (t->flags & WF_THREAD_SUSPENDED) ? bits | JVMTI_SUSPENDED : bits;
}

/* queue: the queue API is there when ref_queue.c is linked in (the core, or a walker
   library built with it); a library of ref_walker.c + ref_info.c alone does not claim it. */
#pragma weak ASGST_Enqueue
int ASGST_Capabilities(void) { return ASGST_Enqueue != NULL ? ASGST_REGISTER_QUEUE : 0; }
