"""`walkfuzz stress --target native|libunwind`: the native target's live entry (the Target
protocol's stress part, walkfuzz.targets.protocol): native threads sampled by timers, each
sample walked from the handler by --unwinder NAME (libunwind's for --target libunwind) and
checked against the thread's shadow stack (walkfuzz.targets.native.runs), --mode
ucontext|sigframe|alternate; `--unwinder all` or a comma list: every unwinder's run, each sample
also walked by fp in its process (walkfuzz.targets.native.differential.stress).

The exit status (walkfuzz.core.exit_status): 0 clean, 1 a fault, a hang or an invalid trace (an
invalid-trace rate above --max-invalid-rate when that is given), 130 interrupted.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from walkfuzz.targets.native import ALIAS, TARGET
from walkfuzz.targets.native.unwinders import DEFAULT as DEFAULT_UNWINDER

if TYPE_CHECKING:
    from walkfuzz.targets.stress import StressRequest

NS_PER_S = 1_000_000_000


def stress(req: StressRequest) -> int:
    """The run `req` asks for; `--target libunwind` writes reports/stress-libunwind."""
    from walkfuzz.targets.native.differential.cli import is_differential

    if req.target == ALIAS:
        return _single(req, DEFAULT_UNWINDER, req.out_dir())
    if is_differential(req.unwinder):
        return _differential(req)
    unwinder = req.unwinder or DEFAULT_UNWINDER
    return _single(req, unwinder, req.out_dir(f"{TARGET}-{unwinder}"))


def _single(req: StressRequest, unwinder: str, out_dir: Path) -> int:
    from walkfuzz.targets.native.runs import stress_and_judge
    from walkfuzz.targets.native.stress_run import StressConfig

    defaults = StressConfig()
    baseline_s = defaults.baseline_seconds if req.baseline_ns is None else req.baseline_ns / 1e9
    budget_ms = defaults.budget_ms if req.walk_budget_ns is None else req.walk_budget_ns / 1e6
    return stress_and_judge(out_dir, seconds=req.duration_ns / NS_PER_S,
                            threads=req.threads, interval_us=req.interval_ns / 1000,
                            mode=req.mode or defaults.mode, seed=req.seed,
                            max_depth=defaults.max_depth if req.max_depth is None
                            else req.max_depth,
                            baseline_seconds=baseline_s, budget_ms=budget_ms,
                            max_invalid_rate=req.max_invalid_rate, argv=req.command,
                            unwinder=unwinder)


def _differential(req: StressRequest) -> int:
    from walkfuzz.targets.native.differential.cli import out_label, stress_differential_run
    from walkfuzz.targets.native.stress_run import StressConfig

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
