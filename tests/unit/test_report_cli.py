"""Reports as a user gets them: a short `walkfuzz fuzz` campaign (the toy harness) and a short
`walkfuzz stress` run through the CLI, then what report.md, report.json and the figures say:
every counter a Markdown table, the headline figures, exec/s without the stop's drop, the
delivered fraction, the no-baseline wording, file modes."""

from __future__ import annotations

import itertools
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.opt_outs import skip_if_opted_out
from walkfuzz.report.plots import fit_limits, histogram_figure, line_figure
from walkfuzz.targets.native.extension import load as load_unwind

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "tests" / "fixtures" / "toy_harness.py"
WALKFUZZ = [sys.executable, "-m", "walkfuzz.cli"]
UMASK = 0o022


def walkfuzz(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALKFUZZ, *args], capture_output=True, text=True, timeout=180,
                          cwd=ROOT, env={**os.environ, **(env or {})}, umask=UMASK)


def md_rows(md: str) -> dict[str, str]:
    """Every two-column table row of report.md, name -> value."""
    return {m[1]: m[2] for m in re.finditer(r"^\| ([^|]+?) \| ([^|]*?) \|$", md, re.M)}


def assert_no_dicts(md: str) -> None:
    assert not re.search(r"\{'|\{\"|': ", md), md  # no Python dict or JSON object printed


def assert_group_readable(out: Path) -> None:
    written = [p for p in out.rglob("*") if p.is_file() and p.name != ".lock"]
    assert written
    modes = {p.relative_to(out).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in written}
    assert set(modes.values()) == {0o666 & ~UMASK}, modes


