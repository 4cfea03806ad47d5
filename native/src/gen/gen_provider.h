/* gen_provider.h — internal: a FuzzedDataProvider-like consumer of bytes that drives the
 * generator and the mutators. Reads little-endian from the front; once the bytes run out it
 * yields zeros (so every input, even empty, gives a well-formed layout). In seed mode it
 * yields a splitmix64 stream instead and never runs out. */
#ifndef WALKFUZZ_GEN_PROVIDER_H
#define WALKFUZZ_GEN_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct gen_provider {
    const uint8_t *data;
    size_t len, pos;
    int seeded;
    uint64_t state;
} gen_provider;

static inline void provider_bytes(gen_provider *p, const uint8_t *data, size_t len) {
    *p = (gen_provider){.data = data, .len = len};
}

static inline void provider_seed(gen_provider *p, uint64_t seed) {
    *p = (gen_provider){.seeded = 1, .state = seed};
}

static inline uint64_t provider_u64(gen_provider *p) {
    if (p->seeded) { /* splitmix64 */
        uint64_t z = (p->state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    uint64_t v = 0;
    for (int i = 0; i < 8 && p->pos < p->len; i++) v |= (uint64_t)p->data[p->pos++] << (8 * i);
    return v;
}

static inline uint32_t provider_byte(gen_provider *p) {
    if (p->seeded) return (uint32_t)(provider_u64(p) & 0xff);
    return p->pos < p->len ? p->data[p->pos++] : 0;
}

/* A value in [lo, hi] (inclusive) from as few bytes as the range needs. */
static inline uint64_t provider_range(gen_provider *p, uint64_t lo, uint64_t hi) {
    uint64_t span = hi - lo, v = 0;
    if (span == 0) return lo;
    for (uint64_t s = span; s != 0; s >>= 8) v = (v << 8) | provider_byte(p);
    return span == UINT64_MAX ? v : lo + v % (span + 1);
}

/* True with probability about num/256; false once the bytes run out. */
static inline int provider_chance(gen_provider *p, uint32_t num) {
    return provider_byte(p) >= 256 - num;
}

static inline int provider_exhausted(const gen_provider *p) {
    return !p->seeded && p->pos >= p->len;
}

#endif /* WALKFUZZ_GEN_PROVIDER_H */
