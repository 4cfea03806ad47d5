/* Snapshot parsing, the module-file image of a map, and the memory reads the accessors make. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wf_snap_image.h"

static const char MAGIC[8] = "WFSNAP1";

static uint64_t le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int wf_snap_parse(const uint8_t *data, size_t size, wf_snap_view *v, char *err, size_t len) {
    memset(v, 0, sizeof *v);
    if (size < WF_SNAP_HEADER || memcmp(data, MAGIC, sizeof MAGIC) != 0) {
        snprintf(err, len, "not a snapshot: %zu bytes, no WFSNAP1 magic", size);
        return -1;
    }
    v->flags = (uint32_t)data[8] | (uint32_t)data[9] << 8;
    v->truth_count = (uint32_t)data[10] | (uint32_t)data[11] << 8;
    uint32_t map_len = le32(data + 12);
    if (v->truth_count > WF_SNAP_MAX_TRUTH || map_len > WF_SNAP_MAX_MAP) {
        snprintf(err, len, "truth ranges %u (max %d) or map bytes %u (max %d)", v->truth_count,
                 WF_SNAP_MAX_TRUTH, map_len, WF_SNAP_MAX_MAP);
        return -1;
    }
    size_t map_at = wf_snap_map_offset(v->truth_count);
    if (size < map_at + map_len) {
        snprintf(err, len, "snapshot of %zu bytes ends inside its map (needs %zu)", size,
                 map_at + map_len);
        return -1;
    }
    v->stack_addr = (uintptr_t)le64(data + 16);
    for (int i = 0; i < WF_SNAP_REGS; i++) v->regs[i] = (uintptr_t)le64(data + 32 + 8 * i);
    for (uint32_t i = 0; i < v->truth_count; i++) {
        v->truth[i][0] = (uintptr_t)le64(data + WF_SNAP_HEADER + 16 * i);
        v->truth[i][1] = (uintptr_t)le64(data + WF_SNAP_HEADER + 16 * i + 8);
    }
    v->map = (const char *)data + map_at;
    v->map_len = map_len;
    v->stack = data + map_at + map_len;
    v->stack_len = size - map_at - map_len;
    if (v->stack_len > WF_SNAP_MAX_STACK) v->stack_len = WF_SNAP_MAX_STACK;
    return 0;
}

size_t wf_snap_map_offset(uint32_t truth) { return WF_SNAP_HEADER + 16 * (size_t)truth; }

static wf_snap_image image;

static void unmap_files(void) {
    for (uint32_t i = 0; i < image.files; i++)
        munmap((void *)image.file[i].bytes, image.file[i].size);
    image.files = 0;
    image.mappings = 0;
}

static int file_index(const char *path) {
    for (uint32_t i = 0; i < image.files; i++)
        if (strcmp(image.path[i], path) == 0) return (int)i;
    if (image.files == WF_SNAP_MAX_FILES || strlen(path) >= sizeof image.path[0]) return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    void *bytes = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size > 0)
        bytes = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (bytes == MAP_FAILED) return -1;
    uint32_t i = image.files++;
    image.file[i] = (wf_snap_file){bytes, (size_t)st.st_size};
    strcpy(image.path[i], path);
    return (int)i;
}

/* One maps line: "start-end perms offset dev inode path". */
static void add_line(char *line) {
    uintptr_t start, end, offset;
    char perms[8];
    int path_at = 0;
    if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %" SCNxPTR " %*s %*s %n", &start, &end, perms,
               &offset, &path_at) != 4 ||
        path_at == 0 || line[path_at] != '/' || end <= start ||
        image.mappings == WF_SNAP_MAX_MAPPINGS)
        return;
    int file = file_index(line + path_at);
    if (file < 0) return;
    image.mapping[image.mappings++] =
        (wf_snap_mapping){start, end, offset, file, strchr(perms, 'x') != NULL};
}

const wf_snap_image *wf_snap_image_for(const char *map, size_t len) {
    if (image.generation != 0 && len == image.map_len && memcmp(map, image.map, len) == 0)
        return &image;
    unmap_files();
    memcpy(image.map, map, len);
    image.map[len] = '\0';
    image.map_len = len;
    image.generation++;
    char line[512];
    for (const char *p = image.map; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
        if (n < sizeof line) {
            memcpy(line, p, n);
            line[n] = '\0';
            add_line(line);
        }
        p += n + (nl != NULL);
    }
    return &image;
}

const wf_snap_mapping *wf_snap_mapping_at(const wf_snap_image *im, uintptr_t addr) {
    for (uint32_t i = 0; i < im->mappings; i++)
        if (addr >= im->mapping[i].start && addr < im->mapping[i].end) return &im->mapping[i];
    return NULL;
}

int wf_snap_read(const wf_snap_view *v, const wf_snap_image *im, uintptr_t addr, void *dst,
                 size_t len) {
    if (addr >= v->stack_addr && addr - v->stack_addr <= v->stack_len &&
        len <= v->stack_len - (addr - v->stack_addr)) {
        memcpy(dst, v->stack + (addr - v->stack_addr), len);
        return 0;
    }
    const wf_snap_mapping *m = wf_snap_mapping_at(im, addr);
    if (m == NULL || len > m->end - addr) return -1;
    const wf_snap_file *f = &im->file[m->file];
    uintptr_t at = addr - m->start + m->offset;
    if (at < m->offset || at > f->size || len > f->size - at) return -1;
    memcpy(dst, f->bytes + at, len);
    return 0;
}

int32_t wf_snap_truth_index(const wf_snap_view *v, uintptr_t pc, int exact) {
    uintptr_t at = exact ? pc : pc - 1;
    for (uint32_t i = 0; i < v->truth_count; i++)
        if (at >= v->truth[i][0] && at < v->truth[i][1]) return (int32_t)i;
    return -1;
}

int32_t wf_snap_record(const wf_snap_view *v, wf_snap_result *out, uintptr_t pc, uintptr_t sp,
                       uintptr_t fp, int exact) {
    for (uint32_t i = 0; i < out->frames; i++)
        if (out->frame[i].pc == pc && out->frame[i].sp == sp && out->frame[i].fp == fp)
            return WF_SNAP_STOP_CYCLE;
    wf_snap_frame *f = &out->frame[out->frames++];
    *f = (wf_snap_frame){pc, sp, fp, wf_snap_truth_index(v, pc, exact), exact};
    wf_guard_progress(out->frames, sp, fp, pc);
    if (v->truth_count > 0 && f->truth == (int32_t)v->truth_count - 1) return WF_SNAP_STOP_ROOT;
    if (out->frames == WF_SNAP_MAX_FRAMES) return WF_SNAP_STOP_BUDGET;
    return WF_SNAP_STOP_NONE;
}
