#!/usr/bin/env python3
"""Benchmark of sanitizer campaigns (`make bench`): exec/s of a `walkfuzz fuzz --sanitizer
address` campaign (the core built with ASan, UBSan and coverage, atheris's asan_with_fuzzer.so
preloaded) next to the same campaign on the cov build, both -j 1 on the layouts harness from
the shipped seeds, and their ratio. What the sanitizers cost a campaign; no target: it is the
price of finding memory errors that do not fault.

    bench/bench_sanitizer.py [--seconds 10]

Under bench/runner.py, `measure()` gives the same figures as table rows (BENCH_FUZZ_SECONDS
sets the time per campaign, default 10).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from runner import Row, budget

ROOT = Path(__file__).resolve().parent.parent
HARNESS = "layouts"
BUILDS = {"cov": [], "asan": ["--sanitizer", "address"]}  # flags of `walkfuzz fuzz`


def campaign_rate(build: str, seconds: float, work: Path) -> float:
    """Mean exec/s of a -j 1 campaign on `build`, start-up and the closing sample left out."""
    out = work / f"campaign-{build}"
    done = subprocess.run([sys.executable, "-m", "walkfuzz.cli", "fuzz", "--harness", HARNESS,
                           *BUILDS[build], "--time", str(int(seconds)), "--out", str(out)],
                          capture_output=True, text=True, timeout=seconds + 600, cwd=ROOT)
    if not (out / "report.json").exists():
        raise SystemExit(f"bench_sanitizer: the {build} campaign wrote no report: "
                         f"{done.stderr.strip().splitlines()[-1:]}")
    series = json.loads((out / "report.json").read_text())["series"]
    rates = [v for _, v in series["exec_per_sec"]][1:-1]
    execs = series["execs"]
    return sum(rates) / len(rates) if rates else execs[-1][1] / max(1e-9, execs[-1][0])


def rates(seconds: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-sanitizer-") as tmp:
        # the asan build (made on first use) before the clock starts: one short campaign
        campaign_rate("asan", 1, Path(tmp))
        return {build: campaign_rate(build, seconds, Path(tmp)) for build in BUILDS}


def measure() -> list[Row]:
    r = rates(float(os.environ.get("BENCH_FUZZ_SECONDS", budget("10", "1"))))
    group = f"fuzz {HARNESS} -j 1"
    return [Row(group, "campaign, cov build", r["cov"], "exec/s"),
            Row(group, "campaign, --sanitizer address (ASan+UBSan)", r["asan"], "exec/s",
                baseline="campaign, cov build")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    r = rates(parser.parse_args().seconds)
    print(f"{HARNESS} -j 1: cov {r['cov']:,.0f} exec/s, --sanitizer address {r['asan']:,.0f} "
          f"exec/s, {r['asan'] / max(1.0, r['cov']):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
