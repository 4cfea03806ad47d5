"""The limit rows of `make bench` and the stress rows measured against them
(bench/bench_limit.py, bench/bench_stress.py) on tiny runs: every group has its limit rows,
every row's baseline is a row of its group, the targets of the issue carry a goal the runner
can judge. Only the shape and the consistency of the numbers, never their speed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from walkfuzz.targets.minivm.live.options import StressOptions
from walkfuzz.targets.minivm.live.runner import run_minivm_stress

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))  # as `python bench/runner.py` has it
import bench_limit  # noqa: E402
import bench_stress  # noqa: E402
import runner  # noqa: E402

TINY_ROUND_NS = 10_000_000


def by_case(rows: list[runner.Row]) -> dict[tuple[str, str], runner.Row]:
    return {(r.group, r.case): r for r in rows}


def test_limit_rows_per_interval_and_source() -> None:
    rows = bench_limit.measure(rounds=1, round_ns=TINY_ROUND_NS)
    cases = by_case(rows)
    assert len(cases) == len(rows)  # no case twice in a group
    assert {r.group for r in rows} == {f"limit-{us}us" for us in bench_limit.INTERVALS_US}
    for us in bench_limit.INTERVALS_US:
        group = f"limit-{us}us"
        assert cases[(group, "requested")].value == pytest.approx(1e6 / us)
        delivered = [r for r in rows if r.group == group and r.case.endswith(": delivered")]
        assert [r.case.split(" (")[0] for r in delivered] == list(bench_limit.KINDS)
        # every source delivers: each sampled phase lasts until every worker has run in it,
        # and its timers (or the sampler) fire from its start (native/testing/live_limit.c)
        assert all(r.baseline == "requested" and r.value > 0 for r in delivered), delivered
    assert all(r.goal is None for r in rows)  # limits are what targets are measured against


def test_stress_rows_stand_beside_their_limit() -> None:
    limit, paced = (bench_limit.run_limit(kind, 10, cpus=1, rounds=1, round_ns=TINY_ROUND_NS)
                    for kind in ("timers", "timers paced"))
    result = run_minivm_stress(StressOptions(mode="queue", interval_ns=10_000, threads=1,
                                             duration_ns=300_000_000, baseline_ns=300_000_000))
    group = "stress-10us"
    rows = [*bench_stress.limit_rows(group, {"timers": limit, "timers paced": paced}),
            *bench_stress.mode_rows(group, "queue", 10, [result], limit, paced)]
    cases = by_case(rows)
    for row in rows:
        assert row.baseline is None or (group, row.baseline) in cases, row
    # at 10 us: delivery >= 80% of the limit and walked >= 80% of tried, judged by the runner
    goals = {r.case: r.goal for r in rows if r.goal is not None}
    assert set(goals) == {"queue: delivered", "queue: walked, all"}
    assert all(runner.verdict(r, cases) in ("met", "MISSED") for r in rows if r.goal)
    queue = result["queue"]
    tried = cases[(group, "queue: tried to enqueue")].value
    assert tried == result["total"]["delivered"]
    assert cases[(group, "queue: walked at safepoint")].value == queue["walked"]
    assert queue["walked"] <= queue["enqueued"]
    assert queue["enqueued"] + queue["dropped_full"] <= tried
    gone = cases[(group, "queue: frame gone by the safepoint")].value
    at_signal = cases[(group, "queue: no Java frame, judged at signal")].value
    assert 0 <= gone <= queue["walked"] and at_signal >= 0
    assert queue["walked"] - gone + at_signal == result["total"]["walked"]
    refused = cases[(group, "queue: refused, the thread at its safepoint")].value
    # every sample the handler tried was enqueued, refused, dropped or judged at the signal
    assert queue["enqueued"] + refused + queue["dropped_full"] + at_signal == tried
    assert cases[(group, "queue: walked, all")].value <= tried
    assert (cases[(group, "queue: wait to safepoint p50")].value
            <= cases[(group, "queue: wait to safepoint p99")].value)
