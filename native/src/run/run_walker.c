/* run_walker.c — walker tables: the in-core reference walker and dlopen'ed walker libraries. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "wf_queue.h"
#include "wf_walker.h"

static const wf_walker REFERENCE = {
    .name = "reference",
    .run_with_iterator = ASGST_RunWithIterator,
    .run_with_iterator_from_frame = ASGST_RunWithIteratorFromFrame,
    .next_frame = ASGST_NextFrame,
    .rewind_iterator = ASGST_RewindIterator,
    .state = ASGST_State,
    .thread_state = ASGST_ThreadState,
    .get_method_info = ASGST_GetMethodInfo,
    .get_class_info = ASGST_GetClassInfo,
    .capabilities = ASGST_Capabilities,
    .has_queue = 1,
    .register_queue = ASGST_RegisterQueue,
    .deregister_queue = ASGST_DeregisterQueue,
    .enqueue = ASGST_Enqueue,
    .get_queue_element = ASGST_GetQueueElement,
    .get_enqueuable_element = ASGST_GetEnqueuableElement,
    .resize_queue = ASGST_ResizeQueue,
    .get_queue_size_info = ASGST_GetQueueSizeInfo,
    .set_on_queue_processing_start = ASGST_SetOnQueueProcessingStart,
    .set_on_queue_processing_end = ASGST_SetOnQueueProcessingEnd,
    .queue_safepoint = wf_queue_safepoint,
    .queue_thread_exit = wf_queue_thread_exit,
    .queue_thread_reset = wf_queue_thread_reset,
    .queue_counters = wf_queue_get_counters,
};

const wf_walker *wf_walker_reference(void) { return &REFERENCE; }

void wf_walker_reference_queue_counters(ASGST_Queue *queue, wf_queue_counters *out) {
    wf_queue_get_counters(queue, out);
}

/* Field offsets and symbol names of the required functions, in table order. */
static const struct {
    const char *symbol;
    size_t offset;
} REQUIRED[] = {
    {"ASGST_RunWithIterator", offsetof(wf_walker, run_with_iterator)},
    {"ASGST_RunWithIteratorFromFrame", offsetof(wf_walker, run_with_iterator_from_frame)},
    {"ASGST_NextFrame", offsetof(wf_walker, next_frame)},
    {"ASGST_RewindIterator", offsetof(wf_walker, rewind_iterator)},
    {"ASGST_State", offsetof(wf_walker, state)},
    {"ASGST_ThreadState", offsetof(wf_walker, thread_state)},
    {"ASGST_GetMethodInfo", offsetof(wf_walker, get_method_info)},
    {"ASGST_GetClassInfo", offsetof(wf_walker, get_class_info)},
    {"ASGST_Capabilities", offsetof(wf_walker, capabilities)},
};

/* The optional queue entries (wf_walker.h), resolved only for a walker that claims them. */
static const struct {
    const char *symbol;
    size_t offset;
} QUEUE[] = {
    {"ASGST_RegisterQueue", offsetof(wf_walker, register_queue)},
    {"ASGST_DeregisterQueue", offsetof(wf_walker, deregister_queue)},
    {"ASGST_Enqueue", offsetof(wf_walker, enqueue)},
    {"ASGST_GetQueueElement", offsetof(wf_walker, get_queue_element)},
    {"ASGST_GetEnqueuableElement", offsetof(wf_walker, get_enqueuable_element)},
    {"ASGST_ResizeQueue", offsetof(wf_walker, resize_queue)},
    {"ASGST_GetQueueSizeInfo", offsetof(wf_walker, get_queue_size_info)},
    {"ASGST_SetOnQueueProcessingStart", offsetof(wf_walker, set_on_queue_processing_start)},
    {"ASGST_SetOnQueueProcessingEnd", offsetof(wf_walker, set_on_queue_processing_end)},
    {"wf_queue_safepoint", offsetof(wf_walker, queue_safepoint)},
    {"wf_queue_thread_exit", offsetof(wf_walker, queue_thread_exit)},
    {"wf_queue_thread_reset", offsetof(wf_walker, queue_thread_reset)},
};

static void clear_queue_entries(wf_walker *w) {
    void *none = NULL;
    for (size_t i = 0; i < sizeof QUEUE / sizeof QUEUE[0]; i++)
        memcpy((char *)w + QUEUE[i].offset, &none, sizeof none);
    w->has_queue = 0;
}

/* Fill the queue entries of a loaded walker, or leave has_queue 0 with the reason. */
static void load_queue(void *handle, wf_walker *w) {
    int caps = w->capabilities();
    if (!(caps & ASGST_REGISTER_QUEUE)) {
        snprintf(w->queue_error, sizeof w->queue_error,
                 "walker %s lacks the safepoint queue "
                 "API (ASGST_Capabilities() = %#x, no ASGST_REGISTER_QUEUE)",
                 w->name, caps);
        return;
    }
    size_t used = (size_t)snprintf(w->queue_error, sizeof w->queue_error,
                                   "walker %s reports ASGST_REGISTER_QUEUE but lacks:", w->name);
    int missing = 0;
    for (size_t i = 0; i < sizeof QUEUE / sizeof QUEUE[0]; i++) {
        void *sym = dlsym(handle, QUEUE[i].symbol);
        memcpy((char *)w + QUEUE[i].offset, &sym, sizeof sym);
        if (sym != NULL) continue;
        missing++;
        if (used < sizeof w->queue_error)
            used += (size_t)snprintf(w->queue_error + used, sizeof w->queue_error - used, " %s",
                                     QUEUE[i].symbol);
    }
    if (missing) {
        clear_queue_entries(w);
        return;
    }
    w->has_queue = 1;
    w->queue_error[0] = '\0';
    void *counters = dlsym(handle, "wf_queue_get_counters"); /* optional: not an ASGST call */
    memcpy(&w->queue_counters, &counters, sizeof counters);
}

int wf_walker_load(const char *path, wf_walker *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", path);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        snprintf(err, errlen, "cannot load walker %s: %s", path, dlerror());
        return -1;
    }
    size_t used = (size_t)snprintf(err, errlen, "walker %s lacks:", path);
    int missing = 0;
    for (size_t i = 0; i < sizeof REQUIRED / sizeof REQUIRED[0]; i++) {
        void *sym = dlsym(handle, REQUIRED[i].symbol);
        memcpy((char *)out + REQUIRED[i].offset, &sym, sizeof sym);
        if (sym != NULL) continue;
        missing++;
        if (used < errlen)
            used += (size_t)snprintf(err + used, errlen - used, " %s", REQUIRED[i].symbol);
    }
    if (missing) {
        dlclose(handle);
        memset(out, 0, sizeof *out);
        return -2;
    }
    out->handle = handle;
    load_queue(handle, out);
    if (errlen > 0) err[0] = '\0';
    return 0;
}

void wf_walker_unload(wf_walker *w) {
    if (w->handle != NULL) dlclose(w->handle);
    w->handle = NULL;
}
