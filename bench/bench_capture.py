#!/usr/bin/env python3
"""What capturing failed live samples costs (docs/stress.md "Findings"): per mode at 100 us
and 10 us, samples delivered per CPU-second with capture off and on (same run conditions,
runs alternating off/on), and the time of one capture in the handler, timed with the TSC:

  - signal mode, a planted-bug walker (almost every sample fails): ns per capture of a kept
    sample (registers, thread record, stack from sp to the worker's C base, walk, expected
    trace into a ring entry);
  - queue mode, the reference walker: ns per stack copy at every enqueue (the element's walk
    is judged at the safepoint, so every element's thread at the signal is kept in its slot).

Each figure is the median of --repeats runs. Prints; asserts nothing.

    python bench/bench_capture.py [--seconds 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from typing import Any

from runner import Row, budget

from walkfuzz.targets.minivm.live.options import StressOptions
from walkfuzz.targets.minivm.live.runner import run_minivm_stress
from walkfuzz.targets.minivm.live.summary import figures
from walkfuzz.targets.minivm.planted import build, planted_bug

INTERVALS_US = (100, 10)
SECONDS = 2.0
REPEATS = 3


def _run(mode: str, interval_us: int, capture: bool, seconds: float,
         walker: str | None = None) -> dict[str, Any]:
    threads = len(os.sched_getaffinity(0))
    return run_minivm_stress(StressOptions(
        mode=mode, interval_ns=interval_us * 1000, threads=threads, duration_ns=int(seconds * 1e9),
        baseline_ns=0, capture=capture, walker=walker))


def delivery_rows(mode: str, interval_us: int, seconds: float, repeats: int) -> list[Row]:
    off: list[float] = []
    on: list[float] = []
    copy_ns: list[float] = []
    for _ in range(repeats):   # alternate, so drift in the machine's load weighs on both
        off.append(figures(_run(mode, interval_us, False, seconds))["delivered_per_cpu_second"])
        result = _run(mode, interval_us, True, seconds)
        on.append(figures(result)["delivered_per_cpu_second"])
        copy_ns.append(result["capture"].get("p50_ns", 0.0))
    group = f"capture {mode} {interval_us}us"
    rows = [Row(group, "delivered/CPU-s, capture off", statistics.median(off), "1/s"),
            Row(group, "delivered/CPU-s, capture on", statistics.median(on), "1/s",
                baseline="delivered/CPU-s, capture off")]
    if mode == "queue":
        rows.append(Row(group, "stack copy per enqueue, p50", statistics.median(copy_ns), "ns"))
    return rows


def kept_capture_rows(seconds: float, repeats: int) -> list[Row]:
    walker = str(build(planted_bug("frame-size-off-by-one"), "plain"))
    runs = [_run("signal", 100, True, seconds, walker)["capture"] for _ in range(repeats)]
    group = "capture signal, planted walker"
    return [Row(group, "per kept sample, p50", statistics.median(r.get("p50_ns", 0.0)
                                                                  for r in runs), "ns"),
            Row(group, "per kept sample, mean", statistics.median(r["ns_per_copy"] for r in runs),
                "ns"),
            Row(group, "stack bytes per capture", statistics.median(r["bytes_per_copy"]
                                                                     for r in runs), "B")]


def measure(seconds: float = SECONDS, repeats: int = REPEATS) -> list[Row]:
    seconds, repeats = budget((seconds, repeats), (0.05, 1))
    rows = kept_capture_rows(seconds, repeats)
    for mode in ("signal", "queue"):
        for interval in INTERVALS_US:
            rows += delivery_rows(mode, interval, seconds, repeats)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args()
    for row in measure(args.seconds, args.repeats):
        print(f"{row.group:34} {row.case:34} {row.value:12.1f} {row.unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
