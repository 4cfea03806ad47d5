"""Stress options: checks that name the bad value, labels, figures, load and walk budgets."""

from __future__ import annotations

import pytest

from walkfuzz.core.duration import format_ns
from walkfuzz.core.errors import UserError
from walkfuzz.targets.minivm.live.options import StressOptions
from walkfuzz.targets.minivm.live.summary import figures, one_line, slowdown, status_line


@pytest.mark.parametrize(("field", "value", "named"), [
    ("mode", "sideways", "sideways"), ("workload", "heavy", "heavy"), ("threads", 99, "99"),
    ("interval_ns", 10, "10ns")])
def test_bad_options_are_named(field: str, value: object, named: str) -> None:
    with pytest.raises(UserError, match=named):
        StressOptions(**{field: value}).check()  # type: ignore[arg-type]


def test_format_and_label() -> None:
    assert format_ns(100_000) == "100us"
    assert StressOptions(mode="thread", interval_ns=10_000).label == "thread-10us-mixed"


def test_figures_rates_and_slowdown() -> None:
    result = {
        "options": {"interval_ns": 100_000},
        "per_worker": [{}, {}],
        "total": {"wall_ns_run": 2_000_000_000, "cpu_ns_run": 1_000_000_000,
                  "requested": 20_000, "delivered": 9_000, "walked": 9_000, "invalid": 9,
                  "exact": 8_901, "frames": 90_000, "iterations_base": 1_000,
                  "cpu_ns_base": 1_000_000_000, "iterations_run": 900},
    }
    f = figures(result)
    assert f["seconds"] == 1.0
    assert f["delivered_per_cpu_second"] == 9_000
    assert f["delivered_fraction"] == pytest.approx(9_000 / 20_000)
    assert f["invalid_rate"] == pytest.approx(0.001)
    assert slowdown(result["total"]) == pytest.approx(0.1)
    assert slowdown({**result["total"], "iterations_base": 0, "cpu_ns_base": 0}) is None


def test_a_baseline_round_after_sampled_rounds_is_not_called_unsampled() -> None:
    status = {"walked": 4_700, "exact": 4_700, "invalid": 0, "faults": 0, "hangs": 0,
              "signatures_stored": 0, "sampling": False}
    line = status_line(status)
    assert "walks 4.7k" in line and "unsampled" not in line
    assert line.endswith("(sampling paused for a baseline round)")
    assert status_line({**status, "walked": 0, "exact": 0}).endswith("(starting)")


def test_queue_mode_names_one_walk_count() -> None:
    total = {"wall_ns_run": 1_000_000_000, "cpu_ns_run": 1_000_000_000, "requested": 40_000,
             "delivered": 33_000, "walked": 29_700, "exact": 29_700, "invalid": 0, "faults": 0,
             "hangs": 0, "frames": 0, "iterations_base": 0, "cpu_ns_base": 0,
             "iterations_run": 0, "queue_gone": 2_592}
    queue = {"enqueued": 32_180, "walked": 32_180, "dropped_full": 0, "walked_fraction": 1.0,
             "wait_ns": {}}
    line = one_line({"options": {"interval_ns": 100_000}, "per_worker": [{}], "total": total,
                     "latency": {}, "queue": queue})
    # 29 588 walked at a safepoint and 112 at a failed Enqueue are the run's 29 700 walks
    assert line.startswith("29700 walks (")
    assert ("queue: enqueued 32180, taken at a safepoint 32180 (100.0%): walked 29588, "
            "frame gone 2592, walked at a failed Enqueue 112; dropped full 0" in line)


def test_load_starts_hogs_for_the_block_and_ends_them() -> None:
    from walkfuzz.engine.load import cpu_load

    with cpu_load(2) as hogs:
        assert len(hogs) == 2 and all(h.poll() is None for h in hogs)
    assert all(h.returncode is not None for h in hogs)


@pytest.mark.parametrize("argv, named", [
    (["stress", "--load", "-1"], "load -1"), (["stress", "--load", "65"], "load 65"),
    (["stress", "--walks", "-5"], "walks -5"),
    (["stress", "--target", "libunwind", "--walks", "9"], "--walks")])
def test_bad_load_and_walks_are_one_line(argv: list[str], named: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from walkfuzz import cli

    status = cli.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and named in err[0], err
