#!/usr/bin/env python3
"""Time and executions to the first finding of each planted bug, over several libFuzzer seeds:
the figures behind the campaign caps of tests/quality/test_planted.py and docs/fuzzing.md.

    .venv/bin/python tools/planted_times.py [--bugs a,b] [--seeds 1-8] [--no-seeds]
                                            [--runs-cap N] [-p 2] [--json FILE]

Each (bug, seed) is one `walkfuzz fuzz -j 1 --runs N -- -seed=S` campaign run until it finds
the bug (walkfuzz.targets.minivm.planted_campaign), `-p` of them at a time. Campaigns start from the
shipped seeds for bugs whose `seeded` is set (none of those seeds triggers them), else from none;
`--no-seeds` starts every one from none. Run it on the machine as it is: the load at the start and
the end is printed with the table. """

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from walkfuzz.targets.minivm import planted
from walkfuzz.targets.minivm.planted_campaign import Hunt, hunt_bug


def seed_list(text: str) -> list[int]:
    if "-" in text:
        first, last = text.split("-", 1)
        return list(range(int(first), int(last) + 1))
    return [int(s) for s in text.split(",")]


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{min(values):g} / {statistics.median(values):g} / {max(values):g}"


def table(hunts: list[Hunt]) -> list[str]:
    lines = [f"{'bug':<24} {'flavour':<6} {'seeds':<8} {'found':>6}  "
             f"{'seconds min/median/max':<26} {'executions min/median/max':<30} set aside"]
    for name in dict.fromkeys(h.bug for h in hunts):
        mine = [h for h in hunts if h.bug == name]
        found = [h for h in mine if h.found is not None]
        seconds = [round(h.seconds, 1) for h in found if h.seconds is not None]
        execs = [float(h.execs) for h in found if h.execs is not None]
        ignored = sum(len(h.ignored) for h in mine)
        lines.append(f"{name:<24} {mine[0].flavour:<6} {mine[0].seeds:<8} "
                     f"{len(found):>2} of {len(mine):<2} {spread(seconds):<26} "
                     f"{spread(execs):<30} {ignored} hangs")
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bugs", default=",".join(b.name for b in planted.PLANTED_BUGS))
    parser.add_argument("--seeds", type=seed_list, default=seed_list("1-8"))
    parser.add_argument("--no-seeds", action="store_true")
    parser.add_argument("--flavour", choices=("cov", "plain"), default="cov")
    parser.add_argument("--runs-cap", type=int, default=20_000_000)
    parser.add_argument("-p", "--parallel", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    bugs = [planted.planted_bug(name) for name in args.bugs.split(",")]
    for bug in bugs:
        planted.build(bug, args.flavour)
        planted.build(bug, "plain")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="planted-times-") as tmp:
        def one(job: tuple[planted.PlantedBug, int]) -> Hunt:
            bug, seed = job
            hunt = hunt_bug(bug, Path(tmp) / f"{bug.name}-{seed}", args.runs_cap,
                            flavour=args.flavour, seeds=bug.seeded and not args.no_seeds,
                            libfuzzer_seed=seed)
            print(json.dumps(hunt.row()), file=sys.stderr, flush=True)
            return hunt

        with ThreadPoolExecutor(args.parallel) as pool:
            hunts = list(pool.map(one, [(b, s) for b in bugs for s in args.seeds]))
    load_after = os.getloadavg()
    print("\n".join(table(hunts)))
    print(f"load average (1, 5, 15 min): {load_before} at the start, {load_after} at the end; "
          f"{args.parallel} campaigns at a time, -j 1 each, cap {args.runs_cap} runs")
    if args.json:
        args.json.write_text(json.dumps({"command": ["tools/planted_times.py", *argv],
                                         "load_before": load_before, "load_after": load_after,
                                         "hunts": [h.row() for h in hunts]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
