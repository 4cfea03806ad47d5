"""A live stress result as findings and a run report (walkfuzz.findings, walkfuzz.report).

Findings: every kept example of a fault, a hang or an invalid trace, with its walked and
expected frames in `details` and no input bytes (a live sample cannot be replayed; the seed,
mode and workload in `details` rerun the same workload). The location of an invalid trace is
the oracle's class (`check:live-<class>`), of a fault the symbolized faulting pc; the shape is
the frame types walked up to the first difference.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from walkfuzz.findings import Finding, FindingKind, save_finding
from walkfuzz.report import Histogram, RunMeta, RunReport, group_findings, write_report
from walkfuzz.stress.summary import figures

TARGET = "minivm"
HARNESS = "stress"


def _kind(example: dict[str, Any]) -> FindingKind:
    cls = example["class"]
    if cls == "fault":
        return "crash"
    if cls == "hang":
        return "hang"
    return "contract" if cls == "contract" else "invalid-trace"


def _shape(example: dict[str, Any]) -> tuple[str, ...]:
    walked = example["walked"]
    upto = example["first_diff"] if example["first_diff"] >= 0 else len(walked)
    return tuple(f["type"] for f in reversed(walked[: upto + 1]))  # outermost first, like a walk


def _queue_miscount(result: dict[str, Any], walker: str) -> Finding:
    """GetQueueSizeInfo disagreed with the worker's count of its own queue calls: a contract
    finding of the walker's queue (one per run; the counts are in details)."""
    total, options = result["total"], result["options"]
    details = {"walker": walker, "mode": options["mode"], "workload": options["workload"],
               "seed": options["seed"], "interval_ns": options["interval_ns"],
               **{k: total[k] for k in ("queue_checks", "queue_miscounts", "queue_resizes")}}
    return Finding(kind="contract", target=TARGET, harness=HARNESS,
                   location="check:live-queue-accounting", shape=(), data=b"", details=details)


def findings_of(result: dict[str, Any], walker: str) -> list[Finding]:
    options = result["options"]
    found = [_queue_miscount(result, walker)] if result["total"].get("queue_miscounts") else []
    for example in result["examples"]:
        kind = _kind(example)
        location = (example["fault_location"] if kind in ("crash", "hang")
                    else f"check:live-{example['class']}")
        details = {**example, "walker": walker, "mode": options["mode"],
                   "workload": options["workload"], "seed": options["seed"],
                   "interval_ns": options["interval_ns"]}
        found.append(Finding(kind=kind, target=TARGET, harness=HARNESS, location=location,
                             shape=_shape(example), data=b"", details=details))
    return found


def counters_of(result: dict[str, Any]) -> dict[str, Any]:
    total = result["total"]
    counters: dict[str, Any] = {
        k: total[k] for k in ("requested", "delivered", "walked", "exact", "invalid",
                              "faults", "hangs", "frames", "safepoints",
                              "invalid_in_window", "queue_rejected", "queue_gone",
                              "queue_resizes", "queue_checks", "queue_miscounts")}
    counters.update({k: round(v, 6) for k, v in figures(result).items()})
    counters["invalid_by_class"] = total["invalid_by_class"]
    counters["window_samples"] = total["window_samples"]
    counters["end_codes"] = total["end_codes"]
    counters["interval_ns"] = {k: float(v) for k, v in result["interval"].items()}
    counters["walk_latency_ns"] = {k: float(v) for k, v in result["latency"].items()}
    counters["vm"] = result["vm"]
    return counters


def build_report(out_dir: Path, result: dict[str, Any], command: list[str], started: float,
                 walker: str, found: list[Finding]) -> RunReport:
    options = result["options"]
    meta = RunMeta(run_type="stress", command=command, target=TARGET, mode=options["mode"],
                   started_at=started, ended_at=time.time(), walker=walker)
    notes = [f"workload {options['workload']}, {len(result['methods'])} methods, seed "
             f"{options['seed']}, {len(result['per_worker'])} threads, interval "
             f"{options['interval_ns']} ns",
             "oracle: every walk must equal the shadow stack, moved by one step for a sample "
             "in a transition window (docs/stress.md); no tolerance"]
    return RunReport(
        meta=meta, counters=counters_of(result),
        histograms={name: Histogram(**result[f"{name}_histogram"])
                    for name in ("interval", "latency")},
        findings=group_findings(out_dir, found), notes=notes)


def write_stress_report(out_dir: Path, result: dict[str, Any], command: list[str],
                        started: float) -> dict[str, Path]:
    """Save the findings of `result` under out_dir and write report.{json,html,md}."""
    walker = result["options"]["walker"] or "reference"
    found = findings_of(result, walker)
    for finding in found:
        save_finding(out_dir, finding)
    return write_report(out_dir, build_report(out_dir, result, command, started, walker, found))
