#!/usr/bin/env python3
"""Benchmark of fuzz campaigns (`make bench`): exec/s of each minivm harness (atheris, one C
call per input) side by side with a bare libFuzzer C harness calling the same C function
(bench/bare_libfuzzer.c: the in-process limit), their ratio (target 0.7x or better), resident
memory per worker (target under 200 MB), and a campaign's exec/s on -j 2 against -j 1
(target 1.8x).

    bench/bench_fuzz.py [--seconds 10] [--harness layouts ...] [--skip-jobs]

Under bench/runner.py (`make bench`), `measure()` gives the same figures as table rows
(BENCH_FUZZ_SECONDS sets the time per run, default 10).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from runner import Row

from walkfuzz.targets.minivm.harness import HARNESSES  # name -> enum wf_worker_harness

ROOT = Path(__file__).resolve().parent.parent
BARE_SOURCE = ROOT / "bench" / "bare_libfuzzer.c"
BARE_BINARY = ROOT / "build" / "bench" / "bare_libfuzzer"
_STAT = re.compile(r"^stat::(\w+):\s+(\d+)", re.M)


def build_bare() -> Path:
    """Compile the bare harness with the coverage build's instrumentation (rebuilt if stale)."""
    sources = [*sorted((ROOT / "native" / "src").rglob("*.c")),
               *sorted((ROOT / "native" / "walkers" / "reference").glob("*.c")), BARE_SOURCE]
    newest = max(p.stat().st_mtime for p in [*sources, *(ROOT / "native" / "include").glob("*")])
    if BARE_BINARY.exists() and BARE_BINARY.stat().st_mtime >= newest:
        return BARE_BINARY
    BARE_BINARY.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["clang", "-O2", "-g", "-std=gnu11", "-fsanitize=fuzzer",
                    f"-I{ROOT / 'native' / 'include'}", f"-I{ROOT / 'native' / 'src'}",
                    *map(str, sources),
                    "-lrt", "-lpthread", "-ldl", "-o", str(BARE_BINARY)], check=True)
    return BARE_BINARY


def libfuzzer_stats(argv: list[str], env: dict[str, str], seconds: float) -> dict[str, int]:
    flags = [f"-max_total_time={int(seconds)}", "-print_final_stats=1", "-max_len=4096"]
    run = subprocess.run([*argv, *flags], env={**os.environ, **env}, capture_output=True,
                         text=True, timeout=seconds + 120)
    stats = {k: int(v) for k, v in _STAT.findall(run.stderr)}
    if "average_exec_per_sec" not in stats:
        tail = "\n".join(run.stderr.splitlines()[-5:])
        raise SystemExit(f"bench_fuzz: {argv[0]} printed no final stats:\n{tail}")
    return stats


def seed_copy(harness: str, work: Path) -> Path:
    """A scratch copy of the shipped seeds: libFuzzer writes into its first corpus dir."""
    corpus = work / f"corpus-{harness}-{len(list(work.iterdir()))}"
    seeds = ROOT / "corpora" / harness
    if seeds.is_dir():
        shutil.copytree(seeds, corpus, ignore=shutil.ignore_patterns("regressions"))
    else:
        corpus.mkdir()
    return corpus


def bench_harness(harness: str, seconds: float, work: Path) -> dict[str, float]:
    journal = work / f"journal-{harness}"
    worker_env = {"WALKFUZZ_OUT": str(work / "out"), "WALKFUZZ_WORKER_DIR": str(work)}
    atheris = libfuzzer_stats(
        [sys.executable, str(ROOT / "harnesses" / f"{harness}.py"), str(seed_copy(harness, work))],
        worker_env, seconds)
    bare = libfuzzer_stats(
        [str(build_bare()), str(seed_copy(harness, work))],
        {"WALKFUZZ_BENCH_HARNESS": str(HARNESSES[harness]), "WALKFUZZ_BENCH_JOURNAL": str(journal)},
        seconds)
    return {
        "atheris_exec_per_sec": atheris["average_exec_per_sec"],
        "bare_exec_per_sec": bare["average_exec_per_sec"],
        "ratio": atheris["average_exec_per_sec"] / max(1, bare["average_exec_per_sec"]),
        "atheris_rss_mb": atheris.get("peak_rss_mb", 0),
        "bare_rss_mb": bare.get("peak_rss_mb", 0),
    }


def campaign_rate(jobs: int, seconds: float, work: Path) -> float:
    """Mean exec/s of a `walkfuzz fuzz -j jobs` campaign on the layouts harness."""
    out = work / f"campaign-j{jobs}"
    subprocess.run([sys.executable, "-m", "walkfuzz.cli", "fuzz", "--harness", "layouts",
                    "--time", str(int(seconds)), "-j", str(jobs), "--out", str(out)],
                   capture_output=True, timeout=seconds + 120, cwd=ROOT)
    execs = json.loads((out / "report.json").read_text())["series"]["execs"]
    rates = [v for _, v in json.loads((out / "report.json").read_text())["series"]
             ["exec_per_sec"]][1:-1]  # drop start-up and the final sample after the stop
    return sum(rates) / len(rates) if rates else execs[-1][1] / max(1e-9, execs[-1][0])


def measure() -> list[Row]:
    seconds = float(os.environ.get("BENCH_FUZZ_SECONDS", "10"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-fuzz-") as tmp:
        work = Path(tmp)
        for harness in HARNESSES:
            r = bench_harness(harness, seconds, work)
            group = f"fuzz {harness}"
            rows += [
                Row(group, "bare libFuzzer C harness", r["bare_exec_per_sec"], "exec/s"),
                Row(group, "atheris harness", r["atheris_exec_per_sec"], "exec/s",
                    baseline="bare libFuzzer C harness", target=">= 0.70x"),
                Row(group, "atheris worker peak RSS", r["atheris_rss_mb"], "MB",
                    target="< 200 MB"),
            ]
        one, two = campaign_rate(1, seconds, work), campaign_rate(2, seconds, work)
        rows += [Row("fuzz -j", "layouts campaign -j 1", one, "exec/s"),
                 Row("fuzz -j", "layouts campaign -j 2", two, "exec/s",
                     baseline="layouts campaign -j 1", target=">= 1.80x")]
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--harness", action="append", choices=sorted(HARNESSES))
    parser.add_argument("--skip-jobs", action="store_true", help="skip the -j 2 vs -j 1 runs")
    args = parser.parse_args()
    harnesses = args.harness or list(HARNESSES)
    with tempfile.TemporaryDirectory(prefix="bench-fuzz-") as tmp:
        work = Path(tmp)
        print(f"{'harness':<10} {'atheris exec/s':>15} {'bare C exec/s':>14} {'ratio':>6} "
              f"{'target':>7} {'RSS MB':>7}")
        for harness in harnesses:
            r = bench_harness(harness, args.seconds, work)
            print(f"{harness:<10} {r['atheris_exec_per_sec']:>15,.0f} "
                  f"{r['bare_exec_per_sec']:>14,.0f} {r['ratio']:>5.2f}x {'0.70x':>7} "
                  f"{r['atheris_rss_mb']:>7.0f}")
        if not args.skip_jobs:
            one, two = campaign_rate(1, args.seconds, work), campaign_rate(2, args.seconds, work)
            print(f"campaign layouts: -j 1 {one:,.0f} exec/s, -j 2 {two:,.0f} exec/s, "
                  f"{two / max(1.0, one):.2f}x (target 1.80x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
