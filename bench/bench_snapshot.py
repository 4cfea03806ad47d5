#!/usr/bin/env python3
"""Benchmark of remote-memory mode (`make bench`): snapshot walks per second and ns per frame of
each unwinder on one captured depth-16 chain (18 frames), unmutated and with the stack and
registers mutated as a campaign mutates them, side by side in one process, interleaved over
rounds so that load from elsewhere falls on both alike.

    bench/bench_snapshot.py [--walks 3000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from runner import budget

from walkfuzz.targets.native.snapshot.capture import capture_chain
from walkfuzz.targets.native.snapshot.format import join_walked, split_walked
from walkfuzz.targets.native.snapshot.native import load
from walkfuzz.targets.native.snapshot.walk import STOP_NAMES, UNWINDERS

CHAIN = list(range(16))


def mutants(data: bytes, count: int, seed: int) -> list[bytes]:
    """Up to 8 words of the registers and stack each (the parts a campaign mutates): random,
    zero, a stack address, one bit flipped."""
    rng = random.Random(seed)
    stack_addr = int.from_bytes(data[16:24], "little")
    head, walked, middle = split_walked(data)
    out = []
    for _ in range(count):
        m = bytearray(walked)
        for _ in range(rng.randrange(1, 9)):
            at = rng.choice((8 * rng.randrange(17), rng.randrange(len(m) - 8)))
            word = rng.choice((rng.randrange(1 << 64), 0, stack_addr + rng.randrange(0, 8192, 8),
                               int.from_bytes(m[at:at + 8], "little") ^ 1 << rng.randrange(64)))
            m[at:at + 8] = word.to_bytes(8, "little")
        out.append(join_walked(head, bytes(m), middle))
    return out


def run(lib: object, ffi: object, code: int, inputs: list[bytes]) -> tuple[float, int, Counter]:
    """(seconds, frames, stops) of one pass over inputs."""
    out = ffi.new("wf_snap_result *")  # type: ignore[attr-defined]
    walk = lib.wf_snap_walk  # type: ignore[attr-defined]
    frames, stops = 0, Counter()
    start = time.perf_counter()
    for data in inputs:
        stops[walk(code, data, len(data), out)] += 1
        frames += out.frames
    return time.perf_counter() - start, frames, stops


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--walks", type=int, default=budget(3000, 20))
    parser.add_argument("--rounds", type=int, default=budget(3, 1))
    args = parser.parse_args()
    native = load()
    data = capture_chain(CHAIN).encode()
    kinds = {"unmutated": [data] * args.walks, "mutated": mutants(data, args.walks, 25)}
    rates: dict[tuple[str, str], list[float]] = {}
    per_frame: dict[tuple[str, str], list[float]] = {}
    stops: dict[tuple[str, str], Counter] = {}
    for _ in range(args.rounds):
        for name, code in UNWINDERS.items():
            for kind, inputs in kinds.items():
                seconds, frames, seen = run(native.lib, native.ffi, code, inputs)
                rates.setdefault((name, kind), []).append(len(inputs) / seconds)
                per_frame.setdefault((name, kind), []).append(seconds * 1e9 / max(frames, 1))
                stops[(name, kind)] = seen
    for (name, kind), values in rates.items():
        ns = per_frame[(name, kind)]
        seen = ", ".join(f"{STOP_NAMES[s]} {n}" for s, n in sorted(stops[(name, kind)].items()))
        print(f"snapshot {name:9} {kind:9} walks/s {min(values):9,.0f} .. {max(values):9,.0f}"
              f"  ns/frame {min(ns):7,.0f} .. {max(ns):7,.0f}  stops: {seen}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
