/* live_depth.c — the depth limit in the live oracle: the trace a correct walker gives of a
 * sample whose stack holds more than WF_WALK_MAX_DEPTH physical frames.
 *
 * A walker decodes at most WF_WALK_MAX_DEPTH physical frames and then ends with
 * ASGST_WF_DEPTH_LIMIT (docs/case-format.md §4.2; walkfuzz.targets.minivm.spec): it reports the
 * frames of the first WF_WALK_MAX_DEPTH physical frames from the top, and frames it walks
 * through without reporting (entry frames of a Java-only walk, stubs) count as well. The
 * shadow stack names reported frames only, so the physical frames are counted from the
 * recursive workload's shape, which has no inlining, no interpreted methods (no c2i adapter)
 * and two shapes of upcall:
 *
 *   ENTRY | J | N | ENTRY | K | J | N | ENTRY | J | N   (outermost ... innermost; J and K
 *                                                        compiled, N native)
 *
 * every shadow record is one physical frame; an entry frame lies between each Java record and
 * the native record below it (the C frames of N's body are skipped by the jump to the saved
 * anchor), and one more below the outermost record (the worker's C -> Java entry). A walk
 * that starts in an entry frame or a stub (from the registers, or from an anchor the safepoint
 * stub set) decodes that frame first and reports nothing of it.
 *
 * The other workloads never come near the limit (their shadow stays under a few hundred
 * records), so the cut is made for the recursive one only, where this count is exact.
 */
#include "wf_live_worker.h"

/* Whether a walk starting at pc decodes a frame that reports nothing: an entry or a stub. */
static int silent_start(uintptr_t pc) {
    const struct wf_vm *root = (const struct wf_vm *)WF_VM_ROOT;
    for (uint32_t i = 0; i < root->blob_count; i++) {
        const struct wf_vm_blob *b = &root->blobs[i];
        if (pc >= b->start && pc < b->end)
            return b->kind == WF_BLOB_ENTRY || b->kind == WF_BLOB_STUB;
    }
    return 0;
}

static int is_native(const struct wf_live_shadow *r) {
    return (r->type & 0xff) == ASGST_FRAME_JAVA_NATIVE;
}

uint32_t wf_live_physical_frames(const struct wf_live_snapshot *s, uintptr_t start_pc,
                                 uint32_t *kept) {
    uint32_t physical = silent_start(start_pc) ? 1 : 0;
    *kept = 0;
    for (uint32_t k = s->depth; k-- > 0;) { /* innermost first */
        physical++;
        if (physical <= WF_WALK_MAX_DEPTH) (*kept)++;
        int below_is_native = k > 0 && is_native(&s->frames[k - 1]);
        if (!is_native(&s->frames[k]) && (k == 0 || below_is_native)) physical++; /* entry */
    }
    return physical;
}

void wf_live_expect_depth(struct wf_live_snapshot *s, uint32_t state,
                          const struct wf_vm_anchor *anchor, uintptr_t pc) {
    uintptr_t start = pc;
    if (state != WF_THREAD_IN_JAVA) /* walked from the anchor (spec §4.1 step 5) */
        start =
            anchor->pc != 0 || anchor->sp == 0 ? anchor->pc : *(const uintptr_t *)(anchor->sp - 8);
    uint32_t kept;
    if (wf_live_physical_frames(s, start, &kept) <= WF_WALK_MAX_DEPTH) return;
    uint32_t drop = s->depth - kept; /* the outermost records: past the limit */
    for (uint32_t k = 0; k < kept; k++) s->frames[k] = s->frames[k + drop];
    s->depth = kept;
    s->end = ASGST_WF_DEPTH_LIMIT;
}
