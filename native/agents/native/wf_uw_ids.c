/* Frame ids: which known function a pc is in, from the linker's section bounds. */
#include "wf_uw_chain.h"
#include "wf_uw_worker.h"
#include "wf_unwind.h"

extern const char __start_wf_uw_bottom_code[], __stop_wf_uw_bottom_code[];
extern const char __start_wf_uw_chain_root_code[], __stop_wf_uw_chain_root_code[];
extern const char __start_wf_uw_worker_root_code[], __stop_wf_uw_worker_root_code[];

static int in_range(const wf_uw_range *r, uintptr_t pc) { return pc >= r->start && pc < r->end; }

/* The agent's own functions keep frame pointers (fuzz/core/_build.py): a frame-pointer walk
   meets a frame record in each. */
static wf_uw_range special_range(int id) {
    switch (id) {
    case WF_UW_ID_BOTTOM:
        return (wf_uw_range){(uintptr_t)__start_wf_uw_bottom_code,
                             (uintptr_t)__stop_wf_uw_bottom_code, 1};
    case WF_UW_ID_ROOT:
        return (wf_uw_range){(uintptr_t)__start_wf_uw_chain_root_code,
                             (uintptr_t)__stop_wf_uw_chain_root_code, 1};
    case WF_UW_ID_WORKER_ROOT:
        return (wf_uw_range){(uintptr_t)__start_wf_uw_worker_root_code,
                             (uintptr_t)__stop_wf_uw_worker_root_code, 1};
    default: return (wf_uw_range){0, 0, 0};
    }
}

int wf_uw_frame_id(uintptr_t pc) {
    for (int i = 0; i < WF_UW_CHAIN_FUNCTIONS; i++)
        if (in_range(&wf_uw_chain_ranges[i], pc)) return i;
    for (int i = 0; i < WF_UW_WORK_FUNCTIONS; i++)
        if (in_range(&wf_uw_work_ranges[i], pc)) return WF_UW_ID_WORK_BASE + i;
    for (int id = WF_UW_ID_BOTTOM; id <= WF_UW_ID_WORKER_ROOT; id++) {
        wf_uw_range r = special_range(id);
        if (in_range(&r, pc)) return id;
    }
    return WF_UW_ID_UNKNOWN;
}

int wf_uw_id_range(int id, uintptr_t *start, uintptr_t *end, int *frame_pointer) {
    wf_uw_range r;
    if (id >= 0 && id < WF_UW_CHAIN_FUNCTIONS) r = wf_uw_chain_ranges[id];
    else if (id >= WF_UW_ID_WORK_BASE && id < WF_UW_ID_WORK_BASE + WF_UW_WORK_FUNCTIONS)
        r = wf_uw_work_ranges[id - WF_UW_ID_WORK_BASE];
    else r = special_range(id);
    if (r.start == r.end) return 0;
    *start = r.start;
    *end = r.end;
    *frame_pointer = r.frame_pointer;
    return 1;
}
