#!/usr/bin/env python3
"""Benchmark of the libunwind target (`make bench`): perturbed walks per second on N processes
(target: 50k or more on 2 cores) and ns per unw_step on unperturbed chains of 16 generated
functions (18 frames: bottom, 16, root), to read beside the reference walker's ns per frame
on stacks of the same depth (bench of the walker).

    bench/bench_libunwind.py [--seconds 3] [--procs 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import time

from walkfuzz.targets.native.case import INPUT_SIZE
from walkfuzz.targets.native.extension import load

CHAIN_DEPTH = 16
BATCH = 5000


def perturbed_walks(seconds: float, seed: int) -> tuple[int, int, int]:
    """(walks, faults, unw_steps) in `seconds` of wf_uw_fuzz_batch on the generator stream."""
    native = load()
    ffi, lib = native.ffi, native.lib
    lib.wf_uw_set_walk_budget_ns(500_000_000)
    stats = ffi.new("wf_uw_batch_stats *")
    finding = ffi.new("wf_uw_result *")
    current = ffi.new(f"uint8_t[{INPUT_SIZE}]")
    index, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        index += lib.wf_uw_fuzz_batch(seed, index, BATCH, current, stats, finding)
    return int(stats.walks), int(stats.faults), int(stats.unw_steps)


def _worker(args: tuple[float, int]) -> tuple[int, int, int]:
    return perturbed_walks(*args)


def ns_per_step(walks: int) -> tuple[float, float]:
    """(ns per unw_step: walk time / steps, init and guard included; ns per frame of the whole
    call: chain set-up, capture, walk, check) on unperturbed depth-16 chains."""
    native = load()
    ffi, lib = native.ffi, native.lib
    data = bytearray(INPUT_SIZE)
    data[1] = CHAIN_DEPTH - 1
    data[2 : 2 + CHAIN_DEPTH] = bytes(range(CHAIN_DEPTH))
    raw = bytes(data)
    out = ffi.new("wf_uw_result *")
    walk_ns = steps = frames = 0
    start = time.perf_counter_ns()
    for _ in range(walks):
        lib.wf_uw_fuzz_one(raw, INPUT_SIZE, out)
        walk_ns += out.walk_ns
        steps += out.unw_steps
        frames += out.frames
    total = time.perf_counter_ns() - start
    if out.status != 0 or out.frames != CHAIN_DEPTH + 2:
        raise SystemExit(f"unperturbed depth-{CHAIN_DEPTH} walk went wrong: status {out.status}")
    return walk_ns / steps, total / frames


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--procs", type=int, default=2)
    args = parser.parse_args()
    with multiprocessing.get_context("fork").Pool(args.procs) as pool:
        start = time.perf_counter()
        results = pool.map(_worker, [(args.seconds, 1 + i) for i in range(args.procs)])
        elapsed = time.perf_counter() - start
    walks = sum(r[0] for r in results)
    faults = sum(r[1] for r in results)
    steps = sum(r[2] for r in results)
    per_step, per_frame = ns_per_step(20000)
    print(f"libunwind perturbed walks/s ({args.procs} procs): {walks / elapsed:,.0f} "
          f"(target >= 50,000; {walks:,} walks, {faults} guarded faults, "
          f"{steps / walks:.1f} unw_step per walk)")
    print(f"libunwind ns per unw_step (depth {CHAIN_DEPTH} chain, unperturbed): {per_step:,.0f}"
          f"  | ns per frame incl. chain set-up, capture, init: {per_frame:,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
