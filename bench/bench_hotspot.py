#!/usr/bin/env python3
"""HotSpot target benchmark (issue 8): prints ratios, asserts nothing.

1. Perturbed AsyncGetCallTrace calls per second on this machine (target >= 100k on 2 cores).
2. Stress CPU overhead at 100 us: the same fixed amount of workload work, sampled at 100 us
   per thread vs loaded with the agent but unsampled (target <= 25% more CPU).

    .venv/bin/python bench/bench_hotspot.py [--jdk 17] [--fuzz-seconds 10] [--iterations 100000]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from walkfuzz.targets.hotspot.agent_build import build_agent
from walkfuzz.targets.hotspot.campaign import BUILD_DIR, DEBUG_NON_SAFEPOINTS, run_hotspot_fuzz
from walkfuzz.targets.hotspot.jdk import build_jdk, find_jdk
from walkfuzz.targets.hotspot.jvm_run import run_jvm
from walkfuzz.targets.hotspot.workload import build as build_workload

THREADS = 2


def fixed_work_cpu(jdk_label: str, interval_us: int, iterations: int, out: Path,
                   check_every_ms: int = 5) -> tuple[float, float]:
    """(process CPU seconds, wall seconds) of `iterations` workload steps per thread."""
    jdk, builder = find_jdk(jdk_label), build_jdk()
    assert builder.include is not None and builder.javac is not None
    agent = build_agent(builder.include, BUILD_DIR)
    workload = build_workload(1, builder.javac, BUILD_DIR / "workloads")
    run = run_jvm(jdk, agent, workload, out, {"mode": "stress", "interval_ns": interval_us * 1000,
                                                   "check_every_ms": check_every_ms},
                  threads=THREADS, millis=0, iterations=iterations, jvm_flags=DEBUG_NON_SAFEPOINTS)
    summary = run.summary or {}
    return float(str(summary.get("process_cpu_s", 0))), run.wall_s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jdk", default="17")
    parser.add_argument("--fuzz-seconds", type=float, default=10.0)
    parser.add_argument("--iterations", type=int, default=100000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-hotspot-") as tmp:
        hs = run_hotspot_fuzz(Path(tmp) / "fuzz", jdk=args.jdk, duration_s=args.fuzz_seconds,
                              argv=["bench"])
        rate = hs.counters["perturbed_calls_per_s"]
        print(f"hotspot fuzz  JDK {hs.jdk.version}: {hs.counters['asgct_calls']} perturbed calls"
              f" in {hs.counters['wall_s']} s = {rate} calls/s "
              f"({hs.counters['perturbed_calls_per_cpu_s']} per CPU-s); target >= 100000: "
              f"ratio {int(str(rate)) / 100000:.1f}x")
        base_cpu, base_wall = fixed_work_cpu(args.jdk, 0, args.iterations, Path(tmp) / "base")
        print(f"hotspot stress JDK {hs.jdk.version}: {args.iterations} steps x {THREADS} threads,"
              f" unsampled: {base_cpu:.2f} CPU-s ({base_wall:.1f} s wall)")
        for label, check_ms in (("sampling only", 0), ("sampling + GetStackTrace oracle", 5)):
            cpu, wall = fixed_work_cpu(args.jdk, 100, args.iterations, Path(tmp) / label[:5],
                                       check_ms)
            print(f"  100 us, {label}: {cpu:.2f} CPU-s ({wall:.1f} s wall): CPU overhead "
                  f"{(cpu - base_cpu) / base_cpu:+.1%} (target <= +25%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
