/* wf_case_expected.h — section 11 of a case, EXPECTED: the live oracle's expected trace of a
 * sample taken by live stress (docs/case-format.md §2 "11 EXPECTED", docs/stress.md), so a
 * live finding saved as a case replays against what the live run expected, with the live
 * oracle's classes (wf_live_replay.h).
 *
 *   u8 mode (1 signal, 2 thread, 3 queue) | u8 source | u8 window | u8 reserved=0
 *   s32 end_code | u32 count (<= WF_CASE_MAX_EXPECTED)
 *   count frames, innermost first: u32 method | s32 bci | u8 type | s8 comp_level | u16 0
 *
 * source: which walk of the case the trace is for —
 *   WALK     the walk of CONTEXT per WALK (signal and thread mode)
 *   ENQUEUE  the first ENQUEUE of section 9: its result, as an empty walk ending with that code
 *            (queue mode, a sample whose Enqueue failed in the handler)
 *   ELEMENT  the walk of the first element handler call of section 9 (queue mode)
 * Like section 9, it belongs to the mapped case: decoding another case replaces it.
 */
#ifndef WALKFUZZ_WF_CASE_EXPECTED_H
#define WALKFUZZ_WF_CASE_EXPECTED_H

#include <stdint.h>

/* cffi:begin */
/* Frames of an EXPECTED section: WF_LIVE_SHADOW_MAX, so every trace a live snapshot holds
   fits, the recursive workload's past the depth limit too (78 KiB in each of the two
   structs that hold one: the decoded section, live_case.c's encoder input). */
#define WF_CASE_MAX_EXPECTED 6656
#define WF_CASE_EXPECTED_FRAME_SIZE 12

enum wf_expected_source { WF_EXPECTED_WALK = 1, WF_EXPECTED_ENQUEUE = 2, WF_EXPECTED_ELEMENT = 3 };

/* One frame as the live oracle compares it (also the live run's wf_live_frame). */
typedef struct wf_expected_frame {
    int32_t method; /* method index; -1 none (non-Java); -2 not a method handle */
    int32_t bci;
    int8_t type;  /* ASGST_FrameTypeId */
    int8_t level; /* comp level */
    uint8_t reserved[2];
} wf_expected_frame;

typedef struct wf_case_expected {
    uint8_t mode;     /* WF_LIVE_MODE_* of the run that sampled it */
    uint8_t source;   /* wf_expected_source */
    uint8_t window;   /* wf_live_window_kind of the sampled pc */
    int32_t end_code; /* the end the walk should have */
    uint32_t count;
    wf_expected_frame frames[6656]; /* WF_CASE_MAX_EXPECTED, innermost first */
} wf_case_expected;

/* The EXPECTED section of the mapped case, or NULL when it has none. */
const wf_case_expected *wf_case_expected_get(void);
/* cffi:end */

#endif /* WALKFUZZ_WF_CASE_EXPECTED_H */