def test_fuzz_report_tables_figures_and_plots(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = walkfuzz("fuzz", "--harness", str(TOY), "--time", "3", "--out", str(out),
                   env={"WALKFUZZ_TOY_DEATHS": "0"})
    assert run.returncode == 1, run.stderr  # the toy's contract finding
    report = json.loads((out / "report.json").read_text())
    md = (out / "report.md").read_text()
    rows = md_rows(md)
    assert_no_dicts(md)
    execs = report["series"]["execs"]
    assert rows["total execs"] == f"{execs[-1][1]:,.0f}"
    assert rows["restarts"] == str(report["counters"]["restarts"])  # a counter, a table row
    assert rows["walker"] == "reference"
    assert rows["distinct findings"] == str(len(report["findings"]))
    first = min(g["first_seen_s"] for g in report["findings"])
    assert rows["first finding"] == f"+{first:.1f} s"
    assert rows["coverage, last growth"].startswith("by +")
    assert "not measured" in rows["stability"]
    # exec/s leaves out the samples in which workers stopped (they ended in a drop to 0)
    samples = [json.loads(line) for line in (out / "stats.jsonl").read_text().splitlines()]
    partial = {s["t"] for s in samples if s["partial"]}
    assert partial and samples[-1]["partial"]
    rates = report["series"]["exec_per_sec"]
    assert rates and not partial & {t for t, _ in rates}
    # the coverage plot's y range is the data's, not forced to 0
    coverage = report["series"]["coverage"]
    ax = line_figure("coverage", [tuple(p) for p in coverage], "coverage (blocks/edges)",
                     integer=True).axes[0]
    low, high = ax.get_ylim()
    values = [v for _, v in coverage]
    assert (low, high) == fit_limits(values) and low <= min(values) and high >= max(values)
    assert low > 0 or min(values) == 0  # from 0 only when the data is
    assert ax.get_ylabel() and ax.get_xlabel()
    assert (out / "report.html").read_text().count("<svg") == len(report["series"])
    assert_group_readable(out)


def test_stress_report_delivered_fraction_and_no_baseline(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = walkfuzz("stress", "--duration", "1s", "--baseline", "0", "--out", str(out))
    assert run.returncode in (0, 1), run.stderr
    assert "slowdown n/a (no baseline)" in run.stdout
    report = json.loads((out / "report.json").read_text())
    counters = report["counters"]
    assert counters["requested"] > 0
    fraction = counters["delivered"] / counters["requested"]
    assert counters["delivered_fraction"] == pytest.approx(fraction, abs=1e-6)
    assert counters["delivered_fraction"] <= 1.0
    assert counters["slowdown"] == "no baseline"
    assert "queue" not in counters and "queue_wait_ns" not in counters  # queue mode's only
    md = (out / "report.md").read_text()
    rows = md_rows(md)
    assert_no_dicts(md)
    assert rows["slowdown"] == "no baseline"
    assert rows["delivered"] == f"{counters['delivered']:,}"
    assert "#### end_codes" in md and "#### walk_latency_ns" in md
    for code, count in counters["end_codes"].items():
        assert rows[code] == f"{count:,}"
    latency = report["histograms"]["latency"]
    ax = histogram_figure("latency", latency["edges"], latency["counts"], "ns").axes[0]
    widths = [b.get_width() for b in ax.patches]
    edges = latency["edges"]
    assert widths == pytest.approx([(b - a) * 1e-9 for a, b in itertools.pairwise(edges)])
    assert ax.get_xscale() == "symlog"
    assert_group_readable(out)


def test_thread_mode_requests_every_tick_of_its_interval(tmp_path: Path) -> None:
    # the sampler skips a worker that has not answered its last signal: a skipped tick is a
    # sample requested and not delivered, so at 10 us the fraction is no 100% by construction
    out = tmp_path / "out"
    run = walkfuzz("stress", "--mode", "thread", "--interval", "10us", "--threads", "2",
                   "--duration", "1s", "--baseline", "0", "--out", str(out))
    assert run.returncode in (0, 1), run.stderr
    counters = json.loads((out / "report.json").read_text())["counters"]
    ticks = 2 * counters["seconds"] * 1e9 / 10_000  # per worker: its sampled time / interval
    assert counters["requested"] == pytest.approx(ticks, abs=2 + 1e-5 * ticks)
    assert counters["delivered"] <= counters["requested"]


def test_stress_queue_report_has_the_queue_figures(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = walkfuzz("stress", "--mode", "queue", "--duration", "5s", "--walks", "300",
                   "--baseline", "0", "--out", str(out))
    assert run.returncode in (0, 1), run.stderr
    counters = json.loads((out / "report.json").read_text())["counters"]
    queue, wait = counters["queue"], counters["queue_wait_ns"]
    assert queue["walked"] > 0 and queue["walked"] <= queue["enqueued"]
    assert queue["enqueued"] + queue["dropped_full"] <= counters["delivered"]
    assert queue["dropped_full"] <= counters["queue_rejected"]
    assert queue["walked_fraction"] == pytest.approx(queue["walked"] / queue["enqueued"])
    assert wait["count"] == queue["walked"]  # one wait per element walked at a safepoint
    assert wait["min"] <= wait["p50"] <= wait["p99"] <= wait["max"]
    gone = counters["queue_gone"]
    assert (f"queue: enqueued {queue['enqueued']}, taken at a safepoint {queue['walked']} "
            f"({100 * queue['walked_fraction']:.1f}%): walked {queue['walked'] - gone}, "
            f"frame gone {gone}" in run.stdout)
    assert "stress queue-" in run.stdout and f": {counters['walked']} walks (" in run.stdout
    md = (out / "report.md").read_text()
    rows = md_rows(md)
    assert_no_dicts(md)
    assert rows["enqueued"] == f"{queue['enqueued']:,}"
    assert rows["dropped_full"] == f"{queue['dropped_full']:,}"
    assert "#### queue_wait_ns" in md


@pytest.mark.parametrize("mode", ["signal", "queue"])
def test_stress_from_a_sampler_thread_walks_and_says_where_its_signals_came_from(
        tmp_path: Path, mode: str) -> None:
    out = tmp_path / "out"
    run = walkfuzz("stress", "--mode", mode, "--source", "sampler", "--threads", "1",
                   "--duration", "20s", "--walks", "300", "--baseline", "0", "--out", str(out))
    assert run.returncode == 0, run.stdout + run.stderr  # the reference walker: no finding
    doc = json.loads((out / "report.json").read_text())
    counters = doc["counters"]
    assert counters["walked"] >= 300 and counters["exact"] == counters["walked"], counters
    assert f"stress {mode}-sampler-100us-mixed:" in run.stdout
    assert "signals from a sampler thread (--source sampler)" in (out / "report.md").read_text()


def test_a_signal_source_for_thread_mode_is_refused_in_one_line(tmp_path: Path) -> None:
    run = walkfuzz("stress", "--mode", "thread", "--source", "sampler", "--out",
                   str(tmp_path / "out"))
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.strip().splitlines() == [
        "walkfuzz stress: error: --source sampler is for --mode signal or queue: thread mode "
        "has its own sampler thread"], run.stderr


def test_stress_with_a_baseline_gives_its_slowdown(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = walkfuzz("stress", "--duration", "1s", "--baseline", "1s", "--out", str(out))
    assert run.returncode in (0, 1), run.stderr
    slowdown = json.loads((out / "report.json").read_text())["counters"]["slowdown"]
    assert isinstance(slowdown, float)
    assert f"slowdown {100 * slowdown:.1f}%" in run.stdout


def test_libunwind_stress_report_names_libunwind_and_no_baseline(tmp_path: Path) -> None:
    skip_if_opted_out("libunwind")
    load_unwind()  # not built: an error naming the module, never a skip
    out = tmp_path / "out"
    run = walkfuzz("stress", "--target", "libunwind", "--duration", "1s", "--baseline", "0",
                   "--out", str(out))
    assert run.returncode in (0, 1), run.stderr
    assert "slowdown n/a (no baseline)" in run.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["meta"]["walker"] == "libunwind"
    assert report["counters"]["workload_slowdown"] == "no baseline"
    md = (out / "report.md").read_text()
    rows = md_rows(md)
    assert rows["walker"] == "libunwind" and rows["workload_slowdown"] == "no baseline"
    assert_no_dicts(md)
    assert_group_readable(out)
