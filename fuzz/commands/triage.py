"""`walkfuzz triage DIR...`: replay findings, group them by cause, classify, print a table.

Exit status (walkfuzz.core.exit_status): 0 no findings (a clean run's output folder included),
1 findings, 2 bad input (no inputs in a folder that is no run's, none that could be replayed),
130 interrupted (what was replayed is printed and written)."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from walkfuzz.commands._flags import add_harness, add_json, add_target, add_walker
from walkfuzz.core.duration import Nanoseconds
from walkfuzz.core.errors import UserError
from walkfuzz.core.exit_status import BAD_INPUT, CLEAN, FINDINGS, INTERRUPTED
from walkfuzz.core.paths import input_file, output_file
from walkfuzz.engine.progress import Progress
from walkfuzz.findings.store import write_atomic
from walkfuzz.targets.minivm.walker_library import check_walker_library
from walkfuzz.targets.protocol import DEFAULT_HANG_NS
from walkfuzz.triage.driver import (
    DEFAULT_RUNS,
    FileError,
    Outcome,
    notes,
    outcome_json,
    table,
    triage,
)
from walkfuzz.triage.inputs import Defaults, InputSpec, find_inputs, is_output_dir

# What --help shows under "examples" (walkfuzz.commands._help).
EXAMPLES = (
    ("walkfuzz triage reports/fuzz-layouts",
     "replay a campaign's findings, group them by cause, one reproducer per group"),
    ("walkfuzz triage crashes/ --harness layouts --walker my.so --sarif t.sarif",
     "every file of a folder, whatever its name, as inputs of the layouts harness"),
    ("walkfuzz triage reports/stress-signal --hang 250ms --json groups.json",
     "a stress run's findings, a walk over 250 ms counting as a hang"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "triage", help="group findings by cause, classify them, one reproducer per group",
        description="Replay every input under the guard, compute its signature and class, "
        "group exact matches and cluster near-duplicates (docs/triage.md). Accepts walkfuzz "
        "output directories, directories of libFuzzer crash-* files, and single files.")
    add_input_arguments(p)
    add_json(p, "the groups", to_file=True)
    p.add_argument("--sarif", type=Path, metavar="FILE", help="write a SARIF 2.1.0 log")
    p.set_defaults(func=run)


def add_input_arguments(p: argparse.ArgumentParser, required: bool = True) -> None:
    """Arguments shared with `walkfuzz regress`."""
    p.add_argument("paths", type=Path, nargs="+" if required else "*", metavar="DIR|FILE")
    add_target(p, of="inputs without a description (default minivm)", default=None)
    add_harness(p, "of inputs without a description (a case file needs none: it is the bytes "
                "harness's input)")
    add_walker(p, "to replay every input on")
    p.add_argument("--runs", type=int, default=DEFAULT_RUNS,
                   help=f"replays per input, for reliability (default {DEFAULT_RUNS})")
    p.add_argument("-j", "--jobs", type=int, default=2, help="replay processes (default 2)")
    # --hang-ms, its older name, stays: a duration flag's name says no unit (--hang 1s)
    p.add_argument("--hang", "--hang-ms", dest="hang_ns", type=Nanoseconds("ms"),
                   default=DEFAULT_HANG_NS, metavar="T", help="a walk longer than this is a "
                   f"hang (default {DEFAULT_HANG_NS / 1e6:g}ms; a bare number is milliseconds)")


def checked(args: argparse.Namespace) -> tuple[Defaults, int]:
    """The defaults of the shared arguments and the hang budget in ns; UserError if bad."""
    if args.runs < 1:
        raise UserError(f"--runs {args.runs} is not positive")
    if args.jobs < 1:
        raise UserError(f"--jobs {args.jobs} is not positive")
    return Defaults(args.target, args.harness, walker_path(args.walker)), int(args.hang_ns)


def walker_path(walker: str | None) -> str | None:
    """--walker as an absolute path (None: each input's own walker), checked once up front
    the way --walker loads it (WalkerLibraryError naming what is wrong). Shared with
    `walkfuzz minimize`."""
    return str(check_walker_library(walker)) if walker else None


def replay_progress(progress: Progress, total: int) -> Callable[[dict[str, Any]], None]:
    """The progress line of replaying `total` inputs, fed one status report per input (from
    the threads that read the replay processes). Shared with `walkfuzz regress`."""
    lock, started = threading.Lock(), time.monotonic()
    done = {"inputs": 0, "findings": 0, "errors": 0}

    def show(status: dict[str, Any]) -> None:
        with lock:
            done["inputs"] += 1
            done["findings"] += bool(status.get("finding"))
            done["errors"] += bool(status.get("error"))
            progress.update(time.monotonic() - started,
                            f"replayed {done['inputs']}/{total} inputs  findings "
                            f"{done['findings']}  could not run {done['errors']}")
    return show


def print_error(error: FileError) -> None:
    print(f"walkfuzz triage: {error.message}", file=sys.stderr)


def inputs_of(paths: list[Path]) -> list[InputSpec]:
    """Every input the paths name, saying which files of their folders it skipped. None is an
    error, unless each path is a walkfuzz output folder: a clean run's folder is a clean
    triage."""
    for argument in paths:
        if argument.exists() and not argument.is_dir():  # a device or FIFO: refused unopened
            input_file(argument)
    found = find_inputs(paths)
    for path, why in found.skipped:
        print(f"walkfuzz triage: skipped {path}: {why}, not an input", file=sys.stderr)
    specs = found.inputs
    if not specs and not all(is_output_dir(p) for p in paths):
        raise UserError(f"no inputs in {', '.join(map(str, paths))} (neither a walkfuzz output "
                        "folder nor a folder of inputs)")
    return specs


def status_of(outcome: Outcome) -> int:
    """Interrupted, findings, only inputs that could not run (bad input), or clean."""
    if outcome.interrupted:
        return INTERRUPTED
    if outcome.clusters:
        return FINDINGS
    return BAD_INPUT if outcome.errors and not outcome.clean else CLEAN


def run(args: argparse.Namespace) -> int:
    defaults, hang_ns = checked(args)
    for path, flag in ((args.json, "--json"), (args.sarif, "--sarif")):
        if path is not None:
            output_file(path, flag)
    specs = inputs_of(args.paths)
    with Progress() as progress:
        outcome = triage(specs, defaults, args.runs, args.jobs, hang_ns, on_error=print_error,
                         on_status=replay_progress(progress, len(specs)))
    print(table(outcome))
    for line in notes(outcome):
        print(f"note: {line}", file=sys.stderr)
    for path, stored, replayed in outcome.mismatched:
        print(f"note: {path}: stored signature {stored}, replayed as {replayed}", file=sys.stderr)
    if args.json:
        doc = outcome_json(outcome, sys.argv)
        write_atomic(args.json, json.dumps(doc, indent=1).encode())
    if args.sarif:
        from walkfuzz.triage.sarif import to_sarif

        write_atomic(args.sarif, json.dumps(to_sarif(outcome), indent=1).encode())
    if outcome.interrupted:
        print(f"interrupted: {outcome.inputs} of {len(specs)} inputs replayed", file=sys.stderr)
    return status_of(outcome)
