/* wf_walker.h — a walker as a table of ASGST function pointers: the in-core reference walker,
 * or a library (user walker, planted-bug walker) loaded with dlopen. The harness calls the
 * walker only through this table.
 *
 * The safepoint queue entries are optional: a library has them (has_queue = 1) when its
 * ASGST_Capabilities() reports ASGST_REGISTER_QUEUE and it exports every queue symbol,
 * including the VM-side calls of wf_queue.h (wf_queue_safepoint, wf_queue_thread_exit,
 * wf_queue_thread_reset), which the simulated VM makes at a poll and at thread exit. */
#ifndef WALKFUZZ_WF_WALKER_H
#define WALKFUZZ_WF_WALKER_H

#include <stddef.h>
#include <stdint.h>

#include "asgst.h"

/* cffi:begin */
struct wf_queue_counters; /* wf_queue.h */
typedef struct wf_walker {
    char name[128]; /* "reference" or the library path */
    int (*run_with_iterator)(void *ucontext, int32_t options, ASGST_IteratorHandler fun,
                             void *argument);
    int (*run_with_iterator_from_frame)(void *sp, void *fp, void *pc, int32_t options,
                                        ASGST_IteratorHandler fun, void *argument);
    int (*next_frame)(ASGST_Iterator *iterator, ASGST_Frame *frame);
    void (*rewind_iterator)(ASGST_Iterator *iterator);
    int (*state)(ASGST_Iterator *iterator);
    int (*thread_state)(void);
    void (*get_method_info)(ASGST_Method method, ASGST_MethodInfo *info);
    void (*get_class_info)(ASGST_Class klass, ASGST_ClassInfo *info);
    int (*capabilities)(void);
    /* safepoint queue (asgst.h queue block, wf_queue.h); all NULL unless has_queue */
    int has_queue;
    char queue_error[256]; /* why has_queue is 0 ("" when it is 1) */
    ASGST_Queue *(*register_queue)(void *env, int size, int options, ASGST_Handler fun,
                                   void *argument);
    int (*deregister_queue)(void *env, ASGST_Queue *queue);
    int (*enqueue)(ASGST_Queue *queue, void *ucontext, void *argument);
    ASGST_QueueElement *(*get_queue_element)(ASGST_Queue *queue, int n);
    int (*get_enqueuable_element)(void *ucontext, ASGST_QueueElement *element);
    void (*resize_queue)(ASGST_Queue *queue, int size);
    ASGST_QueueSizeInfo (*get_queue_size_info)(ASGST_Queue *queue);
    void (*set_on_queue_processing_start)(ASGST_Queue *queue, int options, bool offer_iterator,
                                          ASGST_OnQueueSafepointHandler fun, void *arg);
    void (*set_on_queue_processing_end)(ASGST_Queue *queue, int options, bool offer_iterator,
                                        ASGST_OnQueueSafepointHandler fun, void *arg);
    int (*queue_safepoint)(uintptr_t sp, uintptr_t fp, uintptr_t pc);
    int (*queue_thread_exit)(void);
    void (*queue_thread_reset)(void);
    /* wf_queue_get_counters (wf_queue.h) if the library exports it, else NULL: optional */
    void (*queue_counters)(ASGST_Queue *queue, struct wf_queue_counters *out);
    void *handle; /* dlopen handle; NULL for the reference walker */
} wf_walker;

/* The reference walker linked into the core. */
const wf_walker *wf_walker_reference(void);
/* dlopen `path` (RTLD_NOW|RTLD_LOCAL) and fill *out with its ASGST symbols. 0 on success;
   -1 if it cannot be loaded, -2 if symbols are missing: err names the dlerror or every missing
   symbol. The queue entries are resolved when the library claims ASGST_REGISTER_QUEUE; if it
   does not, or one is missing, the walker still loads with has_queue 0 and queue_error
   saying why. Not signal-safe. */
int wf_walker_load(const char *path, wf_walker *out, char *err, size_t errlen);
/* dlclose a loaded walker (no-op for the reference walker). */
void wf_walker_unload(wf_walker *w);
/* cffi:end */

/* wf_queue_get_counters of the reference walker linked into the core, for C outside the core
   (the testing extension, native/testing/), which cannot bind the walker's own symbols: they
   are hidden. Not cffi-visible. Async-signal-safe. */
void wf_walker_reference_queue_counters(ASGST_Queue *queue, struct wf_queue_counters *out);

#endif /* WALKFUZZ_WF_WALKER_H */
