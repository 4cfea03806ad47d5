#!/usr/bin/env python3
"""`make bench`: run every benchmark in bench/ once and print the figures side by side.

A benchmark is a module `bench/bench_<area>.py`. The preferred kind defines

    def measure() -> list[Row]

and its rows join one table, each shown with its ratio to (and difference from) the row it
names as `baseline` in the same group. A module without `measure()` is a script: it is run as
`python bench/bench_<area>.py` and its own output is printed under its name.

    bench/runner.py [NAME ...]      only the named benchmarks (e.g. `guard`, `fuzz`)
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

BENCH_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Row:
    """One figure: `value` `unit` for `case` of `group`."""

    group: str
    case: str
    value: float
    unit: str
    baseline: str | None = None   # a case of the same group to compare with
    target: str = ""              # what the issue asks for, shown beside the figure


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


def format_row(row: Row, by_case: dict[tuple[str, str], Row]) -> str:
    compared = ""
    if row.baseline is not None:
        base = by_case[(row.group, row.baseline)]
        compared = f"{row.value / base.value:7.2f}x  {row.value - base.value:+10.1f} {row.unit}"
    return (f"  {row.group:<10} {row.case:<34} {row.value:>10.1f} {row.unit:<10} "
            f"{compared:<30} {row.target}")


def print_table(rows: list[Row]) -> None:
    by_case = {(r.group, r.case): r for r in rows}
    print(f"  {'group':<10} {'case':<34} {'value':>10} {'unit':<10} "
          f"{'vs baseline (ratio, diff)':<30} target")
    for row in rows:
        print(format_row(row, by_case))


def run_script(path: Path) -> int:
    print(f"\n== {path.name} (its own output) ==", flush=True)
    return subprocess.run([sys.executable, str(path)], check=False).returncode


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/runner.py", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    scripts: list[Path] = []
    for path in discover(args.names):
        module = load(path)
        measure: Callable[[], list[Row]] | None = getattr(module, "measure", None)
        if measure is None:
            scripts.append(path)
            continue
        started = time.monotonic()
        rows.extend(measure())
        print(f"measured {path.name} in {time.monotonic() - started:.1f}s", flush=True)
    if rows:
        print()
        print_table(rows)
    failures = [p.name for p in scripts if run_script(p) != 0]
    if failures:
        print(f"bench: failed: {', '.join(failures)}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
