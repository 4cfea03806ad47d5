"""What an ASGST_Enqueue adds to a signal in thread CPU time (native/testing/queue_signal_cost.c,
wf_queue_signal_cost.h): a thread that only takes signals (its own timer's, asleep between
them, or its own tgkill's in a loop), in alternating stretches with an empty handler and
with the Enqueue; its CPU clock is read around each stretch, never inside the handler."""

from __future__ import annotations

from dataclasses import dataclass

from walkfuzz.core.errors import UserError
from walkfuzz.core.native import load_testing
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.queue.cases import base_case, physical_frames

TIMER, SELF = 0, 1   # WF_QUEUE_COST_TIMER, WF_QUEUE_COST_SELF


@dataclass(frozen=True)
class CostParams:
    source: int = SELF
    interval_ns: int = 50_000
    stretches: int = 20
    signals: int = 256
    seed: int = 3


@dataclass(frozen=True)
class SignalCost:
    """Mean thread CPU time per signal with each handler, and what the Enqueue adds."""

    empty_ns: float       # per signal, the handler without the Enqueue (mean)
    enqueue_ns: float     # per signal, the same handler with it (mean)
    added_median_ns: float  # median over stretch pairs of the per-signal difference
    signals: int          # per variant
    enqueued: int

    @property
    def added_mean_ns(self) -> float:
        return self.enqueue_ns - self.empty_ns


def measure(params: CostParams) -> SignalCost:
    """Map the stress test's generated IN_JAVA case and measure on it."""
    ffi, lib = load_testing()
    _, case = base_case(params.seed, vm.ThreadState.IN_JAVA, vm.Option.WALK_SAME_THREAD)
    pc, sp, fp = physical_frames(case)[0]
    p = ffi.new("wf_queue_signal_cost_params *")
    p.source, p.interval_ns = params.source, params.interval_ns
    p.stretches, p.signals = params.stretches, params.signals
    p.pc, p.sp, p.fp = pc, sp, fp
    p.poll_pc, p.poll_sp, p.poll_fp = pc, sp, fp
    out = ffi.new("wf_queue_signal_cost_result *")
    if lib.wf_queue_signal_cost(p, out) != 0:
        raise UserError(f"queue signal cost with {params}: set-up failed, error {out.error}")
    if out.rejected != 0:
        raise UserError(f"queue signal cost with {params}: {out.rejected} Enqueues rejected")
    per = [out.cpu_ns[v] / max(out.signals[v], 1) for v in (0, 1)]
    return SignalCost(empty_ns=per[0], enqueue_ns=per[1],
                      added_median_ns=float(out.added_median_ns),
                      signals=int(out.signals[1]), enqueued=int(out.enqueued))
