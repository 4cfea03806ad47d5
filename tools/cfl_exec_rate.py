#!/usr/bin/env python3
"""exec/s of a fuzzer .clusterfuzzlite/build.sh packaged (`make cfl-build`) against `walkfuzz
fuzz` on the same harness, one process each, one after the other: the figures docs/ci.md quotes.

    .venv/bin/python tools/cfl_exec_rate.py [--fuzzers build/cfl/out] [--harness layouts]
                                            [--seconds 60]

Three runs from the harness's shipped seeds: the packaged fuzzer (its wrapper, the options of
its .options file as the runner applies them; the ASan core), `walkfuzz fuzz -j 1` (the cov
core, no sanitizer) and `walkfuzz fuzz -j 1 --sanitizer address` (the sancov core: ASan, UBSan).
Run it on the machine as it is: the load at the start and the end is printed with the table.
"""

from __future__ import annotations

import argparse
import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
STAT = re.compile(r"^stat::(\w+):\s+(\d+)", re.M)


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def packaged(fuzzer: Path, corpus: Path, seconds: int) -> tuple[int, float]:
    """Inputs run and seconds, from libFuzzer's final statistics."""
    options = configparser.ConfigParser()
    options.read(fuzzer.with_name(f"{fuzzer.name}.options"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("WALKFUZZ_")}
    if options.has_section("asan"):
        env["ASAN_OPTIONS"] = ":".join(f"{k}={v}" for k, v in options.items("asan"))
    done = subprocess.run([str(fuzzer), f"-max_total_time={seconds}", "-print_final_stats=1",
                           str(corpus)], env=env, capture_output=True, text=True,
                          timeout=seconds + 300, check=False, cwd=corpus.parent)
    stats = {k: int(v) for k, v in STAT.findall(done.stdout + done.stderr)}
    if "number_of_executed_units" not in stats:
        raise SystemExit(f"{fuzzer} printed no final statistics (exit {done.returncode}):\n"
                         + "\n".join(done.stderr.splitlines()[-5:]))
    runs = stats["number_of_executed_units"]
    return runs, runs / max(stats["average_exec_per_sec"], 1)


def campaign(harness: str, seconds: int, out: Path, *extra: str) -> tuple[int, float]:
    """Inputs run and seconds of a `walkfuzz fuzz` campaign, from its stats.jsonl."""
    done = subprocess.run([str(WALKFUZZ), "fuzz", "--harness", harness, "-j", "1", "--time",
                           str(seconds), "--out", str(out), *extra], capture_output=True,
                          text=True, timeout=seconds + 600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"walkfuzz fuzz {' '.join(extra)} exited {done.returncode}: "
                         + done.stderr.strip()[-500:])
    last = json.loads((out / "stats.jsonl").read_text().splitlines()[-1])
    return int(last["execs"]), float(last["t"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzzers", type=Path, default=ROOT / "build" / "cfl" / "out")
    parser.add_argument("--harness", default="layouts")
    parser.add_argument("--seconds", type=int, default=60)
    args = parser.parse_args()
    fuzzer = args.fuzzers / args.harness
    if not fuzzer.is_file():
        raise SystemExit(f"no fuzzer {fuzzer} (run `make cfl-build` first)")
    print(f"load at start: {load()}")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        corpus = work / "corpus"
        shutil.unpack_archive(args.fuzzers / f"{args.harness}_seed_corpus.zip", corpus, "zip")
        rows.append((f"packaged fuzzer ({fuzzer.name}, ASan core)",
                     *packaged(fuzzer, corpus, args.seconds)))
        rows.append(("walkfuzz fuzz -j 1 (cov core)",
                     *campaign(args.harness, args.seconds, work / "cov")))
        rows.append(("walkfuzz fuzz -j 1 --sanitizer address (sancov core)",
                     *campaign(args.harness, args.seconds, work / "sancov", "--sanitizer",
                               "address")))
    print(f"load at end: {load()}")
    print(f"harness {args.harness}, {args.seconds} s a run, one process each")
    print(f"{'run':<56} {'inputs':>10} {'seconds':>8} {'exec/s':>8}")
    for name, runs, seconds in rows:
        print(f"{name:<56} {runs:>10} {seconds:>8.1f} {runs / seconds:>8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
