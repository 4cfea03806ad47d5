/* guard_unsafe_code.c — where a hang must not be unwound at once: the code of the C library,
 * of whatever provides malloc (the C library, or the ASan runtime that intercepts it), of the
 * dynamic loader and of the vDSO (the allocators read the clock with their locks held). A
 * thread interrupted there may hold their locks (the allocator's arena lock, the loader's
 * lock): a siglongjmp out of it leaves the lock taken, and the next malloc or dlopen on any
 * thread waits forever. So the hang handler (guard.c) lets such a
 * thread run on and the watchdog asks again a period later (guard_internal.h); a walker that
 * spins in its own code is interrupted there, one that never leaves the C library is its
 * worker process's supervisor's to end.
 *
 * The ranges are found once, outside any handler, from the executable segments of the
 * objects that hold a few of their symbols; the handler only compares.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guard_internal.h"

enum { MAX_RANGES = 8 };

typedef struct code_range {
    uintptr_t lo, hi;
} code_range;

static code_range ranges[MAX_RANGES];
static int range_count; /* published with a release store, read acquire */
static pthread_once_t found_once = PTHREAD_ONCE_INIT;

typedef struct search {
    uintptr_t symbol;
    code_range found;
} search;

/* The executable segment of a loaded object that holds `symbol`. */
static int find_segment(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    search *s = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (s->symbol >= lo && s->symbol < hi) {
            s->found = (code_range){lo, hi};
            return 1;
        }
    }
    return 0;
}

static void add_object_of(const char *name) {
    void *symbol = dlsym(RTLD_DEFAULT, name);
    if (symbol == NULL || range_count >= MAX_RANGES) return;
    search s = {.symbol = (uintptr_t)symbol};
    if (!dl_iterate_phdr(find_segment, &s)) return;
    for (int i = 0; i < range_count; i++)
        if (ranges[i].lo == s.found.lo) return; /* that object is in already */
    ranges[range_count] = s.found;
    __atomic_store_n(&range_count, range_count + 1, __ATOMIC_RELEASE);
}

/* The vDSO has no symbol dlsym finds: look it up by name. */
static int add_vdso(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    (void)arg;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, "linux-vdso") == NULL) return 0;
    for (int i = 0; i < info->dlpi_phnum && range_count < MAX_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        ranges[range_count] = (code_range){lo, lo + ph->p_memsz};
        __atomic_store_n(&range_count, range_count + 1, __ATOMIC_RELEASE);
    }
    return 1;
}

static void find_all(void) {
    static const char *const symbols[] = {
        "malloc", /* the allocator in use: the C library's, or ASan's */
        "pthread_mutex_lock",
        "dl_iterate_phdr",
        "fwrite",         /* the C library */
        "__tls_get_addr", /* the dynamic loader */
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) add_object_of(symbols[i]);
    dl_iterate_phdr(add_vdso, NULL);
}

void wf_guard_find_unsafe_code(void) { pthread_once(&found_once, find_all); }

int wf_guard_in_unsafe_code(uintptr_t pc) {
    int n = __atomic_load_n(&range_count, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (pc >= ranges[i].lo && pc < ranges[i].hi) return 1;
    return 0;
}
