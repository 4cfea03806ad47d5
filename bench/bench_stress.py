#!/usr/bin/env python3
"""Live stress benchmark: per mode, at 100 us and 10 us, achieved samples per CPU-second
against the requested rate, walk latency, and the workload's slowdown against its own
unsampled phase (the two alternate in 0.25 s rounds within a run), side by side; each row is
the run of median slowdown among --repeats, with the slowdowns' range. Targets (issue 6): at
100 us >= 95% delivered and walked, slowdown <= 15%; at 10 us >= 80% delivered. Prints
ratios; asserts nothing.

Each mode runs one worker per CPU it leaves to the workload: signal and queue mode walk in
the worker's own handler (a worker per CPU); thread mode's sampler thread walks on a CPU of
its own (a worker per CPU but one). Thread mode is also shown oversubscribed (a worker per
CPU plus the sampler), where a sample waits for the scheduler to run sampler and worker in turn.

    python bench/bench_stress.py [--seconds 3] [--cpus N] [--modes signal,thread,queue]
                                 [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from walkfuzz.targets.minivm.stress.options import MODES, StressOptions
from walkfuzz.targets.minivm.stress.runner import run_minivm_stress
from walkfuzz.targets.minivm.stress.summary import figures, slowdown

INTERVALS_US = (100, 10)


def one_run(mode: str, interval_us: int, seconds: float, threads: int) -> dict[str, Any]:
    options = StressOptions(mode=mode, interval_ns=interval_us * 1000, threads=threads,
                            duration_ns=int(seconds * 1e9), baseline_ns=int(seconds * 1e9))
    return run_minivm_stress(options)


def lost(result: dict[str, Any]) -> float:
    """The run's slowdown (every run here has a baseline phase, so it is known)."""
    return slowdown(result["total"]) or 0.0


def row(mode: str, interval_us: int, seconds: float, threads: int, repeats: int) -> str:
    """The run of median slowdown among `repeats`, and the slowdowns' range."""
    runs = sorted((one_run(mode, interval_us, seconds, threads) for _ in range(repeats)),
                  key=lost)
    result = runs[len(runs) // 2]
    f, lat = figures(result), result["latency"]
    spread = [100 * lost(r) for r in (runs[0], runs[-1])]
    return (f"{mode:7} {threads:7} {interval_us:5}us {f['requested_per_cpu_second']:9.0f} "
            f"{f['delivered_per_cpu_second']:9.0f} {100 * f['delivered_fraction']:6.1f}% "
            f"{100 * f['walked_fraction']:6.1f}% {lat.get('p50', 0) / 1e3:8.2f} "
            f"{lat.get('p99', 0) / 1e3:9.2f} {100 * lost(result):7.1f}% "
            f"{spread[0]:6.1f}..{spread[1]:<6.1f} {100 * f['invalid_rate']:7.3f}%")


def worker_counts(mode: str, cpus: int) -> list[int]:
    """Workers per row of `mode`: one per CPU the mode leaves free (then oversubscribed)."""
    if mode != "thread":
        return [cpus]
    return sorted({max(1, cpus - 1), cpus})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--cpus", type=int, default=len(os.sched_getaffinity(0)),
                        help="CPUs to plan the worker counts for (default: this process's)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs per row; the row shows the one of median slowdown")
    args = parser.parse_args()
    print(f"live stress, reference walker, {args.cpus} CPUs, {args.seconds:g} s unsampled "
          f"+ {args.seconds:g} s sampled per run (alternating in 0.25 s rounds), "
          f"{args.repeats} runs per row")
    print("mode    workers interval  req/CPU-s deliv/CPU-s deliv%  walked%  p50(us)   p99(us) "
          "slowdown (range)       invalid")
    for mode in args.modes.split(","):
        for threads in worker_counts(mode, args.cpus):
            for interval in INTERVALS_US:
                print(row(mode, interval, args.seconds, threads, args.repeats), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
