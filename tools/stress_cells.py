#!/usr/bin/env python3
"""Invalid traces per walks in every live-stress cell of a walker: the longer runs behind the
"0 invalid traces" statement of docs/stress.md (the tests run 5 000 walks a cell).

    .venv/bin/python tools/stress_cells.py [--seconds 5] [--load N] [--walker PATH.so]
                                           [--workloads mixed,deep,native,calls] [--json FILE]

Each mode (signal, thread, queue) x interval (100 us, 10 us) x workload is one run of the
same child `walkfuzz stress --mode M --interval I --workload W --threads 2 --duration S
--baseline 0` runs, with `--load N` CPU hogs alongside the whole matrix. It prints one line per
cell (walks, faults, invalid traces by class) and the totals; the exit status is 1 when any
cell has an invalid trace or a fault.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from walkfuzz.engine.load import cpu_load
from walkfuzz.targets.minivm.live.options import MODES, WORKLOADS, StressOptions
from walkfuzz.targets.minivm.live.runner import run_minivm_stress

INTERVALS_US = (100, 10)


def run_cell(mode: str, interval_us: int, workload: str, seconds: float,
             walker: str | None) -> dict[str, Any]:
    options = StressOptions(mode=mode, interval_ns=interval_us * 1000, threads=2,
                            duration_ns=int(seconds * 1e9), baseline_ns=0, workload=workload,
                            walker=walker)
    total = run_minivm_stress(options)["total"]
    classes = {k: v for k, v in total["invalid_by_class"].items() if v}
    return {"mode": mode, "interval_us": interval_us, "workload": workload,
            "walked": total["walked"], "faults": total["faults"], "invalid": total["invalid"],
            "invalid_by_class": classes}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tools/stress_cells.py", description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0, help="sampled seconds a cell")
    parser.add_argument("--load", type=int, default=0, help="CPU-hog processes alongside")
    parser.add_argument("--walker", help="a walker library (default: the reference walker)")
    parser.add_argument("--workloads", default="mixed,deep,native,calls")
    parser.add_argument("--json", type=Path, help="also write the cells to this file")
    args = parser.parse_args(argv)
    workloads = args.workloads.split(",")
    unknown = sorted(set(workloads) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workload {unknown[0]!r}; one of {', '.join(WORKLOADS)}")
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{args.load} hogs", flush=True)
    cells = []
    with cpu_load(args.load):
        for mode in MODES:
            for interval_us in INTERVALS_US:
                for workload in workloads:
                    cell = run_cell(mode, interval_us, workload, args.seconds, args.walker)
                    cells.append(cell)
                    print(f"{mode:<6} {interval_us:>3} us {workload:<7} walked "
                          f"{cell['walked']:>9,} faults {cell['faults']} invalid "
                          f"{cell['invalid']} {cell['invalid_by_class'] or ''}", flush=True)
    walked = sum(c["walked"] for c in cells)
    invalid = sum(c["invalid"] for c in cells)
    faults = sum(c["faults"] for c in cells)
    print(f"total: {len(cells)} cells, {walked:,} walks, {faults} faults, {invalid} invalid; "
          f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json is not None:
        args.json.write_text(json.dumps(cells, indent=1) + "\n")
    return 1 if invalid or faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
