/* vm_map.c — the fixed address space of the simulated VM (wf_vm.h): reserved once per
 * process, regions opened with their protections, and per-case clearing of what was used. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "case/case_expected.h"
#include "case/case_queue.h" /* a new case has no queue program */
#include "vm_image.h"
#include "wf_vm.h"

/* Bytes of each region the mapped case uses, so the next case clears only those. */
static struct {
    int mapped;
    uint32_t classes, methods, blobs, descs, segments;
    size_t string_bytes;
    uint32_t stack_bytes;
    uint32_t patches;  /* code patches written (patch[] below) */
    int code_writable; /* the code heap is open for patches until the commit */
} used;

/* Where the mapped case's code differs from the 0xCC fill (CODE_BYTES). */
static struct { uint32_t offset, length; } patch[WF_VM_MAX_CODE_PATCHES];

static int open_region(uintptr_t addr, size_t size, int prot) {
    return mprotect((void *)addr, size, prot) == 0 ? 0 : -errno;
}

static int map_regions(void) {
    void *span = mmap((void *)(uintptr_t)WF_VM_ROOT, WF_VM_SPAN_END - WF_VM_ROOT, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (span == MAP_FAILED) return -errno;
    if (span != (void *)(uintptr_t)WF_VM_ROOT) { /* kernels without MAP_FIXED_NOREPLACE */
        munmap(span, WF_VM_SPAN_END - WF_VM_ROOT);
        return -EEXIST;
    }
    int rc = open_region(WF_VM_ROOT, WF_VM_TABLES_END - WF_VM_ROOT, PROT_READ | PROT_WRITE);
    if (rc == 0) rc = open_region(WF_VM_CODE_HEAP, WF_VM_CODE_HEAP_SIZE, PROT_READ | PROT_WRITE);
    if (rc == 0)
        rc = open_region(WF_VM_NATIVE_TEXT, WF_VM_NATIVE_TEXT_SIZE, PROT_READ | PROT_WRITE);
    if (rc == 0) rc = open_region(WF_VM_STACK, WF_VM_STACK_SIZE, PROT_READ | PROT_WRITE);
    if (rc != 0) return rc;
    /* Code is never executed or written: int3 bytes, read-only. */
    memset((void *)(uintptr_t)WF_VM_CODE_HEAP, 0xCC, WF_VM_CODE_HEAP_SIZE);
    memset((void *)(uintptr_t)WF_VM_NATIVE_TEXT, 0xCC, WF_VM_NATIVE_TEXT_SIZE);
    rc = open_region(WF_VM_CODE_HEAP, WF_VM_CODE_HEAP_SIZE, PROT_READ);
    if (rc == 0) rc = open_region(WF_VM_NATIVE_TEXT, WF_VM_NATIVE_TEXT_SIZE, PROT_READ);
    return rc;
}

/* The code heap is read-only (a walker never writes code): opened only while a case's
   patches are written or the previous case's are undone. */
static int code_heap_writable(int writable) {
    if (used.code_writable == writable) return 0;
    used.code_writable = writable;
    return open_region(WF_VM_CODE_HEAP, WF_VM_CODE_HEAP_SIZE,
                       writable ? PROT_READ | PROT_WRITE : PROT_READ);
}

static void undo_patches(void) {
    if (used.patches == 0) return;
    code_heap_writable(1);
    for (uint32_t i = 0; i < used.patches; i++)
        memset((void *)(uintptr_t)(WF_VM_CODE_HEAP + patch[i].offset), 0xCC, patch[i].length);
    code_heap_writable(0);
    used.patches = 0;
}

/* Keep patch[] sorted and disjoint: a new range merges with every range it overlaps (the
   bytes live in the heap itself; the table only says where they differ). Ranges that only
   touch stay apart, so decoding a case and encoding it again gives the same patches. */
static int add_patch_range(uint32_t offset, uint32_t length) {
    uint32_t lo = offset, hi = offset + length, i = 0, j;
    while (i < used.patches && patch[i].offset + patch[i].length <= lo) i++;
    for (j = i; j < used.patches && patch[j].offset < hi; j++) {
        if (patch[j].offset < lo) lo = patch[j].offset;
        if (patch[j].offset + patch[j].length > hi) hi = patch[j].offset + patch[j].length;
    }
    if (j == i && used.patches >= WF_VM_MAX_CODE_PATCHES) return -1; /* a new entry */
    if (j != i + 1) /* make exactly one slot at i */
        memmove(&patch[i + 1], &patch[j], (used.patches - j) * sizeof patch[0]);
    used.patches = used.patches + 1 - (j - i);
    patch[i].offset = lo;
    patch[i].length = hi - lo;
    return 0;
}

int wf_vm_image_code(uint32_t offset, const uint8_t *bytes, uint32_t length) {
    if (length == 0 || (uint64_t)offset + length > WF_VM_CODE_HEAP_SIZE) return -1;
    if (code_heap_writable(1) != 0 || add_patch_range(offset, length) != 0) return -1;
    memcpy((void *)(uintptr_t)(WF_VM_CODE_HEAP + offset), bytes, length);
    return 0;
}

uint32_t wf_vm_image_patch_count(void) { return used.patches; }

void wf_vm_image_patch(uint32_t i, uint32_t *offset, uint32_t *length) {
    *offset = i < used.patches ? patch[i].offset : 0;
    *length = i < used.patches ? patch[i].length : 0;
}

int wf_vm_map_init(void) {
    if (used.mapped) return 0;
    int rc = map_regions();
    if (rc == 0) used.mapped = 1;
    return rc;
}

int wf_vm_is_mapped(void) { return used.mapped; }

int wf_vm_image_begin(void) {
    int rc = wf_vm_map_init();
    if (rc != 0) return rc;
    struct wf_vm *vm = WF_VM_MUT;
    vm->magic = 0;
    vm->thread = NULL;
    wf_case_queue_clear(); /* section 9 (the queue program) belongs to the case it came with */
    wf_case_expected_clear();
    memset((void *)(uintptr_t)WF_VM_CLASSES, 0, (size_t)used.classes * WF_VM_CLASS_STRIDE);
    memset((void *)(uintptr_t)WF_VM_METHODS, 0, (size_t)used.methods * WF_VM_METHOD_STRIDE);
    memset((void *)(uintptr_t)WF_VM_BLOBS, 0, (size_t)used.blobs * WF_VM_BLOB_STRIDE);
    memset((void *)(uintptr_t)WF_VM_PCDESCS, 0, (size_t)used.descs * WF_VM_PCDESC_STRIDE);
    memset((void *)(uintptr_t)WF_VM_STRINGS, 0, used.string_bytes);
    memset((void *)(uintptr_t)WF_VM_SEGMAP, 0, (size_t)used.segments * sizeof(uint16_t));
    vm->segmap_count = used.segments = 0;
    memset((void *)(uintptr_t)(WF_VM_STACK_TOP - used.stack_bytes), 0, used.stack_bytes);
    memset(WF_VM_THREAD_MUT, 0, sizeof(struct wf_vm_thread));
    undo_patches();
    used.classes = used.methods = used.blobs = used.descs = 0;
    used.string_bytes = 0;
    used.stack_bytes = 0;
    return 0;
}

const char *wf_vm_image_string(const uint8_t *bytes, uint32_t len) {
    if (used.string_bytes + len + 1 > WF_VM_STRINGS_SIZE) return NULL;
    char *dst = (char *)(uintptr_t)(WF_VM_STRINGS + used.string_bytes);
    memcpy(dst, bytes, len);
    dst[len] = '\0';
    used.string_bytes += len + 1;
    return dst;
}

uint8_t *wf_vm_image_stack(uint32_t size) {
    used.stack_bytes = size;
    return (uint8_t *)(uintptr_t)(WF_VM_STACK_TOP - size);
}

void wf_vm_image_touched(uint32_t classes, uint32_t methods, uint32_t blobs, uint32_t descs) {
    code_heap_writable(0);
    used.classes = classes;
    used.methods = methods;
    used.blobs = blobs;
    used.descs = descs;
}

/* Fill the segment map from the (sorted) blob table (wf_vm.h): segments from the one holding
   blob i's start up to the one before blob i+1's start map to i+1. */
static uint32_t fill_segmap(uint32_t blobs) {
    if (blobs == 0) return 0;
    uint16_t *segmap = (uint16_t *)(uintptr_t)WF_VM_SEGMAP;
    uint32_t segments =
        (uint32_t)((WF_VM_BLOB_MUT(blobs - 1)->end - WF_VM_CODE_HEAP - 1) >> WF_VM_SEGMENT_SHIFT) +
        1;
    uint32_t s = 0;
    for (uint32_t i = 0; i < blobs; i++) {
        uint32_t first =
            (uint32_t)((WF_VM_BLOB_MUT(i)->start - WF_VM_CODE_HEAP) >> WF_VM_SEGMENT_SHIFT);
        uint32_t next = i + 1 < blobs
                            ? (uint32_t)((WF_VM_BLOB_MUT(i + 1)->start - WF_VM_CODE_HEAP) >>
                                         WF_VM_SEGMENT_SHIFT)
                            : segments;
        for (s = first; s < next; s++) segmap[s] = (uint16_t)(i + 1);
    }
    return segments;
}

void wf_vm_image_commit(uint32_t classes, uint32_t methods, uint32_t blobs, uint32_t descs) {
    struct wf_vm *vm = WF_VM_MUT;
    wf_vm_image_touched(classes, methods, blobs, descs);
    used.segments = fill_segmap(blobs);
    vm->segmap_count = used.segments;
    vm->segmap = (const uint16_t *)(uintptr_t)WF_VM_SEGMAP;
    vm->version = 1;
    vm->class_count = classes;
    vm->method_count = methods;
    vm->blob_count = blobs;
    vm->desc_count = descs;
    vm->classes = (const struct wf_vm_class *)(uintptr_t)WF_VM_CLASSES;
    vm->methods = (const struct wf_vm_method *)(uintptr_t)WF_VM_METHODS;
    vm->blobs = (const struct wf_vm_blob *)(uintptr_t)WF_VM_BLOBS;
    vm->code_heap_lo = WF_VM_CODE_HEAP;
    vm->code_heap_hi = WF_VM_CODE_HEAP + WF_VM_CODE_HEAP_SIZE;
    vm->native_text_lo = WF_VM_NATIVE_TEXT;
    vm->native_text_hi = WF_VM_NATIVE_TEXT + WF_VM_NATIVE_TEXT_SIZE;
    vm->thread = WF_VM_THREAD_MUT;
    vm->magic = WF_VM_MAGIC;
}
