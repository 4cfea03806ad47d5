/* A fuzz input decoded (layout in wf_unwind.h) (internal). */
#ifndef WF_UW_INPUT_H
#define WF_UW_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "wf_uw_chain.h"
#include "wf_unwind.h"

typedef struct wf_uw_perturbation {
    uint8_t reg_selector; /* picks a register: SELECTABLE in wf_uw_perturb.c */
    uint8_t kind;         /* % WF_UW_KINDS, a wf_uw_kind */
    uint64_t operand;
} wf_uw_perturbation;

typedef struct wf_uw_case {
    int use_getcontext;    /* capture with glibc getcontext, else the unwinder's own */
    int signal_frame_flag; /* init with UNW_INIT_SIGNAL_FRAME */
    unsigned depth;
    uint8_t path[WF_UW_MAX_DEPTH];
    unsigned count;
    wf_uw_perturbation perturbation[WF_UW_MAX_PERTURB];
} wf_uw_case;

/* Decode any bytes (zero-padded to WF_UW_INPUT_SIZE) into a case. Never fails. */
void wf_uw_decode(const uint8_t *data, size_t size, wf_uw_case *c);

#endif
