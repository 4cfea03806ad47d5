"""`walkfuzz minimize FILE`: shrink a reproducer while its finding signature stays the same."""

from __future__ import annotations

import argparse
from pathlib import Path

from walkfuzz.commands._flags import add_harness, add_walker
from walkfuzz.commands.triage import walker_path
from walkfuzz.core.duration import Seconds
from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import output_file, read_input
from walkfuzz.findings.store import write_atomic
from walkfuzz.targets.protocol import MINIMIZE_BUDGET_S, ReplayError
from walkfuzz.targets.table import TARGETS, lookup
from walkfuzz.triage.inputs import Defaults, discover, resolve

SUFFIX = ".min"


# What --help shows under "examples" (walkfuzz.commands._help).
EXAMPLES = (
    ("walkfuzz minimize reports/fuzz-bytes/crash-0123abcd",
     "shrink one finding's input to FILE.min, keeping its signature"),
    ("walkfuzz minimize input.bin --harness layouts --walker my.so --budget 30s -o small.case",
     "shrink a generator harness's input, for at most 30 s"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "minimize", help="shrink a reproducer, keeping its finding signature",
        description="Structure-aware shrinking of the case (frames, blobs, methods, names, "
        "stack words, registers, queue operations), then delta debugging on its bytes. The "
        "result is a case file (replay it with `walkfuzz replay`), or, when no case got below "
        "the input's size, the input's own bytes shrunk: never larger than the input.")
    p.add_argument("file", type=Path, metavar="FILE", help="a finding input, crash file or case")
    p.add_argument("-o", "--output", type=Path, help=f"output file (default FILE{SUFFIX})")
    add_harness(p, "of an input without a description (a case file needs none)")
    add_walker(p, "to replay on (default: the one in the finding's description, else the "
               "reference walker)")
    p.add_argument("--budget", type=Seconds("s"), default=MINIMIZE_BUDGET_S, metavar="T",
                   help="time budget (default %(default)gs; a bare number is seconds)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.file.is_file():
        raise UserError(f"{str(args.file)!r} is not a file")
    defaults = Defaults(None, args.harness, walker_path(args.walker))
    spec = resolve(discover([args.file])[0], defaults)
    if spec.error:
        raise ReplayError(spec.error)
    target = lookup(str(spec.target))
    minimize = target.minimize()
    if minimize is None:
        if target.not_minimized:
            raise UserError(f"{args.file}: {target.not_minimized}")
        which = ", ".join(t.name for t in TARGETS if t.minimizer)
        raise UserError(f"{args.file}: minimize works on {which} cases, not {spec.target!r} "
                        "inputs")
    out = output_file(args.output or args.file.with_name(args.file.name + SUFFIX), "--output")
    data = read_input(args.file)
    harness = spec.harness or target.part("inputs").sniff_harness(data, str(args.file))
    result = minimize(data, harness, spec.walker or "reference", args.budget,
                      source=str(args.file))
    write_atomic(out, result.data)
    print(f"{out}: {len(result.data)} bytes (input {result.original_size} bytes, as a case "
          f"{result.materialized_size}), signature {result.signature} kept; harness "
          f"{result.harness}; {result.tests} replays in {result.seconds:.2f} s; passes: "
          f"{', '.join(result.passes) or 'none'}")
    return 0
