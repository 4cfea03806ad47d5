"""ASGST_Enqueue from real per-thread timer signals on a generated case
(native/testing/queue_stress.c), with the counts that prove no deadlock and no loss, and the TSC
windows timed in the handler: around an Enqueue (even signals) and around nothing (odd
signals, the timing overhead), as percentiles and means of each.

`run_in_child` runs it in a child process with a timeout, so a deadlock fails a test instead
of hanging it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from walkfuzz.core.native import load_testing
from walkfuzz.engine.child import python_command, run_child
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.queue.cases import base_case, physical_frames

RESULT_FIELDS = ("signals", "nested_signals", "enqueued", "rejected", "attempts", "full",
                 "other", "walk_failed", "processed", "dropped", "safepoints", "walked",
                 "wrong_walks", "timed", "enqueue_ns", "empty", "empty_ns", "run_ns", "error")


@dataclass(frozen=True)
class StressParams:
    threads: int = 2
    interval_ns: int = 100_000
    duration_ms: int = 300
    capacity: int = 16
    poll_every: int = 50_000
    seed: int = 3
    nested: bool = False          # a second timer's signal may land inside an Enqueue


def run(params: StressParams) -> dict[str, int]:
    """Map a generated IN_JAVA case and stress its queue; the summed counters."""
    ffi, lib = load_testing()
    _, case = base_case(params.seed, vm.ThreadState.IN_JAVA, vm.Option.WALK_SAME_THREAD)
    assert case.truth is not None
    pc, sp, fp = physical_frames(case)[0]
    top = next(f for f in case.truth.frames if f.type in (1, 2))
    p = ffi.new("wf_queue_stress_params *")
    p.threads, p.interval_ns, p.duration_ms = params.threads, params.interval_ns, params.duration_ms
    p.capacity, p.poll_every, p.nested = params.capacity, params.poll_every, params.nested
    p.expect_frames = sum(1 for f in case.truth.frames if f.sp >= top.sp)
    p.pc, p.sp, p.fp = pc, sp, fp
    p.poll_pc, p.poll_sp, p.poll_fp = pc, sp, fp
    out = ffi.new("wf_queue_stress_result *")
    lib.wf_queue_stress_run(p, out)
    result = {name: int(getattr(out, name)) for name in RESULT_FIELDS}
    width = lib.WF_QUEUE_STRESS_HIST_NS
    for name, hist_field in (("enqueue", "enqueue_hist"), ("empty", "empty_hist")):
        hist = [int(getattr(out, hist_field)[i]) for i in range(lib.WF_QUEUE_STRESS_HIST)]
        result[f"{name}_p50_ns"] = percentile_ns(hist, width, 0.50)
        result[f"{name}_p90_ns"] = percentile_ns(hist, width, 0.90)
    return result


def percentile_ns(hist: list[int], width: int, q: float) -> int:
    """Upper bound of the histogram bucket (`width` ns each) holding quantile q; 0 if empty."""
    total, seen = sum(hist), 0
    for i, count in enumerate(hist):
        seen += count
        if total and seen >= q * total:
            return (i + 1) * width
    return 0


def run_in_child(params: StressParams, timeout_s: float = 60.0) -> dict[str, int]:
    """`run` in a child process; subprocess.TimeoutExpired if it does not finish in time."""
    code = ("import json, sys; from walkfuzz.targets.minivm.queue.stress import StressParams, run; "
            "print(json.dumps(run(StressParams(**json.loads(sys.argv[1])))))")
    done = run_child(python_command("-c", code, json.dumps(asdict(params))), timeout=timeout_s)
    if done.returncode != 0:
        raise RuntimeError(f"queue stress child exited {done.returncode}: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return {k: int(v) for k, v in result.items()}
