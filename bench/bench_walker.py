"""The reference walker's speed: ns per frame on a 1000-frame mixed stack, side by side with a
bare frame-pointer chain walk over the same memory (the floor) and the example plugin walker,
and decode + map of a typical case (target under 2 µs).

The target, within 3x the floor, applies to the cost per *physical* frame: the walker's time
for one walk divided by the physical frames it decodes, against the floor's time for a chain
of exactly as many links over the same stack words. The cost per frame *returned* (inlined
scopes included) is shown too, against the same floor. How the walks are timed, and the same
figures for other stacks and walkers: walkfuzz.targets.minivm.walk_speed (`walkfuzz bench`).
"""

from __future__ import annotations

from pathlib import Path

from runner import Row, budget

from walkfuzz.core import native
from walkfuzz.targets.minivm import walk_speed
from walkfuzz.targets.minivm.case import native as case_native

ROUNDS = 5
SECONDS = 4.0  # rounds go on this long: a shared machine's neighbours come in spells (walk_speed)
DECODES = 50_000
TYPICAL_SEED = 3
# The example plugin walker (examples/walker/, built by `make build`): the figures
# docs/writing-a-walker.md quotes for a walker written from the docs.
EXAMPLE = Path(__file__).resolve().parents[1] / "build" / "walkers" / "example-walker-plain.so"


def _ns_per_walk(walker: walk_speed.WalkerTiming) -> float:
    if walker.ns_per_walk is None:
        raise RuntimeError(f"the {walker.name} walker walks the bench stack wrongly: "
                           f"{walker.wrong}")
    return walker.ns_per_walk


def measure() -> list[Row]:
    lib = native.load().lib
    if not EXAMPLE.exists():
        raise RuntimeError(f"{EXAMPLE} is missing: run `make build` first")
    walkers = {"reference": lib.wf_walker_reference(),
               "example": case_native.load_walker(str(EXAMPLE))}
    t = walk_speed.measure(walk_speed.STACKS["mixed"], walkers, budget(ROUNDS, 1),
                          budget(SECONDS, 0.05))
    reference, example = t.walkers
    reference_ns, example_ns = _ns_per_walk(reference), _ns_per_walk(example)

    data = case_native.generate(seed=TYPICAL_SEED, max_frames=12)
    mapped = case_native.mapped_case()
    decode_ns = min(native.load_testing().lib.wf_bench_decode_ns(data, len(data), mapped,
                                                                  budget(DECODES, 100))
                    for _ in range(budget(ROUNDS, 1)))

    group = f"walk, {t.physical} physical / {reference.returned} returned frames"
    return [
        Row(group, "fp chain (floor), per link", t.floor_ns, "ns/frame"),
        Row(group, "reference, per physical frame", reference_ns / t.physical,
            "ns/frame", baseline="fp chain (floor), per link", target="<= 3x floor (this row)"),
        Row(group, "reference, per frame returned", reference_ns / reference.returned,
            "ns/frame", baseline="fp chain (floor), per link"),
        Row(group, "example walker, per physical frame", example_ns / t.physical,
            "ns/frame", baseline="reference, per physical frame"),
        Row("case decode + map", f"typical case, {len(data)} bytes", decode_ns / 1000, "us",
            target="< 2 us"),
    ]
