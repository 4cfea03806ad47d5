#!/usr/bin/env python3
"""`make bench`: run every benchmark in bench/ once and print the figures side by side.

A benchmark is a module `bench/bench_<area>.py`. The preferred kind defines

    def measure() -> list[Row]

and its rows join one table, each shown with its ratio to (and difference from) the row it
names as `baseline` in the same group. A module without `measure()` is a script: it is run as
`python bench/bench_<area>.py` and its own output is printed under its name.

    bench/runner.py [NAME ...]      only the named benchmarks (e.g. `guard`, `fuzz`)
    bench/runner.py --results DIR   also record the run in DIR (bench/record.py): `make bench`
                                    keeps it in bench/results/, where the docs quote it from
    bench/runner.py --quick         every benchmark's smallest case, in seconds (QUICK_ENV=1):
                                    whether each still runs, not what it measures

A benchmark that fails (it does not import, its measure() raises, or its script exits non-zero)
is reported as failed with a one-line reason, at the end of the run and in the results file; the
others' rows are printed and recorded all the same, and the run exits 1.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import record

BENCH_DIR = Path(__file__).resolve().parent
# Set to 1, every benchmark runs its smallest case (tests/unit/test_bench_modules.py, --quick):
# an environment variable, so that script benchmarks, run as processes, see it too.
QUICK_ENV = "WALKFUZZ_BENCH_QUICK"
T = TypeVar("T")


def quick() -> bool:
    return os.environ.get(QUICK_ENV) == "1"


def budget(full: T, tiny: T) -> T:
    """`full`, or `tiny` in a quick run."""
    return tiny if quick() else full


@dataclass(frozen=True)
class Row:
    """One figure: `value` `unit` for `case` of `group`."""

    group: str
    case: str
    value: float
    unit: str
    baseline: str | None = None   # a case of the same group to compare with
    target: str = ""              # what the issue asks for, shown beside the figure
    goal: Goal | None = None      # the target in a form the runner checks: met or MISSED


@dataclass(frozen=True)
class Goal:
    """A checkable target: the row's ratio to its baseline (`on="ratio"`) or its value
    (`on="value"`) is at least `at_least` and at most `at_most`."""

    at_least: float | None = None
    at_most: float | None = None
    on: str = "ratio"

    def met(self, value: float, ratio: float | None) -> bool:
        x = ratio if self.on == "ratio" else value
        if x is None:
            raise ValueError(f"goal on the ratio of a row without a baseline: {self}")
        return ((self.at_least is None or x >= self.at_least)
                and (self.at_most is None or x <= self.at_most))


def discover(names: Sequence[str]) -> list[Path]:
    found = sorted(BENCH_DIR.glob("bench_*.py"))
    if names:
        found = [p for p in found if p.stem.removeprefix("bench_") in names]
        missing = set(names) - {p.stem.removeprefix("bench_") for p in found}
        if missing:
            raise SystemExit(f"bench: no benchmark named {sorted(missing)} in {BENCH_DIR}")
    return found


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, f"cannot load {path}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ratio_of(row: Row, by_case: dict[tuple[str, str], Row]) -> float | None:
    if row.baseline is None:
        return None
    base = by_case[(row.group, row.baseline)].value
    return row.value / base if base else None


def verdict(row: Row, by_case: dict[tuple[str, str], Row]) -> str | None:
    """"met" or "MISSED" for a row with a goal, else None."""
    if row.goal is None:
        return None
    ratio = ratio_of(row, by_case)
    if row.goal.on == "ratio" and row.baseline is not None and ratio is None:
        return "MISSED"  # its baseline measured 0 (nothing delivered): no share of it is met
    return "met" if row.goal.met(row.value, ratio) else "MISSED"


def format_row(row: Row, by_case: dict[tuple[str, str], Row]) -> str:
    compared = ""
    ratio = ratio_of(row, by_case)
    if row.baseline is not None:
        base = by_case[(row.group, row.baseline)]
        shown = f"{ratio:7.2f}x" if ratio is not None else "      -"
        compared = f"{shown}  {row.value - base.value:+10.1f} {row.unit}"
    checked = verdict(row, by_case)
    target = f"{row.target}  [{checked}]" if checked else row.target
    return (f"  {row.group:<10} {row.case:<34} {row.value:>10.1f} {row.unit:<10} "
            f"{compared:<30} {target}")


def print_table(rows: list[Row]) -> None:
    by_case = {(r.group, r.case): r for r in rows}
    print(f"  {'group':<10} {'case':<34} {'value':>10} {'unit':<10} "
          f"{'vs baseline (ratio, diff)':<30} target")
    for row in rows:
        print(format_row(row, by_case))


def row_record(row: Row, by_case: dict[tuple[str, str], Row]) -> dict[str, Any]:
    """A row as the results file keeps it, with its ratio to its baseline."""
    return {**asdict(row), "ratio": ratio_of(row, by_case), "verdict": verdict(row, by_case)}


def one_line(error: BaseException) -> str:
    """An exception as the one line a failed benchmark is reported with."""
    if isinstance(error, SystemExit) and not isinstance(error.code, int | None):
        text = str(error.code)  # raise SystemExit("message"): the message is the reason
    else:
        text = f"{type(error).__name__}: {error}"
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__


def run_measure(path: Path, measure: Callable[[], list[Row]]) -> tuple[list[Row], str | None]:
    """A benchmark's rows, or none and the one-line reason it failed (the traceback printed):
    one broken benchmark must not cost the rows of every other."""
    try:
        return measure(), None
    except (Exception, SystemExit) as error:  # any failure is reported, not fatal
        return [], failure(path, error)


def failure(path: Path, error: BaseException) -> str:
    """Print a failed benchmark's traceback and its one-line reason; the reason."""
    traceback.print_exc()
    reason = one_line(error)
    print(f"bench: {path.name} FAILED: {reason}", file=sys.stderr, flush=True)
    return reason


