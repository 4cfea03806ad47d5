"""`walkfuzz regress --baseline FILE [DIR...]`: fail a CI job on a signature not in the baseline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from walkfuzz.commands.triage import add_input_arguments, checked, print_error, replay_progress
from walkfuzz.core.errors import UserError
from walkfuzz.core.exit_status import INTERRUPTED, judged
from walkfuzz.core.paths import output_file
from walkfuzz.engine.progress import Progress
from walkfuzz.targets.table import CORPORA_DIR
from walkfuzz.triage import regress
from walkfuzz.triage.driver import table, triage
from walkfuzz.triage.junit import write_junit

REGRESSIONS = "regressions"


# What --help shows under "examples" (walkfuzz.commands._help).
EXAMPLES = (
    ("walkfuzz regress --baseline ci/baseline.json --junit regress.xml",
     "replay every corpora/*/regressions/ input; exit 1 on a signature not in the baseline"),
    ("walkfuzz regress reports/fuzz-layouts --baseline b.json --update-baseline",
     "accept what a campaign found into the baseline"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "regress", help="CI gate: fail on a finding signature not in a baseline",
        description="Replay inputs (default: every corpora/<harness>/regressions/), and exit 1 "
        "if one reproduces a signature the baseline does not list, or cannot be replayed. "
        "Writes JUnit XML with one test case per input checked.")
    add_input_arguments(p, required=False)
    p.add_argument("--baseline", type=Path, required=True, metavar="FILE",
                   help="JSON file of known signatures")
    p.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML here")
    p.add_argument("--update-baseline", action="store_true",
                   help="add the signatures seen to the baseline (creating it) and pass")
    p.add_argument("--prune", action="store_true",
                   help="with --update-baseline: drop baseline signatures nothing reproduced")
    p.set_defaults(func=run)


def default_paths() -> list[Path]:
    return sorted(p for p in CORPORA_DIR.glob(f"*/{REGRESSIONS}") if p.is_dir())


def run(args: argparse.Namespace) -> int:
    if args.prune and not args.update_baseline:
        raise UserError("--prune only applies with --update-baseline")
    defaults, hang_ns = checked(args)
    if args.junit is not None:
        output_file(args.junit, "--junit")
    baseline = ({} if args.update_baseline and not args.baseline.exists()
                else regress.load_baseline(args.baseline))
    paths = args.paths or default_paths()
    if not paths:
        raise UserError(f"no {CORPORA_DIR}/*/{REGRESSIONS}/ folder to check; name the inputs")
    specs, clean_runs = regress.inputs(paths)
    with Progress() as progress:
        outcome = triage(specs, defaults, args.runs, args.jobs, hang_ns, on_error=print_error,
                         on_status=replay_progress(progress, len(specs)))
    verdict = regress.judge(outcome, baseline)
    print(table(outcome))
    if args.junit:
        write_junit(args.junit, regress.SUITE, regress.test_cases(outcome, verdict, clean_runs),
                    outcome.seconds)
    if outcome.interrupted:  # a partial replay says nothing of the signatures it did not reach
        print(f"interrupted: {outcome.inputs} of {len(specs)} inputs replayed; no verdict, "
              "the baseline is left as it was", file=sys.stderr)
        return INTERRUPTED
    if args.update_baseline:
        regress.write_baseline(args.baseline, regress.updated(baseline, verdict, args.prune))
        print(f"baseline {args.baseline}: {len(verdict.new)} signatures added"
              + (f", {len(verdict.missing)} pruned" if args.prune else ""))
        return 0
    for signature, member in sorted(verdict.new.items()):
        print(f"NEW {signature}: {member.kind} ({member.klass}) at {member.location}; "
              f"input {member.path}", file=sys.stderr)
    failed = verdict.failed or bool(outcome.errors)
    print(f"regress: {len(verdict.new)} new, {len(verdict.known)} known, "
          f"{len(verdict.missing)} baseline signatures not seen, {len(outcome.errors)} inputs "
          f"could not run: {'FAIL' if failed else 'pass'}")
    return judged(failed)
