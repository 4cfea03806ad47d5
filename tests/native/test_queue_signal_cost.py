"""The CPU-time-per-signal measurement of ASGST_Enqueue (bench/bench_queue.py `queue-cpu`):
its bookkeeping, with both signal sources, and its refusal of bad parameters. What it
measures is the benchmark's business; here only that every signal it counts was handled by
the variant it says, and every Enqueue it made reached the queue."""

from __future__ import annotations

import pytest

from walkfuzz.core.errors import UserError
from walkfuzz.core.native import load_testing
from walkfuzz.targets.minivm.queue.signal_cost import SELF, TIMER, CostParams, measure


@pytest.mark.parametrize("source", [SELF, TIMER])
def test_every_signal_is_counted_and_every_enqueue_lands(source: int) -> None:
    params = CostParams(source=source, interval_ns=20_000, stretches=3, signals=16)
    cost = measure(params)
    assert cost.signals == params.stretches * params.signals
    assert cost.enqueued == cost.signals          # the queue holds a stretch: none rejected
    assert cost.empty_ns > 0 and cost.enqueue_ns > 0


@pytest.mark.parametrize("field, value", [("stretches", 0), ("signals", 0),
                                          ("signals", 1 << 20), ("source", 7)])
def test_bad_parameters_are_refused(field: str, value: int) -> None:
    ffi, lib = load_testing()
    p = ffi.new("wf_queue_signal_cost_params *")
    p.source, p.stretches, p.signals = SELF, 1, 1
    setattr(p, field, value)
    out = ffi.new("wf_queue_signal_cost_result *")
    assert lib.wf_queue_signal_cost(p, out) < 0
    assert out.error < 0 and out.signals[0] == out.signals[1] == 0


def test_a_timer_interval_of_a_second_or_more_is_refused() -> None:
    with pytest.raises(UserError, match="set-up failed"):
        measure(CostParams(source=TIMER, interval_ns=1_000_000_000, stretches=1, signals=1))
