#!/usr/bin/env python3
"""Benchmark of the native target's unwinders (`make bench`: libunwind): perturbed walks per
second on N processes (target: 50k or more on 2 cores for libunwind) and their ns per step, and
ns per step on unperturbed chains of 16 generated functions (18 frames: bottom, 16, root; for an
unwinder that sees only frame-pointer frames, 16 of those), to read beside the reference
walker's ns per frame on stacks of the same depth (bench of the walker).

    bench/bench_libunwind.py [--seconds 3] [--procs 2] [--unwinder libunwind|llvm|fp|...]
"""

from __future__ import annotations

import argparse
import multiprocessing
import time

from runner import budget

from walkfuzz.targets.native import chaingen
from walkfuzz.targets.native.extension import load
from walkfuzz.targets.native.inputs import INPUT_SIZE
from walkfuzz.targets.native.unwinders import DEFAULT, names

CHAIN_DEPTH = 16
BATCH = 5000


def perturbed_walks(seconds: float, seed: int, unwinder: str) -> tuple[int, int, int, int]:
    """(walks, faults, steps, walk ns) in `seconds` of wf_uw_fuzz_batch on the generator
    stream."""
    native = load(unwinder)
    ffi, lib = native.ffi, native.lib
    lib.wf_uw_set_walk_budget_ns(500_000_000)
    stats = ffi.new("wf_uw_batch_stats *")
    finding = ffi.new("wf_uw_result *")
    current = ffi.new(f"uint8_t[{INPUT_SIZE}]")
    index, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        index += lib.wf_uw_fuzz_batch(seed, index, BATCH, current, stats, finding)
    return int(stats.walks), int(stats.faults), int(stats.unw_steps), int(stats.walk_ns)


def _worker(args: tuple[float, int, str]) -> tuple[int, int, int, int]:
    return perturbed_walks(*args)


def chain(frame_pointers_only: bool) -> list[int]:
    """CHAIN_DEPTH chain functions: all of them, or only those with frame pointers, repeated."""
    pick = [s.index for s in chaingen.chain_specs() if s.frame_pointer or not frame_pointers_only]
    return [pick[i % len(pick)] for i in range(CHAIN_DEPTH)]


def ns_per_step(walks: int, unwinder: str) -> tuple[float, float]:
    """(ns per step: walk time / steps, init and guard included; ns per frame of the whole
    call: chain set-up, capture, walk, check) on unperturbed depth-16 chains."""
    native = load(unwinder)
    ffi, lib = native.ffi, native.lib
    data = bytearray(INPUT_SIZE)
    data[1] = CHAIN_DEPTH - 1
    data[2 : 2 + CHAIN_DEPTH] = bytes(chain(unwinder == "fp"))
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
    parser.add_argument("--seconds", type=float, default=budget(3.0, 0.05))
    parser.add_argument("--procs", type=int, default=budget(2, 1))
    parser.add_argument("--unwinder", choices=names(), default=DEFAULT)
    args = parser.parse_args()
    name = args.unwinder
    # fork: this process loads its one unwinder only after the pool is done
    with multiprocessing.get_context("fork").Pool(args.procs) as pool:
        start = time.perf_counter()
        results = pool.map(_worker, [(args.seconds, 1 + i, name) for i in range(args.procs)])
        elapsed = time.perf_counter() - start
    walks = sum(r[0] for r in results)
    faults = sum(r[1] for r in results)
    steps = sum(r[2] for r in results)
    walk_ns = sum(r[3] for r in results)
    per_step, per_frame = ns_per_step(budget(20000, 50), name)
    print(f"{name} perturbed walks/s ({args.procs} procs): {walks / elapsed:,.0f} "
          f"({walks:,} walks, {faults} guarded faults, {steps / walks:.1f} steps per walk, "
          f"{walk_ns / steps:,.0f} ns per step)")
    print(f"{name} ns per step (depth {CHAIN_DEPTH} chain, unperturbed): {per_step:,.0f}"
          f"  | ns per frame incl. chain set-up, capture, init: {per_frame:,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
