"""`walkfuzz stress --target T`: the one request every target's stress part takes
(StressRequest; each target's `stress.stress(request)`, named in walkfuzz.targets.table), and
the native target's runners:

    native      native threads walked from the handler by --unwinder NAME
                (walkfuzz.targets.native.runs), --mode ucontext|sigframe|alternate
    libunwind   the same with --unwinder libunwind, by its first name

Every runner takes one StressRequest and returns the exit status (walkfuzz.core.exit_status):
0 clean, 1 a fault, a hang or an invalid trace (an invalid-trace rate above --max-invalid-rate
when that is given), 130 interrupted (the report is written).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import output_dir
from walkfuzz.targets.minivm.live.options import format_ns
from walkfuzz.targets.native.unwinders import DEFAULT as DEFAULT_UNWINDER
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


def stress_native(req: StressRequest) -> int:
    """`--target native --unwinder NAME`: as libunwind's, walked by that unwinder; `all` or a
    comma list: every unwinder's run, each sample also walked by fp in its process
    (walkfuzz.targets.native.differential.stress)."""
    from walkfuzz.targets.native.differential.cli import is_differential

    if is_differential(req.unwinder):
        return _stress_differential(req)
    unwinder = req.unwinder or DEFAULT_UNWINDER
    return stress_libunwind(req, unwinder, req.out_dir(f"native-{unwinder}"))


def stress_libunwind(req: StressRequest, unwinder: str = DEFAULT_UNWINDER,
                     out_dir: Path | None = None) -> int:
    from walkfuzz.targets.native.runs import stress_and_judge
    from walkfuzz.targets.native.stress import StressConfig

    defaults = StressConfig()
    baseline_s = defaults.baseline_seconds if req.baseline_ns is None else req.baseline_ns / 1e9
    budget_ms = defaults.budget_ms if req.walk_budget_ns is None else req.walk_budget_ns / 1e6
    return stress_and_judge(out_dir or req.out_dir(), seconds=req.duration_ns / NS_PER_S,
                            threads=req.threads, interval_us=req.interval_ns / 1000,
                            mode=req.mode or defaults.mode, seed=req.seed,
                            max_depth=defaults.max_depth if req.max_depth is None
                            else req.max_depth,
                            baseline_seconds=baseline_s, budget_ms=budget_ms,
                            max_invalid_rate=req.max_invalid_rate, argv=req.command,
                            unwinder=unwinder)


def _stress_differential(req: StressRequest) -> int:
    from walkfuzz.targets.native.differential.cli import out_label, stress_differential_run
    from walkfuzz.targets.native.stress import StressConfig

    assert req.unwinder is not None
    defaults = StressConfig()
    cfg = StressConfig(
        seconds=req.duration_ns / NS_PER_S, threads=req.threads,
        interval_us=req.interval_ns / 1000, mode=req.mode or defaults.mode, seed=req.seed,
        max_depth=defaults.max_depth if req.max_depth is None else req.max_depth,
        baseline_seconds=defaults.baseline_seconds if req.baseline_ns is None
        else req.baseline_ns / 1e9,
        budget_ms=defaults.budget_ms if req.walk_budget_ns is None else req.walk_budget_ns / 1e6)
    return stress_differential_run(req.out_dir(out_label(req.unwinder)), req.unwinder, cfg,
                                   req.command)
