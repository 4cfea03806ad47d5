"""What a live stress run does, and how its values are shown (durations are parsed by
walkfuzz.core.duration)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from walkfuzz.core.duration import format_ns
from walkfuzz.core.errors import UserError

MODES = ("signal", "thread", "queue")
# where signal and queue mode's signals come from: a timer per worker, or one sampler thread
# that tgkills every worker (thread mode always has its own sampler thread)
SOURCES = ("timers", "sampler")
WORKLOADS = ("mixed", "interpreted", "compiled", "native", "deep", "calls", "recursive")
MAX_THREADS = 16
MIN_INTERVAL_NS = 1_000


@dataclass(frozen=True)
class StressOptions:
    """One live stress run of the simulated VM."""

    mode: str = "signal"
    interval_ns: int = 100_000
    threads: int = 2
    duration_ns: int = 5_000_000_000
    baseline_ns: int = 1_000_000_000
    workload: str = "mixed"
    seed: int = 1
    walker: str | None = None          # a walker library path; None = the reference walker
    walk_budget_ns: int = 1_000_000_000  # watchdog: a walk longer than this is a hang
    safepoint_every: int = 64          # request a safepoint every n-th sample (0: never)
    max_walks: int = 0                 # stop once this many walks were judged (0: duration)
    capture: bool = True               # capture failed samples as cases (docs/stress.md)
    stop_on_first: bool = False        # end the sampled phase at the first failed sample
    out: str | None = None             # where findings are saved as they happen (None: not)
    source: str = "timers"             # signal, queue mode: SOURCES

    def check(self) -> None:
        if self.mode not in MODES:
            raise UserError(f"stress mode {self.mode!r} is not one of {', '.join(MODES)}")
        if self.workload not in WORKLOADS:
            raise UserError(f"workload {self.workload!r} is not one of {', '.join(WORKLOADS)}")
        if self.source not in SOURCES:
            raise UserError(f"source {self.source!r} is not one of {', '.join(SOURCES)}")
        if self.mode == "thread" and self.source != "timers":
            raise UserError(f"--source {self.source} is for --mode signal or queue: thread mode "
                            "has its own sampler thread")
        if self.workload == "recursive" and self.mode == "queue":
            # the oracle counts the physical frames of a walk from the sampled instruction;
            # a queue element is walked later, from the frame the Enqueue chose
            raise UserError("workload 'recursive' runs in --mode signal or thread, not queue")
        if not 1 <= self.threads <= MAX_THREADS:
            raise UserError(f"threads {self.threads} is not in 1..{MAX_THREADS}")
        if self.interval_ns < MIN_INTERVAL_NS:
            raise UserError(f"interval {format_ns(self.interval_ns)} is below 1us")
        if self.duration_ns <= 0 or self.baseline_ns < 0:
            raise UserError(f"duration {self.duration_ns} ns / baseline {self.baseline_ns} ns "
                            "must be positive / not negative")
        if self.max_walks < 0:
            raise UserError(f"walks {self.max_walks} is negative")
        if self.safepoint_every < 0:
            raise UserError(f"safepoint-every {self.safepoint_every} is negative")
        if self.stop_on_first and not self.capture:
            raise UserError("stop-on-first needs capture: the first finding is a capture")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> StressOptions:
        return cls(**doc)

    @property
    def label(self) -> str:
        source = "" if self.source == "timers" else f"-{self.source}"
        return f"{self.mode}{source}-{format_ns(self.interval_ns)}-{self.workload}"
