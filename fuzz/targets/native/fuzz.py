"""`walkfuzz fuzz --target native|libunwind`: the native target's campaign entry (the Target
protocol's fuzz part, walkfuzz.targets.protocol).

    --target native --unwinder NAME     the C generator stream walked by NAME's extension in
                                        supervised worker processes (walkfuzz.targets.native
                                        .runs); its only engine
    --target native --harness snapshot  remote-memory mode's libFuzzer campaign on the stack
                                        bytes (walkfuzz.targets.native.snapshot.campaign)
    --target native --unwinder all|A,B  the differential run
                                        (walkfuzz.targets.native.differential.cli)
    --target libunwind                  --engine libfuzzer (default): a libFuzzer campaign on
                                        harnesses/libunwind_perturb.py; --engine generator: the
                                        generator stream on libunwind, the benchmark's engine

The exit status: 0 no findings, 1 findings.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import output_dir
from walkfuzz.targets.flags import refuse_inapplicable
from walkfuzz.targets.native import ALIAS, TARGET
from walkfuzz.targets.native.unwinders import DEFAULT as DEFAULT_UNWINDER
from walkfuzz.targets.table import CAMPAIGN_FLAGS, TARGET_FLAGS, default_out

ENGINES = ("libfuzzer", "generator")
# The generator engine's defaults (it has no corpus to resume, so a time budget).
GENERATOR_SECONDS = 60.0
GENERATOR_JOBS = 2
GENERATOR_WALK_BUDGET_MS = 500.0
GENERATOR_FLAGS = ("--engine", "--seed", "--walk-budget")
DIFFERENTIAL_FLAGS = ("--unwinder", "--runs", "--seed", "--walk-budget")


def fuzz(args: argparse.Namespace) -> int:
    """The run `args` ask for; `--target libunwind` keeps its own defaults (a libFuzzer
    campaign, reports/fuzz-libunwind-generator for the generator engine)."""
    if args.target == ALIAS:
        return _libunwind(args)
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
    return _generator(args, default_out("fuzz", TARGET, f"{TARGET}-{unwinder}"), unwinder)


def _argv() -> list[str]:
    return ["walkfuzz", *sys.argv[1:]]


def _libunwind(args: argparse.Namespace) -> int:
    engine = args.engine or ENGINES[0]
    flags = GENERATOR_FLAGS if engine == "generator" else (*CAMPAIGN_FLAGS, "--engine",
                                                            "--sanitizer")
    refuse_inapplicable(args, f"{ALIAS} --engine {engine}", TARGET_FLAGS["fuzz"], flags)
    if engine == "libfuzzer":
        from walkfuzz.targets.campaign_run import run_campaign

        return run_campaign(args)
    return _generator(args, default_out("fuzz", ALIAS, f"{ALIAS}-generator"), DEFAULT_UNWINDER)


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
    out = output_dir(args.out or default_out("fuzz", TARGET, out_label(args.unwinder)))
    return fuzz_differential(out, args.unwinder, seconds=args.time, runs=args.runs,
                             seed=1 if args.seed is None else args.seed, budget_ms=budget_ms,
                             argv=_argv())
