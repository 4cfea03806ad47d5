"""The live stress matrix: mode x interval x workload x load, one test each (spread by pytest -n).

Every test runs the reference walker on the live simulated VM and asserts that every walk is
exact: no fault, no hang, no invalid trace, not one (the reference walker is this project's
ground truth; docs/stress.md says why each transition window's expected trace is what any
walker sees there); in queue mode, every GetQueueSizeInfo agrees with the queue's accounting
rules, ResizeQueue included. Each cell runs twice: as the machine is, and with one CPU-hog
process per core (`walkfuzz stress --load`), because CI's machines are shared and a check that
holds only on an idle one is no check. Each run stops after STRESS_WALKS walks (env
WALKFUZZ_STRESS_WALKS), a budget a busy machine cannot shrink: it only makes the run longer.
STRESS_SECONDS (env WALKFUZZ_STRESS_SECONDS) only caps a run that makes no headway at all, far
above what the slowest cell takes on an oversubscribed machine (docs/stress.md, "Tests and
targets"); `make soak` runs a long duration instead (walks 0)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from walkfuzz.engine.load import cores, cpu_load
from walkfuzz.targets.minivm.live.options import StressOptions
from walkfuzz.targets.minivm.live.runner import run_minivm_stress

pytestmark = pytest.mark.stress

STRESS_WALKS = int(os.environ.get("WALKFUZZ_STRESS_WALKS", "5000"))
STRESS_SECONDS = float(os.environ.get("WALKFUZZ_STRESS_SECONDS", "300"))
MODES = ("signal", "thread", "queue")
INTERVALS_US = (100, 10)
WORKLOADS = ("mixed", "deep", "native", "calls")
LOADS = {"as-is": 0, "every-core-busy": cores()}



def run(mode: str, interval_us: int, workload: str, threads: int = 2,
        walks: int = STRESS_WALKS, **extra: Any) -> dict[str, Any]:
    options = StressOptions(mode=mode, interval_ns=interval_us * 1000, threads=threads,
                            duration_ns=int(STRESS_SECONDS * 1e9), baseline_ns=0,
                            workload=workload, max_walks=walks, **extra)
    return run_minivm_stress(options)


@pytest.mark.parametrize("load", LOADS)
@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("interval_us", INTERVALS_US)
@pytest.mark.parametrize("mode", MODES)
def test_reference_walker_live(mode: str, interval_us: int, workload: str, load: str,
                               file_result: Any) -> None:
    with cpu_load(LOADS[load]):
        result = run(mode, interval_us, workload)
    file_result(result)
    total = result["total"]
    assert total["faults"] == 0 and total["hangs"] == 0, result["examples"][:3]
    assert total["invalid"] == 0, (total["invalid_by_class"], result["examples"][:3])
    assert total["exact"] == total["walked"] >= STRESS_WALKS, total
    if mode == "queue":  # GetQueueSizeInfo agreed with the workers' own count every time
        assert total["queue_checks"] > 0, total
        assert total["queue_miscounts"] == 0, total.get("queue_first_miscount")


@pytest.mark.parametrize("load", LOADS)
@pytest.mark.parametrize("mode", ("signal", "queue"))
def test_reference_walker_live_from_a_sampler_thread(mode: str, load: str,
                                                     file_result: Any) -> None:
    """--source sampler: one thread tgkills the workers instead of their timers; at 10 us (the
    rate where its pacing by the workers' answers matters) every walk is still exact. One
    worker, so the sampler has a CPU of its own; a fifth of the walks, since a sampler thread
    that shares its CPU with CPU hogs sends a signal only when the scheduler runs it."""
    walks = max(1, STRESS_WALKS // 5)
    with cpu_load(LOADS[load]):
        result = run(mode, 10, "mixed", threads=1, walks=walks, source="sampler")
    file_result(result)
    total = result["total"]
    assert result["options"]["source"] == "sampler"
    assert total["paced"] == 0, total  # no timer to restart: the sampler paces by answers
    assert total["faults"] == 0 and total["hangs"] == 0, result["examples"][:3]
    assert total["invalid"] == 0, (total["invalid_by_class"], result["examples"][:3])
    assert total["exact"] == total["walked"] >= walks, total
    if mode == "queue":
        assert total["queue_checks"] > 0 and total["queue_miscounts"] == 0, total
