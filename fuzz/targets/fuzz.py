"""What `walkfuzz fuzz --target T` runs for the native target and its libunwind alias (named in
walkfuzz.targets.table.TARGETS; every other target's is its package's fuzz.fuzz):

    libunwind   --engine libfuzzer (default): a libFuzzer campaign on
                harnesses/libunwind_perturb.py; --engine generator: the C generator stream in
                supervised worker processes (walkfuzz.targets.native.runs), the
                benchmark's engine
    native      the C generator stream walked by --unwinder NAME's extension in supervised
                worker processes (walkfuzz.targets.native.runs); its only engine

Each takes the parsed arguments of `walkfuzz fuzz` (the flags the target does not take were
refused already) and returns the exit status: 0 no findings, 1 findings.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import output_dir
from walkfuzz.targets.campaign_run import run_campaign
from walkfuzz.targets.flags import refuse_inapplicable
from walkfuzz.targets.native.unwinders import DEFAULT as DEFAULT_UNWINDER
from walkfuzz.targets.table import CAMPAIGN_FLAGS, TARGET_FLAGS, default_out

ENGINES = ("libfuzzer", "generator")
# The libunwind generator engine's defaults (it has no corpus to resume, so a time budget).
GENERATOR_SECONDS = 60.0
GENERATOR_JOBS = 2
GENERATOR_WALK_BUDGET_MS = 500.0
GENERATOR_FLAGS = ("--engine", "--seed", "--walk-budget")
DIFFERENTIAL_FLAGS = ("--unwinder", "--runs", "--seed", "--walk-budget")


def _argv() -> list[str]:
    return ["walkfuzz", *sys.argv[1:]]


def fuzz_libunwind(args: argparse.Namespace) -> int:
    engine = args.engine or ENGINES[0]
    flags = GENERATOR_FLAGS if engine == "generator" else (*CAMPAIGN_FLAGS, "--engine",
                                                            "--sanitizer")
    refuse_inapplicable(args, f"libunwind --engine {engine}", TARGET_FLAGS["fuzz"], flags)
    if engine == "libfuzzer":
        return run_campaign(args)
    return _generator(args, default_out("fuzz", "libunwind", "libunwind-generator"),
                      DEFAULT_UNWINDER)


def fuzz_native(args: argparse.Namespace) -> int:
    """`--target native --unwinder NAME`: the generator engine on that unwinder's extension;
    with `--harness snapshot`, remote-memory mode's libFuzzer campaign on the stack bytes
    (walkfuzz.targets.native.snapshot.campaign); `--unwinder all` or a comma list: the
    differential run (walkfuzz.targets.native.differential.cli)."""
    from walkfuzz.targets.native.differential.cli import is_differential

    if is_differential(args.unwinder):
        return _differential(args)
    if args.harness is not None:
        from walkfuzz.targets.native.snapshot.campaign import fuzz_snapshot

        refuse_inapplicable(args, "native --harness snapshot", TARGET_FLAGS["fuzz"],
                            (*CAMPAIGN_FLAGS, "--unwinder"))
        return fuzz_snapshot(args)
    refuse_inapplicable(args, "native (the generator engine)", TARGET_FLAGS["fuzz"],
                        ("--unwinder", "--engine", "--seed", "--walk-budget"))
    if args.engine not in (None, "generator"):
        raise UserError(f"--engine {args.engine} does not apply to target 'native' (it runs the "
                        "generator engine; the libFuzzer campaign is --target libunwind's)")
    unwinder = args.unwinder or DEFAULT_UNWINDER
    return _generator(args, default_out("fuzz", "native", f"native-{unwinder}"), unwinder)


def _generator(args: argparse.Namespace, default: Path, unwinder: str) -> int:
    from walkfuzz.targets.native.runs import fuzz_and_judge

    budget_ms = GENERATOR_WALK_BUDGET_MS if args.walk_budget_ns is None else \
        args.walk_budget_ns / 1e6
    return fuzz_and_judge(
        output_dir(args.out or default),
        seconds=GENERATOR_SECONDS if args.time is None else args.time,
        jobs=GENERATOR_JOBS if args.jobs is None else args.jobs,
        seed=1 if args.seed is None else args.seed, budget_ms=budget_ms, argv=_argv(),
        unwinder=unwinder)


def _differential(args: argparse.Namespace) -> int:
    from walkfuzz.targets.native.differential.cli import fuzz_differential, out_label

    refuse_inapplicable(args, f"native --unwinder {args.unwinder}", TARGET_FLAGS["fuzz"],
                        DIFFERENTIAL_FLAGS)
    budget_ms = GENERATOR_WALK_BUDGET_MS if args.walk_budget_ns is None else \
        args.walk_budget_ns / 1e6
    out = output_dir(args.out or default_out("fuzz", "native", out_label(args.unwinder)))
    return fuzz_differential(out, args.unwinder, seconds=args.time, runs=args.runs,
                             seed=1 if args.seed is None else args.seed, budget_ms=budget_ms,
                             argv=_argv())
