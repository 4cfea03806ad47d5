"""`walkfuzz libunwind fuzz|stress|replay`: the libunwind target on its own.

`fuzz` and `stress` run through walkfuzz.libunwind.runs (run, report, summary, exit status:
0 clean, 1 findings / a fault / an invalid-trace rate above --max-invalid-rate);
`walkfuzz stress --target libunwind` calls the same stress function. `walkfuzz fuzz --target
libunwind` is the coverage-guided libFuzzer campaign on harnesses/libunwind_perturb.py.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from walkfuzz.errors import UserError
from walkfuzz.exit_status import describe_exit

DEFAULT_OUT = Path("reports")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("libunwind", help="fuzz and stress libunwind on real stacks",
                              description="Walk real native stacks with libunwind: perturbed "
                              "contexts (fuzz), signal sampling (stress), one input (replay).")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    f = sub.add_parser("fuzz", help="perturbed-context walks in supervised worker processes")
    f.add_argument("--time", type=float, default=60.0, metavar="SECONDS")
    f.add_argument("-j", "--jobs", type=int, default=2)
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--budget-ms", type=float, default=500.0,
                   help="watchdog budget of one walk (default 500)")
    f.add_argument("--out", type=Path, help="output directory (default reports/libunwind-fuzz)")
    f.set_defaults(func=run_fuzz)
    s = sub.add_parser("stress", help="sample workload threads, walk from the handler")
    s.add_argument("--time", type=float, default=10.0, metavar="SECONDS")
    s.add_argument("--threads", type=int, default=2)
    s.add_argument("--interval-us", type=float, default=100.0)
    s.add_argument("--mode", choices=("ucontext", "sigframe", "alternate"), default="alternate")
    s.add_argument("--max-depth", type=int, default=12)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--baseline", type=float, default=1.0, metavar="SECONDS",
                   help="unsampled run first, for the slowdown figure (0: none)")
    s.add_argument("--budget-ms", type=float, default=1000.0)
    s.add_argument("--max-invalid-rate", type=float, default=None,
                   help="exit 1 if the invalid-trace rate is above this (CI)")
    s.add_argument("--out", type=Path, help="output directory (default reports/libunwind-stress)")
    s.set_defaults(func=run_stress)
    r = sub.add_parser("replay", help="run one fuzz input in a child process and explain it")
    r.add_argument("input", type=Path)
    r.set_defaults(func=run_replay)
    p.set_defaults(func=lambda args: 2)


def run_fuzz(args: argparse.Namespace) -> int:
    from walkfuzz.libunwind.runs import fuzz_and_judge

    return fuzz_and_judge(args.out or DEFAULT_OUT / "libunwind-fuzz", seconds=args.time,
                          jobs=args.jobs, seed=args.seed, budget_ms=args.budget_ms,
                          argv=["walkfuzz", *sys.argv[1:]])


def run_stress(args: argparse.Namespace) -> int:
    from walkfuzz.libunwind.runs import stress_and_judge

    return stress_and_judge(args.out or DEFAULT_OUT / "libunwind-stress", seconds=args.time,
                            threads=args.threads, interval_us=args.interval_us, mode=args.mode,
                            max_depth=args.max_depth, seed=args.seed,
                            baseline_seconds=args.baseline, budget_ms=args.budget_ms,
                            max_invalid_rate=args.max_invalid_rate,
                            argv=["walkfuzz", *sys.argv[1:]])


def run_replay(args: argparse.Namespace) -> int:
    if not args.input.is_file():
        raise UserError(f"input {str(args.input)!r} is not a file")
    done = subprocess.run([sys.executable, "-m", "walkfuzz.libunwind.replay", str(args.input)],
                          check=False)
    if done.returncode < 0:  # as `walkfuzz libunwind fuzz` names a death of its worker
        from walkfuzz.findings import Finding
        from walkfuzz.libunwind.fuzz import death_location
        from walkfuzz.libunwind.outcome import TARGET
        from walkfuzz.libunwind.worker import HARNESS

        location = death_location(done.returncode, stalled=False)
        died = Finding("crash", TARGET, HARNESS, location, (), args.input.read_bytes())
        print(json.dumps({"input": str(args.input), "process_died": describe_exit(done.returncode),
                          "location": location, "signature": died.signature}))
        return 1
    return done.returncode
