/* One snapshot walk: parse, the module image of its map, the chosen unwinder under the guard,
 * the verdict against the truth ranges. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "wf_snap_dw.h"
#include "wf_snap_walks.h"

typedef struct guarded_walk {
    int unwinder;
    const wf_snap_view *v;
    const wf_snap_image *im;
    wf_snap_result *out;
} guarded_walk;

/* ---- libdw over the snapshot ---------------------------------------------------------- */

typedef struct dw_arg {
    const wf_snap_view *v;
    const wf_snap_image *im;
    wf_snap_result *out;
} dw_arg;

static int dw_read(void *arg, uintptr_t addr, uint64_t *word) {
    dw_arg *a = arg;
    a->out->reads++;
    if (wf_snap_read(a->v, a->im, addr, word, sizeof *word) == 0) return 0;
    a->out->misses++;
    return -1;
}

static int32_t dw_record(void *arg, uintptr_t pc, uintptr_t sp, uintptr_t fp, int exact) {
    dw_arg *a = arg;
    return wf_snap_record(a->v, a->out, pc, sp, fp, exact);
}

/* One Dwfl per map, rebuilt when the image (the map) changes. */
static Dwfl *dwfl;
static uint64_t dwfl_generation;
static int32_t dwfl_rc;

int32_t wf_snap_walk_libdw(const wf_snap_view *v, const wf_snap_image *im, wf_snap_result *out) {
    if (dwfl_generation != im->generation) {
        if (dwfl != NULL) dwfl_end(dwfl);
        dwfl_rc = 0;
        dwfl = wf_dw_open_maps(im->map, im->map_len, &dwfl_rc);
        dwfl_generation = im->generation;
    }
    if (dwfl == NULL) {
        out->rc = dwfl_rc;
        return WF_SNAP_STOP_INIT_ERROR;
    }
    out->modules = wf_dw_modules(dwfl);
    dw_arg a = {v, im, out};
    wf_dw_walk w = {.regs = v->regs, .read = dw_read, .record = dw_record, .arg = &a};
    wf_dw_walk_frames(dwfl, &w);
    out->rc = w.rc;
    return w.stop;
}

/* ---- the walk ------------------------------------------------------------------------- */

static intptr_t walk_fn(void *arg) {
    guarded_walk *g = arg;
    if (g->unwinder == WF_SNAP_LIBDW) return wf_snap_walk_libdw(g->v, g->im, g->out);
    return wf_snap_walk_libunwind(g->v, g->im, g->out);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The walk is the truth when its frames are the truth ranges, one each, in order. */
static int32_t matches(const wf_snap_view *v, const wf_snap_result *out) {
    if (v->truth_count == 0 || out->frames != v->truth_count) return 0;
    for (uint32_t i = 0; i < out->frames; i++)
        if (out->frame[i].truth != (int32_t)i) return 0;
    return 1;
}

void wf_snap_set_walk_budget_ns(uint64_t ns) { wf_guard_set_budget_ns(ns); }

int wf_snap_walk(int unwinder, const uint8_t *data, size_t size, wf_snap_result *out) {
    memset(out, 0, offsetof(wf_snap_result, frame));
    memset(&out->fault, 0, sizeof out->fault);
    out->error[0] = '\0';
    wf_snap_view v;
    if (wf_snap_parse(data, size, &v, out->error, sizeof out->error) != 0) {
        out->stop = WF_SNAP_STOP_BAD_SNAPSHOT;
        return out->stop;
    }
    if (unwinder != WF_SNAP_LIBUNWIND && unwinder != WF_SNAP_LIBDW) {
        snprintf(out->error, sizeof out->error, "unknown unwinder %d", unwinder);
        out->stop = WF_SNAP_STOP_BAD_SNAPSHOT;
        return out->stop;
    }
    const wf_snap_image *im = wf_snap_image_for(v.map, v.map_len);
    out->truth = (int32_t)v.truth_count;
    out->modules = im->files;
    guarded_walk g = {unwinder, &v, im, out};
    intptr_t stop = 0;
    uint64_t start = now_ns();
    if (wf_guard_call_masked(walk_fn, &g, &stop, &out->fault) != 0)
        stop = out->fault.kind == WF_FAULT_HANG ? WF_SNAP_STOP_HANG : WF_SNAP_STOP_FAULT;
    out->walk_ns = now_ns() - start;
    out->stop = (int32_t)stop;
    out->matched = matches(&v, out);
    return out->stop;
}
