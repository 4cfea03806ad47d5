"""Run reports (walkfuzz.report.document) for the native target's fuzz and stress runs: the
report names the unwinder as its walker, and its findings' target (native). A fuzz
run's reproducers are checked in fresh processes first (walkfuzz.targets.native.fresh_replay)."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from pathlib import Path

from walkfuzz.engine.run_report import write_run_report
from walkfuzz.findings.hits import RunClock
from walkfuzz.findings.store import FindingSink, stored_findings
from walkfuzz.report.document import (
    CounterValue,
    Histogram,
    RunMeta,
    RunReport,
    group_findings,
)
from walkfuzz.targets.native import TARGET
from walkfuzz.targets.native.fresh_replay import check_reproducers
from walkfuzz.targets.native.stress_run import StressResult, percentile_ns
from walkfuzz.targets.native.supervisor import FuzzResult
from walkfuzz.targets.native.unwinders import UNWINDERS

RUN_TYPE = "libunwind"


def report_printed(paths: Mapping[str, Path], interrupted: bool, kept: str) -> bool:
    """A run's last lines: where its report is, and for an interrupted run (on stderr) that the
    report has `kept` until then. Whether the run was interrupted (its status: INTERRUPTED)."""
    print(f"report: {paths['html']}")
    if interrupted:
        print(f"interrupted: the report has {kept} until then", file=sys.stderr)
    return interrupted


def _meta(command: list[str], unwinder: str, mode: str, started_at: float,
          status: str) -> RunMeta:
    """A run of one unwinder ends now: the unwinder is the report's walker, and its target the
    findings' target."""
    return RunMeta(run_type=RUN_TYPE, command=command, target=TARGET, mode=mode,
                   started_at=started_at, ended_at=time.time(), walker=unwinder, status=status)


def _log2_histogram(counts: list[int]) -> Histogram:
    return Histogram(unit="ns", edges=[float(2**b) for b in range(len(counts) + 1)],
                     counts=list(counts))


def fuzz_report(out_dir: Path, result: FuzzResult, command: list[str],
                started_at: float) -> dict[str, Path]:
    c = result.counters
    walks, steps = int(c["walks"]), int(c["unw_steps"])
    counters: dict[str, CounterValue] = {
        **{k: v for k, v in c.items() if not isinstance(v, dict)},
        **{f"stop.{k}": v for k, v in c["stops"].items()},
        **{f"invalid.{k}": v for k, v in c["invalid_kinds"].items()},
        "walks_per_second": round(result.walks_per_second, 1),
        "fault_rate": round(int(c["faults"]) / walks, 6) if walks else 0.0,
        "hang_rate": round(int(c["hangs"]) / walks, 6) if walks else 0.0,
        "invalid_rate_unperturbed": (round(int(c["invalid"]) / int(c["unperturbed"]), 6)
                                     if c["unperturbed"] else 0.0),
        "ns_per_unw_step": round(int(c["walk_ns"]) / steps, 1) if steps else 0.0,
        "jobs": result.jobs,
    }
    groups = group_findings(out_dir, result.findings, run_command=command)
    if not result.interrupted:  # Ctrl-C asks for the report now, not for replays first
        check_reproducers(groups, result.unwinder)
    doc = RunReport(
        meta=_meta(command, result.unwinder, "perturb", started_at,
                   "interrupted" if result.interrupted else "completed"),
        series={k: list(v) for k, v in result.series.items()},
        counters=counters, findings=groups,
        notes=[f"{result.unwinder} ({UNWINDERS[result.unwinder].library}): perturbed contexts "
               f"walked with {UNWINDERS[result.unwinder].init} under the guard; unperturbed ones "
               "checked against the known chain"],
    )
    return write_run_report(out_dir, doc)


def stress_report(out_dir: Path, result: StressResult, command: list[str],
                  clock: RunClock) -> dict[str, Path]:
    """Save the kept examples and every invalid sample's hits (on `clock`, the run's: it
    started when the run did); the reproducer of a sample is the run's command."""
    c = result.counters
    cfg = result.config
    elapsed_s = c.get("elapsed_ns", 0) / 1e9
    cpu_s = c.get("cpu_ns", 0) / 1e9
    counters: dict[str, CounterValue] = {
        **{k: v for k, v in c.items() if not isinstance(v, dict)},
        **{f"invalid.{k}": v for k, v in c.get("invalid_kinds", {}).items()},
        **{f"stop.{k}": v for k, v in c.get("stops", {}).items()},
        "threads": cfg.threads, "interval_us": cfg.interval_us, "mode": cfg.mode,
        "match_rate": round(result.match_rate, 6),
        "invalid_rate": round(result.invalid_rate, 6),
        "samples_per_second": round(c.get("walked", 0) / elapsed_s, 1) if elapsed_s else 0.0,
        "samples_per_cpu_second": round(c.get("walked", 0) / cpu_s, 1) if cpu_s else 0.0,
        "interval_p50_ns_le": percentile_ns(result.interval_hist, 0.5),
        "interval_p99_ns_le": percentile_ns(result.interval_hist, 0.99),
        "walk_p50_ns_le": percentile_ns(result.latency_hist, 0.5),
        "walk_p99_ns_le": percentile_ns(result.latency_hist, 0.99),
        "workload_slowdown": ("no baseline" if result.slowdown is None
                              else round(result.slowdown, 4)),
    }
    if result.died is not None:
        counters["child_exit_status"] = result.died
    sink = FindingSink(out_dir, clock=clock)
    totals = {signature: sink.hits.add(signature, hits)
              for signature, hits in result.signature_hits(clock).items()}
    found = result.all_findings()
    for finding in found:
        sink.store(finding, totals.get(finding.signature))
    started_at = clock.at(clock.origin)[1]
    doc = RunReport(
        meta=_meta(command, cfg.unwinder, "stress", started_at,
                   "interrupted" if result.interrupted
                   else "failed" if result.died is not None or not result.walked
                   else "completed"),
        counters=counters,
        histograms={"interval_ns": _log2_histogram(result.interval_hist),
                    "walk_latency_ns": _log2_histogram(result.latency_hist)} if result.walked
        else {},
        findings=group_findings(out_dir, stored_findings(out_dir, found), run_command=command),
        notes=[f"samples walked by {cfg.unwinder} from the handler ({cfg.mode}); compared with "
               "the shadow stack, one work function on top tolerated in prologue/epilogue "
               "windows"],
    )
    return write_run_report(out_dir, doc)
