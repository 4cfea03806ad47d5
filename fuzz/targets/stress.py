"""`walkfuzz stress --target T`: the one request every target's stress part takes
(StressRequest; each target's `stress.stress(request)`, named in walkfuzz.targets.table).

Every runner takes one StressRequest and returns the exit status (walkfuzz.core.exit_status):
0 clean, 1 a fault, a hang or an invalid trace (an invalid-trace rate above --max-invalid-rate
when that is given), 130 interrupted (the report is written).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from walkfuzz.core.duration import format_ns
from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import output_dir
from walkfuzz.engine.campaign import CAMPAIGN_FILE, CampaignDir
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
        now: a run that could not write it, or whose report would replace a fuzz campaign's,
        is refused before it starts."""
        out = output_dir(self.out or default_out("stress", self.target, kind))
        if CampaignDir(out).exists():
            raise UserError(f"--out {str(out)!r} holds a fuzz campaign ({CAMPAIGN_FILE}), whose "
                            "report a stress run would replace; use another --out")
        return out


def raise_no_samples(duration_ns: float, interval_ns: float) -> None:
    """A stress run that walked no sample did no work: an error, never a clean run."""
    raise UserError(f"no sample was walked in --duration {format_ns(duration_ns)} at "
                    f"--interval {format_ns(interval_ns)} per thread")
