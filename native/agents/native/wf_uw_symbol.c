/* Naming pcs for findings: a known function + offset, else module + offset (Debian ships
 * libunwind without debug symbols, and a module offset is stable across ASLR). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "wf_unwinder.h"

static const char *KNOWN_NAMES[] = {
    [WF_UW_ID_BOTTOM - WF_UW_ID_BOTTOM] = "wf_uw_bottom",
    [WF_UW_ID_ROOT - WF_UW_ID_BOTTOM] = "wf_uw_chain_root",
    [WF_UW_ID_WORKER_ROOT - WF_UW_ID_BOTTOM] = "wf_uw_worker_root",
};

const char *wf_uw_unwinder_name(void) { return wf_unwinder_name(); }
const char *wf_uw_unwinder_library(void) { return wf_unwinder_library(); }

static const char *basename_of(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int wf_uw_describe_pc(uintptr_t pc, char *buf, size_t len) {
    uintptr_t start, end;
    int fp, id = wf_uw_frame_id(pc);
    if (id != WF_UW_ID_UNKNOWN && wf_uw_id_range(id, &start, &end, &fp)) {
        if (id < WF_UW_ID_WORK_BASE)
            return snprintf(buf, len, "wf_uw_chain_%d+0x%lx", id, (unsigned long)(pc - start));
        if (id < WF_UW_ID_BOTTOM)
            return snprintf(buf, len, "wf_uw_work_%d+0x%lx", id - WF_UW_ID_WORK_BASE,
                            (unsigned long)(pc - start));
        return snprintf(buf, len, "%s+0x%lx", KNOWN_NAMES[id - WF_UW_ID_BOTTOM],
                        (unsigned long)(pc - start));
    }
    Dl_info info;
    if (pc != 0 && dladdr((void *)pc, &info) != 0 && info.dli_fname != NULL)
        return snprintf(buf, len, "%s+0x%lx", basename_of(info.dli_fname),
                        (unsigned long)(pc - (uintptr_t)info.dli_fbase));
    return snprintf(buf, len, "0x%lx", (unsigned long)pc);
}
