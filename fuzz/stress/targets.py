"""`walkfuzz stress --target T`: which runner stresses which target, and how the command's
common options map onto it.

    minivm      the live simulated VM (walkfuzz.stress.runner), --mode signal|thread|queue
    hotspot     AsyncGetCallTrace sampled in a JVM (walkfuzz.hotspot.runs), --jdk 17|25|PATH
    libunwind   native threads walked from the handler (walkfuzz.libunwind.runs),
                --mode ucontext|sigframe|alternate

Every runner takes one StressRequest and returns the exit status: 0 clean, 1 a fault or hang,
or an invalid-trace rate above --max-invalid-rate. `walkfuzz hotspot stress` and
`walkfuzz libunwind stress` call the same functions the hotspot and libunwind entries call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.errors import UserError
from walkfuzz.stress.options import StressOptions
from walkfuzz.stress.reporting import write_stress_report
from walkfuzz.stress.runner import run_minivm_stress
from walkfuzz.stress.summary import figures, one_line

NS_PER_S = 1_000_000_000


@dataclass(frozen=True)
class StressRequest:
    """The command's options, parsed; None where the user left a target's default."""

    target: str
    command: list[str]
    out: Path | None
    interval_ns: int
    threads: int
    duration_ns: int
    seed: int
    max_invalid_rate: float | None = None
    mode: str | None = None
    baseline_ns: int | None = None
    walk_budget_ns: int | None = None
    workload: str | None = None
    walker: str | None = None
    jdk: str | None = None
    stop_on_first: bool = False
    walks: int | None = None

    def out_dir(self, name: str) -> Path:
        return self.out or Path("reports") / f"stress-{name}"


StressRunner = Callable[[StressRequest], int]


def stress_minivm(req: StressRequest) -> int:
    """Run, report, and judge: 1 on a fault or hang, or an invalid-trace rate above the limit
    (with --stop-on-first: on any finding). Findings are saved under the output directory as
    they happen."""
    defaults = StressOptions()
    out_dir = req.out_dir(req.mode or defaults.mode)
    options = StressOptions(
        mode=req.mode or defaults.mode, interval_ns=req.interval_ns, threads=req.threads,
        duration_ns=req.duration_ns,
        baseline_ns=defaults.baseline_ns if req.baseline_ns is None else req.baseline_ns,
        workload=req.workload or defaults.workload, seed=req.seed, walker=req.walker,
        walk_budget_ns=req.walk_budget_ns or defaults.walk_budget_ns,
        max_walks=req.walks or 0, stop_on_first=req.stop_on_first, out=str(out_dir))
    options.check()
    started = time.time()
    result = run_minivm_stress(options)
    paths = write_stress_report(out_dir, result, req.command, started)
    total = result["total"]
    print(f"stress {options.label}: {one_line(result)}")
    if result["stopped_early"]:
        print("stopped at the first finding (--stop-on-first)")
    print(f"report: {paths['html']} (also {paths['json'].name}, {paths['md'].name})")
    failed = total["faults"] + total["hangs"] + total["queue_miscounts"] > 0
    if req.stop_on_first and result["signatures"]:
        failed = True
    if req.max_invalid_rate is not None and figures(result)["invalid_rate"] > req.max_invalid_rate:
        failed = True
    return 1 if failed else 0


def stress_hotspot(req: StressRequest) -> int:
    from walkfuzz.hotspot.runs import stress_and_judge

    return stress_and_judge(req.out_dir("hotspot"), jdk=req.jdk,
                            duration_s=req.duration_ns / NS_PER_S, seed=req.seed,
                            threads=req.threads, interval_us=req.interval_ns // 1000,
                            max_invalid_rate=req.max_invalid_rate, argv=req.command)


def stress_libunwind(req: StressRequest) -> int:
    from walkfuzz.libunwind.runs import stress_and_judge
    from walkfuzz.libunwind.stress import StressConfig

    defaults = StressConfig()
    baseline_s = defaults.baseline_seconds if req.baseline_ns is None else req.baseline_ns / 1e9
    budget_ms = defaults.budget_ms if req.walk_budget_ns is None else req.walk_budget_ns / 1e6
    return stress_and_judge(req.out_dir("libunwind"), seconds=req.duration_ns / NS_PER_S,
                            threads=req.threads, interval_us=req.interval_ns / 1000,
                            mode=req.mode or defaults.mode, seed=req.seed,
                            baseline_seconds=baseline_s, budget_ms=budget_ms,
                            max_invalid_rate=req.max_invalid_rate, argv=req.command)


STRESS_RUNNERS: dict[str, StressRunner] = {
    "minivm": stress_minivm, "hotspot": stress_hotspot, "libunwind": stress_libunwind,
}
# Flags that only some targets take ({flag: argparse dest}; the rest apply to every target).
TARGET_FLAGS = {"--walker": "walker", "--mode": "mode", "--workload": "workload",
                "--baseline": "baseline", "--walk-budget": "walk_budget", "--jdk": "jdk",
                "--walks": "walks", "--stop-on-first": "stop_on_first"}
APPLICABLE = {
    "minivm": ("--walker", "--mode", "--workload", "--baseline", "--walk-budget", "--walks",
               "--stop-on-first"),
    "hotspot": ("--jdk",),
    "libunwind": ("--mode", "--baseline", "--walk-budget"),
}


def stress_runner(target: str) -> StressRunner:
    runner = STRESS_RUNNERS.get(target)
    if runner is None:
        raise UserError(f"unknown stress target {target!r}; known: {', '.join(STRESS_RUNNERS)}")
    return runner
