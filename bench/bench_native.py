#!/usr/bin/env python3
"""Benchmark of the native unwinders side by side (`make bench`, `make bench-native`): one
differential run (walkfuzz.targets.native.differential.run) of the generator stream over every
unwinder built here, so every unwinder walks the very same inputs, and its figures per unwinder and
perturbation class: faults, cycles, hangs and wrong walks per million walks, ns per step; then
the finding groups (kind, unwinder, location: library, symbol and source line where the
library has debug info).

    bench/bench_native.py [--inputs 50000] [--seed 1] [--unwinders all] [--write DOC]

ns/walk is the guarded walk's time (the unwinder's init, its steps, the guard) per walk, ns/step
the same per step (a frame passed to the recorder, or an unw_step call); both are wall time on
a shared machine: noisy, compare them side by side within one run.

`wrong` is the differential oracle's verdict (walkfuzz.targets.native.differential.judge): on an
unperturbed input, a walk that is not the known chain (fp: one whose frames are not a
subsequence of it); on a perturbed one, being the odd one out among the unwinders. A class
counts an input in every perturbation kind it applies, so the class rows of one unwinder add
up to more walks than it made. Rates are per million walks of the run, scaled from --inputs.
With --write the tables replace the part of DOC between the BEGIN and END markers.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

from runner import budget

import walkfuzz
from walkfuzz.core.symbolize import locate_in_object
from walkfuzz.findings.hits import load_hits
from walkfuzz.targets.native.differential.report import ns_per_step, per_million
from walkfuzz.targets.native.differential.run import DiffResult, run_differential
from walkfuzz.targets.native.extension import available
from walkfuzz.targets.native.unwinders import names

# Where the libraries a fault names are: the system's, LLVM's libunwind, walkfuzz's extensions.
LIBRARY_DIRS = (Path("/lib/x86_64-linux-gnu"), Path("/usr/lib/llvm-14/lib"),
                Path(walkfuzz.__file__).parent)
BEGIN = "<!-- bench_native: begin -->"
END = "<!-- bench_native: end -->"
COLUMNS = ("walks", "faults/M", "cycles/M", "hangs/M", "wrong/M", "ns/walk", "ns/step")


def _row(c: dict[str, int]) -> list[str]:
    walks = c.get("walks", 0)
    return [str(walks), *(f"{per_million(c.get(k, 0), walks):g}"
                          for k in ("faults", "cycles", "hangs", "wrong")),
            f"{c.get('walk_ns', 0) / walks:.0f}" if walks else "-",
            f"{ns_per_step(c):.0f}" if c.get("steps") else "-"]


def tables(result: DiffResult, seed: int, hits: dict[str, int]) -> str:
    """The figures as Markdown; `hits`: every signature's hits in the run."""
    lines = [f"Measured {time.strftime('%Y-%m-%d')} on this machine (2 shared cores): "
             f"{result.inputs} inputs of generator stream {seed} ({result.unperturbed} "
             f"unperturbed), each walked by every unwinder, {result.seconds:.0f} s; rates "
             f"scaled to one million walks.", "",
             "| unwinder | " + " | ".join(COLUMNS) + " |",
             "|---|" + "---:|" * len(COLUMNS)]
    for unwinder, by_class in result.per_unwinder.items():
        lines.append(f"| {unwinder} | " + " | ".join(_row(by_class.get("all", {}))) + " |")
    classes = sorted({c for by in result.per_unwinder.values() for c in by} - {"all"})
    lines += ["", "Per perturbation class (an input counts in every kind it applies):", "",
              "| class | unwinder | " + " | ".join(COLUMNS) + " |",
              "|---|---|" + "---:|" * len(COLUMNS)]
    for cls in classes:
        for unwinder, by_class in result.per_unwinder.items():
            if cls in by_class:
                lines.append(f"| {cls} | {unwinder} | " + " | ".join(_row(by_class[cls])) + " |")
    lines += ["", "Finding groups (the shapes of one location summed):", "",
              "| kind | unwinder | location | where | hits |", "|---|---|---|---|---:|"]
    summed: dict[tuple[str, str, str], int] = {}
    for signature, f in {f.signature: f for f in result.findings}.items():
        who = f.details.get("faulted") or ",".join(map(str, f.details.get("odd") or ()))
        key = (f.kind, str(who), f.location)
        summed[key] = summed.get(key, 0) + hits.get(signature, 1)
    for (kind, who, location), count in sorted(summed.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {kind} | {who} | `{location}` | {where(location)} | {count} |")
    return "\n".join(lines) + "\n"


def where(location: str) -> str:
    """A fault's `library+0xOFFSET` named by the library's symbols: function@file:LINE where it
    has debug info (walkfuzz's own extensions), else the symbol holding it and the offset."""
    # an unwinder's findings but libunwind's carry its name first: `llvm:libunwind.so.1+0x3c5e`
    library, plus, offset = location.split(":", 1)[-1].partition("+0x")
    path = next((d / library for d in LIBRARY_DIRS if (d / library).is_file()), None)
    if not plus or path is None:
        return ""
    return locate_in_object(path, int(offset, 16)).location


def write_into(doc: Path, text: str) -> None:
    content = doc.read_text()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(content):
        raise SystemExit(f"bench_native: {doc} has no {BEGIN} ... {END} markers")
    doc.write_text(pattern.sub(lambda _: f"{BEGIN}\n{text}{END}", content))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/bench_native.py")
    parser.add_argument("--inputs", type=int, default=budget(50_000, 200))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--unwinders", default="all")
    parser.add_argument("--write", type=Path, help="the doc whose marked part gets the tables")
    args = parser.parse_args(argv)
    chosen = list(available()) if args.unwinders == "all" else args.unwinders.split(",")
    with tempfile.TemporaryDirectory(prefix="bench-native-") as out:
        result = run_differential(Path(out), chosen, names(), seconds=1e9, runs=args.inputs,
                                  seed=args.seed, budget_ms=500.0)
        hits = {s: h.count for s, h in load_hits(Path(out)).items()}
    text = tables(result, args.seed, hits)
    print(text)
    if args.write is not None:
        write_into(args.write, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
