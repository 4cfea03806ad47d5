"""The delivery limit (native/testing/live_limit.c, walkfuzz.targets.minivm.live.limit):
its bookkeeping with each signal source on tiny runs, and its refusal of bad parameters. What
it measures is bench/bench_limit.py's business; here only that its counts fit together."""

from __future__ import annotations

import pytest

from walkfuzz.core.errors import UserError
from walkfuzz.core.native import load_testing
from walkfuzz.targets.minivm.live.limit import SOURCES, LimitParams, measure

TINY = {"workers": 2, "interval_ns": 100_000, "rounds": 2, "round_ns": 20_000_000}


@pytest.mark.parametrize("source", SOURCES)
def test_counts_fit_together(source: str) -> None:
    params = LimitParams(source=source, **TINY)
    lim = measure(params)
    # a phase lasts until every worker ran in it
    assert lim.loops_base > 0 and lim.loops_run > 0
    assert lim.cpu_ns_base > 0 and lim.cpu_ns_run > 0
    assert lim.wall_ns_run >= params.workers * params.rounds * params.round_ns
    # a handler runs only for a signal that was sent or a period that expired (the timers'
    # periods are wall time; the sampler's signals need it to have run)
    assert lim.delivered <= lim.requested + params.workers
    assert lim.requested > 0 or source == "sampler"
    assert lim.delivered_fraction == (lim.delivered / lim.requested if lim.requested else 0.0)
    assert lim.requested_per_cpu_second == 1e9 / params.interval_ns
    assert lim.slowdown < 1.0
    if source == "timers":
        assert lim.sampler_cpu_ns == 0 and lim.sampler_cpu_fraction == 0.0
    else:  # tgkill never overruns; the sampler thread's CPU time is its own
        assert lim.overruns == 0
    assert lim.paced_restarts == 0  # not paced


def test_paced_timers_restart_only_as_paced() -> None:
    lim = measure(LimitParams(source="timers", paced=True, **TINY))
    assert lim.loops_run > 0 and lim.requested > 0  # timers: the sampled phases' periods
    assert lim.delivered <= lim.requested + TINY["workers"]
    # a restart follows a delivered signal that was late (or starved)
    assert lim.paced_restarts <= lim.delivered


@pytest.mark.parametrize("field, value", [("workers", 0), ("workers", 17), ("rounds", 0),
                                          ("interval_ns", 999), ("round_ns", 0),
                                          ("source", 2), ("paced", 2)])
def test_bad_parameters_are_refused(field: str, value: int) -> None:
    ffi, lib = load_testing()
    p = ffi.new("wf_live_limit_params *", {"source": 0, "workers": 1, "rounds": 1,
                                           "interval_ns": 100_000, "round_ns": 1_000_000})
    setattr(p, field, value)
    out = ffi.new("wf_live_limit_result *")
    assert lib.wf_live_limit(p, out) < 0
    assert out.error < 0 and out.delivered == out.loops_base == 0


def test_only_timers_are_paced() -> None:
    ffi, lib = load_testing()
    p = ffi.new("wf_live_limit_params *", {"source": 1, "workers": 1, "rounds": 1, "paced": 1,
                                           "interval_ns": 100_000, "round_ns": 1_000_000})
    out = ffi.new("wf_live_limit_result *")
    assert lib.wf_live_limit(p, out) < 0 and out.error < 0


def test_an_unknown_source_is_named() -> None:
    with pytest.raises(UserError, match="'ticks'"):
        measure(LimitParams(source="ticks"))
