"""What this machine can deliver to the live stress's workers with an empty handler
(native/testing/live_limit.c, wf_live_limit.h): samples delivered per worker CPU-second and the
workload's slowdown, for per-thread timers (signal and queue mode's sampling), the same timers
paced as the live stress paces them (wf_live_pace.h: the workload keeps its own time), and one
sampler thread signalling every worker (thread mode's). A live stress figure divided by its
limit is the share of the machine's delivery the walker's sampling keeps."""

from __future__ import annotations

from dataclasses import dataclass

from walkfuzz.core.errors import UserError
from walkfuzz.core.native import load_testing

SOURCES = ("timers", "sampler")   # WF_LIVE_LIMIT_TIMERS, WF_LIVE_LIMIT_SAMPLER
NS = 1e9


@dataclass(frozen=True)
class LimitParams:
    source: str = "timers"
    workers: int = 2
    interval_ns: int = 10_000
    rounds: int = 4
    round_ns: int = 250_000_000   # each phase of a round: unsampled, then sampled
    paced: bool = False           # timers: paced as the live stress paces them


@dataclass(frozen=True)
class Limit:
    """One limit run's counts and the figures the live stress is measured against."""

    params: LimitParams
    requested: int
    delivered: int
    overruns: int
    loops_base: int
    loops_run: int
    cpu_ns_base: int
    cpu_ns_run: int
    wall_ns_run: int
    sampler_cpu_ns: int
    paced_restarts: int

    @property
    def delivered_per_cpu_second(self) -> float:
        """Signals handled per second of the workers' CPU time while sampled."""
        return self.delivered / (self.cpu_ns_run / NS) if self.cpu_ns_run else 0.0

    @property
    def requested_per_cpu_second(self) -> float:
        return NS / self.params.interval_ns

    @property
    def delivered_fraction(self) -> float:
        return self.delivered / self.requested if self.requested else 0.0

    @property
    def slowdown(self) -> float:
        """Loop rounds per CPU-second lost to delivery against the unsampled phases."""
        base = self.loops_base / self.cpu_ns_base if self.cpu_ns_base else 0.0
        run = self.loops_run / self.cpu_ns_run if self.cpu_ns_run else 0.0
        return 1.0 - run / base if base else 0.0

    @property
    def sampler_cpu_fraction(self) -> float:
        """The sampler thread's CPU time over the sampled phases' wall time (timers: 0)."""
        wall = self.wall_ns_run / max(self.params.workers, 1)
        return self.sampler_cpu_ns / wall if wall else 0.0


def measure(params: LimitParams) -> Limit:
    """Run the limit in threads of this process (SIGPROF's action is restored after)."""
    if params.source not in SOURCES:
        raise UserError(f"limit source {params.source!r} is not one of {', '.join(SOURCES)}")
    ffi, lib = load_testing()
    p = ffi.new("wf_live_limit_params *", {
        "source": SOURCES.index(params.source), "workers": params.workers,
        "rounds": params.rounds, "interval_ns": params.interval_ns,
        "round_ns": params.round_ns, "paced": int(params.paced)})
    out = ffi.new("wf_live_limit_result *")
    if lib.wf_live_limit(p, out) != 0:
        raise UserError(f"delivery limit with {params}: error {out.error}")
    return Limit(params=params, requested=int(out.requested), delivered=int(out.delivered),
                 overruns=int(out.overruns), loops_base=int(out.loops_base),
                 loops_run=int(out.loops_run), cpu_ns_base=int(out.cpu_ns_base),
                 cpu_ns_run=int(out.cpu_ns_run), wall_ns_run=int(out.wall_ns_run),
                 sampler_cpu_ns=int(out.sampler_cpu_ns),
                 paced_restarts=int(out.paced_restarts))
