"""`walkfuzz stress --target T`: the runner of each target (named in
walkfuzz.targets.table.TARGETS), and how the command's options map onto it.

    minivm      the live simulated VM (walkfuzz.targets.minivm.stress.runner),
                --mode signal|thread|queue
    hotspot     AsyncGetCallTrace sampled in a JVM (walkfuzz.targets.hotspot.runs), --jdk 17|25|PATH
    native      walkfuzz.targets.native.stress (and libunwind, its alias)

Every runner takes one StressRequest and returns the exit status (walkfuzz.core.exit_status):
0 clean, 1 a fault, a hang or an invalid trace (an invalid-trace rate above --max-invalid-rate
when that is given), 130 interrupted (the report is written).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from walkfuzz.core.errors import UserError
from walkfuzz.core.exit_status import INTERRUPTED
from walkfuzz.core.paths import output_dir
from walkfuzz.engine.progress import Progress
from walkfuzz.targets.minivm.stress.gateways import stress_over_gateways
from walkfuzz.targets.minivm.stress.options import StressOptions, format_ns
from walkfuzz.targets.minivm.stress.reporting import write_stress_report
from walkfuzz.targets.minivm.stress.runner import run_minivm_stress
from walkfuzz.targets.minivm.stress.summary import one_line, status_key, status_line, verdict
from walkfuzz.targets.table import default_out

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
    max_depth: int | None = None
    debug_non_safepoints: bool = True
    gateways: tuple[str, ...] = ()  # execnet specs (--tx): run on each, reports merged
    unwinder: str | None = None  # --target native: the unwinder that walks
    source: str | None = None  # minivm signal, queue mode: timers (default) or sampler

    def out_dir(self, kind: str | None = None) -> Path:
        """The run's output folder (--out, else the default for the target and kind), checked
        now: a run that could not write it is refused before it starts."""
        return output_dir(self.out or default_out("stress", self.target, kind))


def raise_no_samples(duration_ns: float, interval_ns: float) -> None:
    """A stress run that walked no sample did no work: an error, never a clean run."""
    raise UserError(f"no sample was walked in --duration {format_ns(duration_ns)} at "
                    f"--interval {format_ns(interval_ns)} per thread")


def minivm_options(req: StressRequest) -> StressOptions:
    """The live stress run the request asks for, checked."""
    defaults = StressOptions()
    options = StressOptions(
        mode=req.mode or defaults.mode, interval_ns=req.interval_ns, threads=req.threads,
        duration_ns=req.duration_ns,
        baseline_ns=defaults.baseline_ns if req.baseline_ns is None else req.baseline_ns,
        workload=req.workload or defaults.workload, seed=req.seed, walker=req.walker,
        walk_budget_ns=req.walk_budget_ns or defaults.walk_budget_ns,
        max_walks=req.walks or 0, stop_on_first=req.stop_on_first,
        source=req.source or defaults.source)
    options.check()
    return options


def stress_minivm(req: StressRequest) -> int:
    """Run, report, and judge: 1 on a fault, a hang or an invalid trace beyond
    --max-invalid-rate, 130 interrupted. Findings are saved under the output directory as
    they happen. With --tx, the run happens on every gateway and the reports are merged."""
    options = minivm_options(req)
    out_dir = req.out_dir(options.mode)  # minivm's runs are told apart by mode
    if req.gateways:
        return stress_over_gateways(options, list(req.gateways), out_dir, req.command,
                                    req.max_invalid_rate)
    options = replace(options, out=str(out_dir))
    started = time.time()
    with Progress() as progress:
        def show(status: dict[str, Any]) -> None:
            progress.update(time.time() - started, status_line(status), status_key(status))

        result = run_minivm_stress(options, show)
    paths = write_stress_report(out_dir, result, req.command, started)
    total = result["total"]
    print(f"stress {options.label}: {one_line(result)}")
    if result["stopped_early"]:
        print("stopped at the first finding (--stop-on-first)")
    print(f"report: {paths['html']} (also {paths['json'].name}, {paths['md'].name})")
    if result.get("interrupted"):
        print("interrupted: the report has the samples walked until then", file=sys.stderr)
        return INTERRUPTED
    if total["walked"] == 0:
        raise_no_samples(options.duration_ns, options.interval_ns)
    return verdict(total, req.max_invalid_rate)


def stress_hotspot(req: StressRequest) -> int:
    from walkfuzz.targets.hotspot.runs import interval_us, stress_and_judge

    return stress_and_judge(req.out_dir(), jdk=req.jdk,
                            duration_s=req.duration_ns / NS_PER_S, seed=req.seed,
                            threads=req.threads, interval_us=interval_us(req.interval_ns),
                            max_invalid_rate=req.max_invalid_rate,
                            debug_non_safepoints=req.debug_non_safepoints, argv=req.command)
