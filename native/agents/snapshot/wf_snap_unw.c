/* libunwind's remote walk of a snapshot: an address space whose accessors read the snapshot.
 *
 *   unw_init_remote(cursor, as, view) ── access_reg ──► the snapshot's registers
 *   unw_step ── access_mem ──► the stack bytes, or a module file's bytes at its mapped address
 *            ── find_proc_info ──► the module's .eh_frame_hdr binary-search table, found
 *               through its program headers and searched by libunwind itself
 *               (dwarf_search_unwind_table, the way perf's post-mortem unwinder does it)
 *
 * The generic (remote-capable) libunwind, libunwind-x86_64.so: no UNW_LOCAL_ONLY here.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <libunwind.h>
#include <string.h>

#include "wf_snap_image.h"
#include "wf_snap_walks.h"

/* libunwind's own search of an .eh_frame_hdr table through the address space's accessors;
   exported by libunwind-x86_64.so but not declared by libunwind.h. */
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)
extern int dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                     unw_proc_info_t *pi, int need_unwind_info, void *arg);

/* .eh_frame_hdr encodings of the one table layout the linker writes (binary-search table of
   4-byte data-relative pairs); any other is treated as "no unwind info". */
#define EH_PE_UDATA4 0x03
#define EH_PE_PCREL_SDATA4 0x1b
#define EH_PE_DATAREL_SDATA4 0x3b

typedef struct walk_arg {
    const wf_snap_view *v;
    const wf_snap_image *im;
    wf_snap_result *out;
} walk_arg;

static uint64_t page_down(uint64_t a) { return a & ~(uint64_t)0xfff; }

/* The load bias of mapping m and the address of its file's .eh_frame_hdr (0 if none). */
static uintptr_t eh_frame_hdr(const wf_snap_image *im, const wf_snap_mapping *m) {
    const wf_snap_file *f = &im->file[m->file];
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f->bytes;
    if (f->size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_phoff > f->size || eh->e_phnum > (f->size - eh->e_phoff) / sizeof(Elf64_Phdr))
        return 0;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(f->bytes + eh->e_phoff);
    uintptr_t bias = 0, hdr = 0;
    int loaded = 0;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && page_down(ph[i].p_offset) == m->offset) {
            bias = m->start - page_down(ph[i].p_vaddr);
            loaded = 1;
        }
        if (ph[i].p_type == PT_GNU_EH_FRAME) hdr = ph[i].p_vaddr;
    }
    return loaded && hdr != 0 ? bias + hdr : 0;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                          int need_unwind_info, void *arg) {
    walk_arg *a = arg;
    const wf_snap_mapping *m = wf_snap_mapping_at(a->im, ip);
    if (m == NULL || !m->exec) return -UNW_ENOINFO;
    uintptr_t hdr = eh_frame_hdr(a->im, m);
    uint8_t head[12];
    if (hdr == 0 || wf_snap_read(a->v, a->im, hdr, head, sizeof head) != 0 || head[0] != 1 ||
        head[1] != EH_PE_PCREL_SDATA4 || head[2] != EH_PE_UDATA4 || head[3] != EH_PE_DATAREL_SDATA4)
        return -UNW_ENOINFO;
    uint32_t fde_count;
    memcpy(&fde_count, head + 8, sizeof fde_count);
    unw_dyn_info_t di = {.start_ip = m->start,
                         .end_ip = m->end,
                         .format = UNW_INFO_FORMAT_REMOTE_TABLE,
                         .u.rti = {.segbase = hdr,
                                   .table_len = fde_count * 8 / sizeof(unw_word_t),
                                   .table_data = hdr + sizeof head}};
    return dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
}

/* dwarf_search_unwind_table's unwind info comes from libunwind's own pool and goes back there
   itself; nothing of ours to free. */
static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg) {
    (void)as, (void)pi, (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg) {
    (void)as, (void)dilap, (void)arg;
    return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write,
                      void *arg) {
    (void)as;
    walk_arg *a = arg;
    if (write) return -UNW_EINVAL;
    a->out->reads++;
    if (wf_snap_read(a->v, a->im, addr, valp, sizeof *valp) == 0) return 0;
    a->out->misses++;
    return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write,
                      void *arg) {
    (void)as;
    walk_arg *a = arg;
    if (write || reg < 0 || reg >= WF_SNAP_REGS) return -UNW_EBADREG;
    *valp = a->v->regs[reg];
    return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
                        void *arg) {
    (void)as, (void)reg, (void)val, (void)write, (void)arg;
    return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg) {
    (void)as, (void)c, (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
                         unw_word_t *offp, void *arg) {
    (void)as, (void)addr, (void)buf, (void)len, (void)offp, (void)arg;
    return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = get_proc_name,
};

/* One address space for the process; its caches (keyed by ip) hold as long as the map does. */
static unw_addr_space_t space;
static uint64_t space_generation;

static unw_addr_space_t address_space(const wf_snap_image *im) {
    if (space == NULL) {
        space = unw_create_addr_space(&accessors, 0);
        if (space != NULL) unw_set_caching_policy(space, UNW_CACHE_GLOBAL);
    } else if (space_generation != im->generation) {
        unw_flush_cache(space, 0, 0);
    }
    space_generation = im->generation;
    return space;
}

static int32_t record(walk_arg *a, unw_cursor_t *cursor, int exact) {
    unw_word_t pc = 0, sp = 0, fp = 0;
    unw_get_reg(cursor, UNW_REG_IP, &pc);
    unw_get_reg(cursor, UNW_REG_SP, &sp);
    unw_get_reg(cursor, UNW_X86_64_RBP, &fp);
    return wf_snap_record(a->v, a->out, pc, sp, fp, exact);
}

int32_t wf_snap_walk_libunwind(const wf_snap_view *v, const wf_snap_image *im,
                               wf_snap_result *out) {
    walk_arg a = {v, im, out};
    unw_addr_space_t as = address_space(im);
    unw_cursor_t cursor;
    int rc = as != NULL ? unw_init_remote(&cursor, as, &a) : -UNW_ENOMEM;
    if (rc < 0) {
        out->rc = rc;
        return WF_SNAP_STOP_INIT_ERROR;
    }
    int exact = (v->flags & WF_SNAP_FLAG_EXACT_PC) != 0;
    for (;;) {
        int32_t stop = record(&a, &cursor, exact);
        if (stop != WF_SNAP_STOP_NONE) return stop;
        rc = unw_step(&cursor);
        if (rc <= 0) {
            out->rc = rc;
            return rc == 0 ? WF_SNAP_STOP_END : WF_SNAP_STOP_STEP_ERROR;
        }
        exact = unw_is_signal_frame(&cursor) > 0;
    }
}
