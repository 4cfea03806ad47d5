/* Fuzz input bytes <-> case, and the generator stream the plain driver and the bench use. */
#include <string.h>

#include "wf_uw_input.h"

#define OFF_FLAGS 0
#define OFF_DEPTH 1
#define OFF_PATH 2
#define OFF_COUNT 18
#define OFF_PERTURB 19
#define PERTURB_SIZE 10
/* One generated input in this many is unperturbed, so the truth oracle runs all along. */
#define UNPERTURBED_ONE_IN 16

_Static_assert(OFF_PERTURB + PERTURB_SIZE * WF_UW_MAX_PERTURB == WF_UW_INPUT_SIZE,
               "input layout and WF_UW_INPUT_SIZE disagree");

static uint64_t read_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

void wf_uw_decode(const uint8_t *data, size_t size, wf_uw_case *c) {
    uint8_t in[WF_UW_INPUT_SIZE] = {0};
    memcpy(in, data, size < sizeof in ? size : sizeof in);
    c->use_getcontext = in[OFF_FLAGS] & 1;
    c->signal_frame_flag = !(in[OFF_FLAGS] & 2);
    c->depth = 1 + in[OFF_DEPTH] % WF_UW_MAX_DEPTH;
    for (int i = 0; i < WF_UW_MAX_DEPTH; i++) c->path[i] = in[OFF_PATH + i] % WF_UW_CHAIN_FUNCTIONS;
    c->count = in[OFF_COUNT] % (WF_UW_MAX_PERTURB + 1);
    for (int i = 0; i < WF_UW_MAX_PERTURB; i++) {
        const uint8_t *p = &in[OFF_PERTURB + PERTURB_SIZE * i];
        c->perturbation[i].reg_selector = p[0];
        c->perturbation[i].kind = p[1] % WF_UW_KINDS;
        c->perturbation[i].operand = read_u64(p + 2);
    }
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

void wf_uw_generate(uint64_t seed, uint64_t index, uint8_t *out) {
    uint64_t state = seed ^ (index * 0xd1b54a32d192ed03u);
    for (int i = 0; i < WF_UW_INPUT_SIZE; i += 8) {
        uint64_t r = splitmix64(&state);
        memcpy(out + i, &r, WF_UW_INPUT_SIZE - i < 8 ? (size_t)(WF_UW_INPUT_SIZE - i) : 8);
    }
    uint64_t r = splitmix64(&state);
    /* Mostly one or two perturbations; an unperturbed one now and then. */
    static const uint8_t counts[8] = {1, 1, 1, 2, 2, 3, 4, 1};
    out[OFF_COUNT] = r % UNPERTURBED_ONE_IN == 0 ? 0 : counts[(r >> 8) % 8];
    for (int i = 0; i < WF_UW_MAX_PERTURB; i++) /* never NONE in generated inputs */
        out[OFF_PERTURB + PERTURB_SIZE * i + 1] =
            1 + (uint8_t)((r >> (16 + 8 * i)) % (WF_UW_KINDS - 1));
}
