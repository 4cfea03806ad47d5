/* A snapshot read into its parts, and the memory the accessors serve over it (internal; not
 * cffi-visible).
 *
 *   snapshot bytes ──wf_snap_parse──► wf_snap_view (registers, truth, map text, stack bytes)
 *   map text ──wf_snap_image_for──► wf_snap_image (mappings, each file mapped read-only once)
 *   wf_snap_read(view, image, addr): the stack bytes first, then the module files
 */
#ifndef WF_SNAP_IMAGE_H
#define WF_SNAP_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "wf_snapshot.h"

#define WF_SNAP_MAX_MAPPINGS 512
#define WF_SNAP_MAX_FILES 64

typedef struct wf_snap_view {
    uint32_t flags, truth_count;
    uintptr_t regs[WF_SNAP_REGS];
    uintptr_t truth[WF_SNAP_MAX_TRUTH][2];
    const char *map;
    size_t map_len;
    uintptr_t stack_addr;
    const uint8_t *stack;
    size_t stack_len;
} wf_snap_view;

typedef struct wf_snap_file {
    const uint8_t *bytes; /* the whole file, mapped read-only */
    size_t size;
} wf_snap_file;

/* One line of the map: [start, end) holds the file's bytes from `offset` on. */
typedef struct wf_snap_mapping {
    uintptr_t start, end, offset;
    int file; /* index into files[] */
    int exec; /* mapped executable: code the unwinders look up unwind info for */
} wf_snap_mapping;

typedef struct wf_snap_image {
    uint64_t generation; /* changes whenever the map does: caches keyed on the image */
    char map[WF_SNAP_MAX_MAP + 1];
    size_t map_len;
    uint32_t mappings, files;
    wf_snap_mapping mapping[WF_SNAP_MAX_MAPPINGS];
    wf_snap_file file[WF_SNAP_MAX_FILES];
    char path[WF_SNAP_MAX_FILES][256];
} wf_snap_image;

/* Split a snapshot into its parts (pointers into data). 0, or -1 with err saying why. */
int wf_snap_parse(const uint8_t *data, size_t size, wf_snap_view *v, char *err, size_t len);

/* The image of a map text: the cached one when the text is the same as last time, else the
   files opened and mapped anew (a file that cannot be opened leaves its lines out). Never
   NULL. One image per process, not thread-safe. */
const wf_snap_image *wf_snap_image_for(const char *map, size_t len);

/* Copy len bytes at addr into dst from the stack bytes or a module file. 0, or -1 when the
   snapshot does not hold all of them. */
int wf_snap_read(const wf_snap_view *v, const wf_snap_image *im, uintptr_t addr, void *dst,
                 size_t len);

/* The mapping holding addr, NULL if none. */
const wf_snap_mapping *wf_snap_mapping_at(const wf_snap_image *im, uintptr_t addr);

/* Index of the truth range holding pc (pc - 1 unless exact), -1 if none. */
int32_t wf_snap_truth_index(const wf_snap_view *v, uintptr_t pc, int exact);

/* Record one walked frame into out; WF_SNAP_STOP_NONE, or the wf_snap_stop ending the walk
   (root, cycle, budget). */
int32_t wf_snap_record(const wf_snap_view *v, wf_snap_result *out, uintptr_t pc, uintptr_t sp,
                       uintptr_t fp, int exact);

#endif
