"""`walkfuzz fuzz --target hotspot`: one guarded JVM run of perturbed-context AsyncGetCallTrace
calls (walkfuzz.targets.hotspot.runs), and with --control an unguarded one; -j is the
workload's threads. Takes the parsed arguments of `walkfuzz fuzz` (the flags the target does
not take were refused already) and returns the exit status: 0 no findings, 1 findings."""

from __future__ import annotations

import argparse
import sys

from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import output_dir
from walkfuzz.targets.hotspot.inputs import HARNESS
from walkfuzz.targets.table import HOTSPOT, default_out

DEFAULT_SECONDS = 60.0
DEFAULT_THREADS = 2


def hotspot_threads(args: argparse.Namespace) -> int:
    """-j and --threads are one setting for hotspot: the workload's (fuzzed) threads."""
    if args.jobs is not None and args.threads is not None and args.jobs != args.threads:
        raise UserError(f"-j {args.jobs} and --threads {args.threads} disagree "
                        "(for hotspot both are the workload's threads)")
    return next((n for n in (args.jobs, args.threads) if n is not None), DEFAULT_THREADS)


def fuzz(args: argparse.Namespace) -> int:
    """AsyncGetCallTrace in a JVM: one guarded fuzz run (and with --control an unguarded one)."""
    from walkfuzz.targets.hotspot.campaign import DEFAULT_BATCH, DEFAULT_FUZZ_INTERVAL_US
    from walkfuzz.targets.hotspot.runs import fuzz_and_judge, interval_us

    if args.harness not in (None, HARNESS):
        raise UserError(f"unknown harness {args.harness!r} for target {HOTSPOT!r}; "
                        f"available: {HARNESS}")
    if len(args.corpus) > 1:
        raise UserError(f"--corpus given {len(args.corpus)} times; target {HOTSPOT!r} takes one "
                        "directory or file")
    return fuzz_and_judge(
        output_dir(args.out or default_out("fuzz", HOTSPOT)), jdk=args.jdk,
        duration_s=DEFAULT_SECONDS if args.time is None else args.time,
        seed=1 if args.seed is None else args.seed, threads=hotspot_threads(args),
        corpus=args.corpus[0] if args.corpus else None, control=args.control,
        corpus_only=args.corpus_only,
        batch=DEFAULT_BATCH if args.batch is None else args.batch,
        interval_us=(DEFAULT_FUZZ_INTERVAL_US if args.interval_ns is None
                     else interval_us(args.interval_ns)),
        argv=["walkfuzz", *sys.argv[1:]])
