#!/usr/bin/env python3
"""Benchmark of fuzz campaigns (`make bench`): inputs per CPU-second of each minivm harness
(harnesses/*.py, the process a campaign runs: atheris's libFuzzer calling the core's C fuzz
loop, Python only on a finding) side by side with a bare libFuzzer C harness calling the same
C function (bench/bare_libfuzzer.c: the in-process limit), their ratio (target 0.9x or
better), resident memory per worker (target under 200 MB), and a campaign's exec/s on -j 2
against -j 1 (target 1.8x).

The two harnesses of a pair run at the same time, each on its own copy of the seeds, with the
same libFuzzer seed and for the same number of inputs, once per seed of LIBFUZZER_SEEDS (in
all what the bare harness runs alone in about --seconds): they share whatever else the machine
runs and walk inputs of like sizes (a run to a time limit would take the faster one further,
to longer inputs). Their figure is inputs per CPU-second from libFuzzer's start (a Python
harness's start-up is not fuzzing): on a quiet machine, where each gets a core, that is their
exec/s; on a loaded one, wall-clock exec/s mostly measures how the scheduler shared the CPUs
(shown beside it, without a target).

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
import threading
from pathlib import Path

from runner import Goal, Row, budget

from walkfuzz.targets.minivm.harness import HARNESSES  # name -> enum wf_worker_harness

ROOT = Path(__file__).resolve().parent.parent
BARE_SOURCE = ROOT / "bench" / "bare_libfuzzer.c"
BARE_BINARY = ROOT / "build" / "bench" / "bare_libfuzzer"
_STAT = re.compile(r"^stat::(\w+):\s+(\d+)", re.M)
RATIO_GOAL = 0.9  # harness exec/s over the bare C harness's
RSS_GOAL_MB = 200
JOBS_GOAL = 1.8  # -j 2 campaign exec/s over -j 1
# libFuzzer seeds of a pair's runs, summed: the inputs a seed's path leads to cost the core
# +-10% from one seed to another, in the bare harness alone too.
LIBFUZZER_SEEDS = (1, 2, 3)
CALIBRATION_SECONDS = 2  # a bare run this long sizes the pair's -runs to about --seconds
RUN_TIMEOUT_FACTOR = 10  # a pair's run may take this many times --seconds (a loaded machine)


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


class LibFuzzerRun:
    """A libFuzzer process run for `seconds`, its stderr read as it comes, and the CPU time it
    used from libFuzzer's start (its `INFO: Seed:` line) to its end: a harness's start-up
    (Python's imports) is no part of fuzzing, and CPU time is what a loaded machine cannot
    take from a process the way it takes wall-clock time."""

    def __init__(self, argv: list[str], env: dict[str, str], seconds: float,
                 runs: int | None = None, seed: int = LIBFUZZER_SEEDS[0]) -> None:
        length = f"-runs={runs}" if runs is not None else f"-max_total_time={int(seconds)}"
        flags = [length, "-print_final_stats=1", "-max_len=4096", f"-seed={seed}"]
        self.seconds = seconds
        self.process = subprocess.Popen([*argv, *flags], env={**os.environ, **env}, text=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.lines: list[str] = []
        self.cpu_at_start: float | None = None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if self.cpu_at_start is None and line.startswith("INFO: Seed:"):
                self.cpu_at_start = cpu_seconds(self.process.pid)
            self.lines.append(line)

    def finish(self) -> dict[str, float]:
        """Inputs run, CPU seconds they took, exec/s (libFuzzer's, wall clock) and peak RSS,
        once it has ended."""
        self.reader.join(RUN_TIMEOUT_FACTOR * self.seconds + 120)
        if self.reader.is_alive():
            self.process.kill()
            raise SystemExit(f"bench_fuzz: {self.process.args[0]} did not end")
        _, status, usage = os.wait4(self.process.pid, 0)
        self.process.returncode = os.waitstatus_to_exitcode(status)
        stderr = "".join(self.lines)
        stats = {k: int(v) for k, v in _STAT.findall(stderr)}
        if "average_exec_per_sec" not in stats or self.cpu_at_start is None:
            tail = "\n".join(stderr.splitlines()[-5:])
            raise SystemExit(f"bench_fuzz: {self.process.args[0]} printed no final stats:\n{tail}")
        return {"execs": stats["number_of_executed_units"],
                "cpu": max(usage.ru_utime + usage.ru_stime - self.cpu_at_start, 1e-3),
                "exec_per_sec": stats["average_exec_per_sec"],
                "rss_mb": stats.get("peak_rss_mb", 0)}


def cpu_seconds(pid: int) -> float:
    """User and system CPU time process `pid` has used so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


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
    """The harness and the bare C harness, run at the same time for the same number of inputs
    (see the module's doc), once per seed: as many in all as the bare harness runs in about
    `seconds` alone."""
    bare_argv = [str(build_bare()), str(seed_copy(harness, work))]
    bare_env = {"WALKFUZZ_BENCH_HARNESS": str(HARNESSES[harness]),
                "WALKFUZZ_BENCH_JOURNAL": str(work / f"journal-{harness}")}
    calibration_seconds, seeds = budget((CALIBRATION_SECONDS, LIBFUZZER_SEEDS), (1, (1,)))
    calibration = LibFuzzerRun(bare_argv, bare_env, calibration_seconds).finish()
    inputs = max(budget(1000, 100), int(calibration["execs"] * seconds / calibration_seconds
                                        / len(seeds)))
    worker_env = {"WALKFUZZ_OUT": str(work / "out"), "WALKFUZZ_WORKER_DIR": str(work)}
    atheris, bare = [], []
    for seed in seeds:
        runs = [
            LibFuzzerRun([sys.executable, str(ROOT / "harnesses" / f"{harness}.py"),
                          str(seed_copy(harness, work))], worker_env, seconds, inputs, seed),
            LibFuzzerRun([bare_argv[0], str(seed_copy(harness, work))], bare_env, seconds,
                         inputs, seed),
        ]
        try:
            for run, results in zip(runs, (atheris, bare), strict=True):
                results.append(run.finish())
        finally:
            for run in runs:
                run.process.kill()
    r = {}
    for name, results in (("atheris", atheris), ("bare", bare)):
        r[f"{name}_exec_per_cpu_sec"] = (sum(x["execs"] for x in results)
                                         / sum(x["cpu"] for x in results))
        r[f"{name}_exec_per_sec"] = sum(x["exec_per_sec"] for x in results) / len(results)
        r[f"{name}_rss_mb"] = max(x["rss_mb"] for x in results)
    r["ratio"] = r["atheris_exec_per_cpu_sec"] / r["bare_exec_per_cpu_sec"]
    r["wall_ratio"] = r["atheris_exec_per_sec"] / max(1.0, r["bare_exec_per_sec"])
    return r


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
    seconds = float(os.environ.get("BENCH_FUZZ_SECONDS", budget("10", "1")))
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-fuzz-") as tmp:
        work = Path(tmp)
        for harness in budget(list(HARNESSES), ["layouts"]):
            r = bench_harness(harness, seconds, work)
            group = f"fuzz {harness}"
            rows += [
                Row(group, "bare libFuzzer C harness", r["bare_exec_per_cpu_sec"], "exec/CPU-s"),
                Row(group, "atheris harness", r["atheris_exec_per_cpu_sec"], "exec/CPU-s",
                    baseline="bare libFuzzer C harness", target=f">= {RATIO_GOAL:.2f}x",
                    goal=Goal(at_least=RATIO_GOAL)),
                Row(group, "bare C harness, wall clock", r["bare_exec_per_sec"], "exec/s"),
                Row(group, "atheris harness, wall clock", r["atheris_exec_per_sec"], "exec/s",
                    baseline="bare C harness, wall clock"),
                Row(group, "atheris worker peak RSS", r["atheris_rss_mb"], "MB",
                    target=f"< {RSS_GOAL_MB} MB", goal=Goal(at_most=RSS_GOAL_MB, on="value")),
            ]
        one, two = campaign_rate(1, seconds, work), campaign_rate(2, seconds, work)
        rows += [Row("fuzz -j", "layouts campaign -j 1", one, "exec/s"),
                 Row("fuzz -j", "layouts campaign -j 2", two, "exec/s",
                     baseline="layouts campaign -j 1", target=f">= {JOBS_GOAL:.2f}x",
                     goal=Goal(at_least=JOBS_GOAL))]
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
        print(f"{'harness':<10} {'atheris exec/CPU-s':>19} {'bare C exec/CPU-s':>18} "
              f"{'ratio':>6} {'target':>7} {'wall ratio':>10} {'RSS MB':>7}")
        for harness in harnesses:
            r = bench_harness(harness, args.seconds, work)
            print(f"{harness:<10} {r['atheris_exec_per_cpu_sec']:>19,.0f} "
                  f"{r['bare_exec_per_cpu_sec']:>18,.0f} {r['ratio']:>5.2f}x "
                  f"{f'{RATIO_GOAL:.2f}x':>7} {r['wall_ratio']:>9.2f}x "
                  f"{r['atheris_rss_mb']:>7.0f}", flush=True)
        if not args.skip_jobs:
            one, two = campaign_rate(1, args.seconds, work), campaign_rate(2, args.seconds, work)
            print(f"campaign layouts: -j 1 {one:,.0f} exec/s, -j 2 {two:,.0f} exec/s, "
                  f"{two / max(1.0, one):.2f}x (target {JOBS_GOAL:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