def script_failure(script: record.ScriptOutput) -> str:
    """A failed script's one-line reason: its last line of output (a traceback's last line
    names the error), with its exit status."""
    last = next((line.strip() for line in reversed(script.output) if line.strip()), "")
    return f"exit {script.returncode}" + (f": {last}" if last else "")


def run_script(path: Path) -> record.ScriptOutput:
    """Run a script benchmark, printing its output as it comes and keeping it."""
    print(f"\n== {path.name} (its own output) ==", flush=True)
    output = []
    with subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            print(line, end="", flush=True)
            output.append(line.rstrip("\n"))
    return record.ScriptOutput(path.stem, proc.returncode, output)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/runner.py", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--results", type=Path, metavar="DIR",
                        help="write the run's results file (.json and .md) into DIR")
    parser.add_argument("--quick", action="store_true",
                        help="every benchmark's smallest case: does each still run")
    args = parser.parse_args(argv)
    if args.quick and args.results is not None:
        parser.error("--quick figures measure nothing worth keeping: no --results with it")
    if args.quick:
        os.environ[QUICK_ENV] = "1"
    run = record.BenchRun(command=["bench/runner.py", *argv],
                          started=datetime.datetime.now().astimezone(),
                          load_before=os.getloadavg())
    rows: list[Row] = []
    scripts: list[Path] = []
    for path in discover(args.names):
        try:
            module = load(path)
        except (Exception, SystemExit) as error:  # a benchmark that does not even import
            run.failed[path.stem] = failure(path, error)
            continue
        measure: Callable[[], list[Row]] | None = getattr(module, "measure", None)
        if measure is None:
            scripts.append(path)
            continue
        started = time.monotonic()
        measured, reason = run_measure(path, measure)
        rows.extend(measured)
        run.seconds[path.stem] = round(time.monotonic() - started, 1)
        if reason is not None:
            run.failed[path.stem] = reason
        else:
            print(f"measured {path.name} in {run.seconds[path.stem]:.1f}s", flush=True)
    if rows:
        print()
        print_table(rows)
    by_case = {(r.group, r.case): r for r in rows}
    missed = [f"{r.group}/{r.case}" for r in rows if verdict(r, by_case) == "MISSED"]
    if missed:
        print(f"\nbench: {len(missed)} row(s) miss their target: {', '.join(missed)}")
    run.rows = [row_record(r, by_case) for r in rows]
    for path in scripts:
        started = time.monotonic()
        script = run_script(path)
        run.scripts.append(script)
        run.seconds[path.stem] = round(time.monotonic() - started, 1)
        if script.returncode != 0:
            run.failed[path.stem] = script_failure(script)
    if run.failed:
        print(f"\nbench: {len(run.failed)} benchmark(s) FAILED:", file=sys.stderr)
        for name, reason in run.failed.items():
            print(f"  {name}: {reason}", file=sys.stderr)
    if args.results is not None:
        json_path, md_path = record.write(args.results, run)
        print(f"\nbench results: {json_path} and {md_path.name}")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
