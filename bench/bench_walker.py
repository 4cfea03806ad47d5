"""The reference walker's speed (issue 3): ns per frame on a 1000-frame mixed stack, side by
side with a bare frame-pointer chain walk over the same memory (the floor), and decode + map
of a typical case (target under 2 µs).

The target, within 3x the floor, applies to the cost per *physical* frame: the walker's time
for one walk divided by the physical frames it decodes (taken from the executable spec's walk
of the same case: Java frames, plus the entry and stub frames a Java-only walk steps through),
against the floor's time for a chain of exactly as many links, laid over the same stack words
the walker reads to find each sender. The cost per frame *returned* (inlined scopes included)
is shown too, against the same floor.

The loops run in C (native/src/walker_bench.c): the walker is called as a profiler calls it
(RunWithIterator, then NextFrame through the walker table). Each loop is warmed up, then
timed in batches; a figure is the fastest batch of all rounds, and the rounds of walker and
floor alternate, so both see the same machine (it is shared).
"""

from __future__ import annotations

from runner import Row

from walkfuzz import case as case_format
from walkfuzz import native, spec

ROUNDS = 5
WALKS_PER_BATCH = 50
BATCHES = 20
DECODES = 50_000
DEEP_SEED, TYPICAL_SEED = 7, 3


def params(lib_ffi: tuple[object, object], **fields: int) -> object:
    ffi, lib = lib_ffi
    p = ffi.new("wf_gen_params *")  # type: ignore[attr-defined]
    lib.wf_gen_default_params(p)  # type: ignore[attr-defined]
    for name, value in fields.items():
        setattr(p, name, value)
    return p


def encode(ffi: object, lib: object, case: object) -> object:
    size = -lib.wf_case_encode(case, ffi.NULL, 0)  # type: ignore[attr-defined]
    data = ffi.new("uint8_t[]", size)  # type: ignore[attr-defined]
    lib.wf_case_encode(case, data, size)  # type: ignore[attr-defined]
    return data


def decoded_sps(ffi: object, data: object) -> list[int]:
    """The sp of every physical frame the walk decodes, top first (the spec's steps)."""
    walk = spec.walk(case_format.decode(bytes(ffi.buffer(data)), "bench case"))  # type: ignore[attr-defined]
    return [step.frame.sp for step in walk.steps if step.code is None]


def measure() -> list[Row]:
    ffi, lib = native.load()
    case = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    deep = params((ffi, lib), state=lib.WF_THREAD_IN_JAVA, options=0, entry=0, consistent=1,
                  min_frames=1000, max_frames=1000)
    assert lib.wf_gen_from_seed(DEEP_SEED, deep, case) == 0
    sps = decoded_sps(ffi, encode(ffi, lib, case))
    physical = len(sps)
    returned, distinct, links = (ffi.new("uint32_t *") for _ in range(3))
    walker = lib.wf_walker_reference()
    chain = ffi.new("uint64_t[]", sps)
    walk_ns, floor_ns = float("inf"), float("inf")
    for _ in range(ROUNDS):
        walk_ns = min(walk_ns, lib.wf_bench_walk_ns(walker, case, WALKS_PER_BATCH, BATCHES,
                                                    returned, distinct))
        floor_ns = min(floor_ns, lib.wf_bench_fp_chain_ns(chain, physical, WALKS_PER_BATCH,
                                                          BATCHES, links))
    assert links[0] == physical, f"fp chain walked {links[0]} links of {physical} frames"

    typical = params((ffi, lib), max_frames=12)
    assert lib.wf_gen_from_seed(TYPICAL_SEED, typical, case) == 0
    data = encode(ffi, lib, case)
    size = len(data)
    decode_ns = min(lib.wf_bench_decode_ns(data, size, case, DECODES) for _ in range(ROUNDS))

    group = f"walk, {physical} physical / {returned[0]} returned frames"
    return [
        Row(group, "fp chain (floor), per link", floor_ns / physical, "ns/frame"),
        Row(group, "reference, per physical frame", walk_ns / physical, "ns/frame",
            baseline="fp chain (floor), per link", target="<= 3x floor (this row)"),
        Row(group, "reference, per frame returned", walk_ns / returned[0], "ns/frame",
            baseline="fp chain (floor), per link"),
        Row("case decode + map", f"typical case, {size} bytes", decode_ns / 1000, "us",
            target="< 2 us"),
    ]
