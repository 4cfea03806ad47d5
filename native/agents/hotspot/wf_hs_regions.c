/* Address regions of the running JVM, from /proc/self/maps:
 *   code    anonymous executable mappings: the code cache (interpreter, stubs, nmethods)
 *   heap    the largest anonymous read-write mapping: the Java heap's committed part
 *   libjvm  libjvm.so's executable text
 * A reader in a signal handler needs a stable copy: two buffers, the reporter thread fills the
 * one not published and then publishes it. A refresh happens every second at most, and a
 * handler reads for microseconds, so a buffer is never rewritten under a reader.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "wf_hs.h"

#define MAX_RANGES 64 /* per kind; the code cache has 3 segments plus stubs */

typedef struct {
    uintptr_t lo[MAX_RANGES], hi[MAX_RANGES];
    int n;
} ranges;

typedef struct {
    ranges kind[WF_HS_REGION_KINDS];
} region_set;

static region_set buffers[2];
static int published = -1; /* index of the readable buffer, -1 before the first refresh */

static void add(ranges *r, uintptr_t lo, uintptr_t hi) {
    if (r->n < MAX_RANGES) {
        r->lo[r->n] = lo;
        r->hi[r->n] = hi;
        r->n++;
    }
}

static void classify(region_set *set, uintptr_t lo, uintptr_t hi, const char *perms,
                     const char *path, uintptr_t *heap_size) {
    int anon = path[0] == '\0';
    if (anon && perms[2] == 'x') add(&set->kind[WF_HS_REGION_CODE], lo, hi);
    if (anon && perms[0] == 'r' && perms[1] == 'w' && hi - lo > *heap_size) {
        *heap_size = hi - lo;
        set->kind[WF_HS_REGION_HEAP].n = 0;
        add(&set->kind[WF_HS_REGION_HEAP], lo, hi);
    }
    const char *base = strrchr(path, '/');
    if (base && !strcmp(base, "/libjvm.so") && perms[2] == 'x')
        add(&set->kind[WF_HS_REGION_LIBJVM], lo, hi);
}

void wf_hs_regions_refresh(void) {
    int target = published == 0 ? 1 : 0;
    region_set *set = &buffers[target];
    memset(set, 0, sizeof *set);
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return;
    char line[1024];
    uintptr_t heap_size = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8] = {0};
        char path[512] = {0};
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %511[^\n]", &lo, &hi, perms, path) < 3) continue;
        char *p = path;
        while (*p == ' ') p++;
        classify(set, lo, hi, perms, p, &heap_size);
    }
    fclose(f);
    __atomic_store_n(&published, target, __ATOMIC_RELEASE);
}

static const region_set *current(void) {
    int i = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
    return i < 0 ? NULL : &buffers[i];
}

int wf_hs_regions_contains(wf_hs_region_kind kind, uintptr_t addr) {
    const region_set *set = current();
    if (!set) return 0;
    const ranges *r = &set->kind[kind];
    for (int i = 0; i < r->n; i++)
        if (addr >= r->lo[i] && addr < r->hi[i]) return 1;
    return 0;
}

int wf_hs_regions_is_java_code(uintptr_t pc) {
    return wf_hs_regions_contains(WF_HS_REGION_CODE, pc);
}

/* /proc/self/maps is sorted by address: the first range of a kind is its lowest. */
uintptr_t wf_hs_regions_start(wf_hs_region_kind kind) {
    const region_set *set = current();
    return set && set->kind[kind].n ? set->kind[kind].lo[0] : 0;
}

uintptr_t wf_hs_regions_pick(wf_hs_region_kind kind, uint64_t r) {
    const region_set *set = current();
    if (!set || set->kind[kind].n == 0) return 0;
    const ranges *rs = &set->kind[kind];
    int i = (int)(r % (uint64_t)rs->n);
    uintptr_t span = rs->hi[i] - rs->lo[i];
    return (rs->lo[i] + (uintptr_t)((r >> 8) % span)) & ~(uintptr_t)7;
}
