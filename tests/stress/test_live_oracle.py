"""The live oracle itself: transition windows are tolerated and nothing else is, a walker with
a planted bug is caught with examples, and queue mode's safepoint walks equal the shadow stack
captured at the signal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from walkfuzz.findings import load_findings
from walkfuzz.planted import build, planted_bug
from walkfuzz.stress.live import CLASS_NAMES
from walkfuzz.stress.options import StressOptions
from walkfuzz.stress.reporting import write_stress_report
from walkfuzz.stress.runner import run_minivm_stress

pytestmark = pytest.mark.stress

SECONDS = 1.5
INVALID_CLASSES = set(CLASS_NAMES)


def live(**kw: Any) -> dict[str, Any]:
    defaults: dict[str, Any] = {"threads": 2, "duration_ns": int(SECONDS * 1e9),
                                "baseline_ns": 0}
    return run_minivm_stress(StressOptions(**{**defaults, **kw}))


def test_windows_are_sampled_and_tolerance_stays_inside_them(file_result: Any) -> None:
    result = live(mode="signal", interval_ns=10_000, workload="interpreted")
    file_result(result)
    total = result["total"]
    in_windows = sum(n for kind, n in total["window_samples"].items() if kind != "none")
    assert in_windows > 0, total["window_samples"]       # prologues and epilogues get hit
    assert total["tolerated"] <= in_windows               # tolerance never applies outside
    assert total["exact"] + total["tolerated"] + total["invalid"] == total["walked"]


@pytest.mark.parametrize("bug", ["frame-size-off-by-one", "inlined-scope-order"])
def test_planted_bug_walker_is_caught(bug: str, tmp_path: Path, file_result: Any) -> None:
    walker = build(planted_bug(bug), "plain")
    result = live(mode="signal", interval_ns=100_000, workload="mixed", walker=str(walker))
    file_result(result)
    total = result["total"]
    assert total["invalid"] + total["faults"] > 0, total
    kept = {e["class"] for e in result["examples"]}
    assert kept & (INVALID_CLASSES | {"fault"}), kept
    write_stress_report(tmp_path, result, ["test"], 0.0)
    findings = load_findings(tmp_path)
    assert findings and all(f.details["walker"] == str(walker) for f in findings)
    example = next(e for e in result["examples"] if e["class"] in INVALID_CLASSES)
    if example["class"] == "wrong-result":  # the expected frames, then an error for an end
        assert example["walked"] == example["expected"] and example["end_code"] < 0, example
    else:
        assert example["walked"] != example["expected"], example


def test_queue_walk_at_safepoint_equals_shadow_at_signal(file_result: Any) -> None:
    result = live(mode="queue", interval_ns=100_000, workload="mixed")
    file_result(result)
    total = result["total"]
    assert total["walked"] > 0 and total["faults"] == 0
    assert total["invalid"] == 0, result["examples"][:3]
    assert total["exact"] > total["tolerated"]


def test_one_run_per_process_and_bad_interval_named() -> None:
    from walkfuzz.errors import UserError

    with pytest.raises(UserError, match="500ns"):
        live(mode="signal", interval_ns=500, workload="mixed")
