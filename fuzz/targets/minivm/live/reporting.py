"""A live stress result as findings and a run report (walkfuzz.findings.finding,
walkfuzz.report.document).

Findings: every failed sample the run captured and saved while it ran
(walkfuzz.targets.minivm.live.drain)
is a case file with the live oracle's expected trace (section 11), so `walkfuzz replay FILE`
reproduces it; its description has the walked and the expected frames. The location of an
invalid trace is the oracle's class (`check:live-<class>`), of a fault the symbolized faulting
pc; the shape is the frame kinds walked up to the first difference
(walkfuzz.targets.minivm.live.signature).
Each signature's group in the report counts every failed sample of it (not only the stored
ones) and carries when the first and the last was sampled (`details.hits`). A queue-mode run
whose GetQueueSizeInfo disagreed with the worker's own count is one contract finding of the
run (`check:live-queue-accounting`, no input).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from walkfuzz.engine.run_report import write_run_report
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.hits import Hits
from walkfuzz.findings.store import save_finding
from walkfuzz.report.document import (
    FindingGroup,
    Histogram,
    RunMeta,
    RunReport,
    group_findings,
)
from walkfuzz.targets.minivm.live.hits import HITS
from walkfuzz.targets.minivm.live.signature import HARNESS, TARGET
from walkfuzz.targets.minivm.live.summary import figures, slowdown


def source_text(options: dict[str, Any]) -> str:
    """Where the run's signals came from, in words."""
    if options["mode"] == "thread":
        return "the sampler thread, which walks"
    if options.get("source", "timers") == "sampler":
        return "a sampler thread (--source sampler)"
    return "a timer per thread"


def _stored(example: dict[str, Any]) -> Finding | None:
    """The finding the run saved for `example`, read back (None: it saved none)."""
    path = example.get("path")
    if not path:
        return None
    data = Path(path).read_bytes()
    doc = json.loads(Path(path).with_suffix(".json").read_text())
    return Finding.from_json(doc, data)


def findings_of(result: dict[str, Any], walker: str) -> list[Finding]:
    """The findings the run stored (one per stored input), and the run's queue accounting
    finding if GetQueueSizeInfo disagreed (saved by write_stress_report)."""
    found = [_queue_miscount(result, walker)] if result["total"].get("queue_miscounts") else []
    return found + [f for f in map(_stored, result["examples"]) if f is not None]


def _queue_miscount(result: dict[str, Any], walker: str) -> Finding:
    """GetQueueSizeInfo disagreed with the worker's count of its own queue calls: a contract
    finding of the walker's queue (one per run; the counts are in details)."""
    total, options = result["total"], result["options"]
    details = {"walker": walker, "mode": options["mode"], "workload": options["workload"],
               "seed": options["seed"], "interval_ns": options["interval_ns"],
               **{k: total[k] for k in ("queue_checks", "queue_miscounts", "queue_resizes")},
               "first_miscount": total.get("queue_first_miscount")}
    return Finding(kind="contract", target=TARGET, harness=HARNESS,
                   location="check:live-queue-accounting", shape=(), data=b"", details=details)


def with_hits(groups: list[FindingGroup], result: dict[str, Any]) -> list[FindingGroup]:
    """Each group counts every failed sample of its signature and says when the first and the
    last was sampled; signatures no input was stored for get a group of their own."""
    signatures: dict[str, dict[str, Any]] = result.get("signatures", {})
    for group in groups:
        if group.signature in signatures:
            group.details[HITS] = signatures[group.signature][HITS]
            group.take(Hits.from_json(signatures[group.signature][HITS]))
    known = {g.signature for g in groups}
    options = result["options"]
    source = options.get("source", "timers")
    command = " ".join(["walkfuzz", "stress", "--mode", options["mode"],
                        *([] if source == "timers" else ["--source", source]),
                        "--workload", options["workload"], "--seed", str(options["seed"])])
    # why a captured sample was not saved as a case (the drain's case status), per signature
    unsaved = {e["signature"]: e["case"] for e in result["examples"]
               if e.get("case", "ok") != "ok" and "signature" in e}
    for signature, doc in signatures.items():
        if signature not in known:
            why = unsaved.get(signature, "see capture_dropped")
            group = FindingGroup(
                signature=signature, kind=doc["kind"], target=TARGET, harness=HARNESS,
                location=doc["location"], shape=doc["shape"], count=doc[HITS]["count"],
                examples=[], reproducer=f"{command} (no input stored: {why})",
                details={HITS: doc[HITS]})
            group.take(Hits.from_json(doc[HITS]))
            groups.append(group)
    return groups


def counters_of(result: dict[str, Any]) -> dict[str, Any]:
    total = result["total"]
    counters: dict[str, Any] = {
        k: total[k] for k in ("requested", "delivered", "walked", "exact", "invalid",
                              "faults", "hangs", "frames", "safepoints",
                              "invalid_in_window", "queue_rejected", "queue_gone",
                              "queue_resizes", "queue_checks", "queue_miscounts")}
    counters.update({k: round(v, 6) for k, v in figures(result).items()})
    lost = slowdown(total)
    counters["slowdown"] = "no baseline" if lost is None else round(lost, 6)
    counters["invalid_by_class"] = total["invalid_by_class"]
    counters["window_samples"] = total["window_samples"]
    counters["end_codes"] = total["end_codes"]
    counters["interval_ns"] = {k: float(v) for k, v in result["interval"].items()}
    counters["walk_latency_ns"] = {k: float(v) for k, v in result["latency"].items()}
    counters["capture"] = {k: round(float(v), 1) for k, v in result["capture"].items()}
    if "queue" in result:  # queue mode: its queue's own figures
        queue = result["queue"]
        counters["queue"] = {k: v for k, v in queue.items() if k != "wait_ns"}
        counters["queue_wait_ns"] = {k: float(v) for k, v in queue["wait_ns"].items()}
    counters["stopped_early"] = bool(result.get("stopped_early"))
    counters["vm"] = result["vm"]
    return counters


def run_status(result: dict[str, Any]) -> str:
    """The report's status: a run that walked no sample did no work, and failed."""
    if result.get("interrupted"):
        return "interrupted"
    return "completed" if result["total"]["walked"] else "failed"


def build_report(out_dir: Path, result: dict[str, Any], command: list[str], started: float,
                 walker: str, found: list[Finding]) -> RunReport:
    options = result["options"]
    meta = RunMeta(run_type="stress", command=command, target=TARGET, mode=options["mode"],
                   started_at=started, ended_at=time.time(), walker=walker,
                   status=run_status(result))
    notes = [f"workload {options['workload']}, {len(result['methods'])} methods, seed "
             f"{options['seed']}, {len(result['per_worker'])} threads, interval "
             f"{options['interval_ns']} ns, signals from {source_text(options)}",
             "oracle: every walk must equal the shadow stack, moved by one step for a sample "
             "in a transition window (docs/stress.md); no tolerance"]
    if result.get("stopped_early"):
        notes.append("stopped at the first finding (--stop-on-first)")
    return RunReport(
        meta=meta, counters=counters_of(result),
        histograms={name: Histogram(**result[f"{name}_histogram"])
                    for name in ("interval", "latency")},
        findings=with_hits(group_findings(out_dir, found), result), notes=notes)


def write_stress_report(out_dir: Path, result: dict[str, Any], command: list[str],
                        started: float) -> dict[str, Path]:
    """Write report.{json,html,md} of `result` into out_dir; its findings are the ones the run
    saved there while it ran."""
    walker = result["options"]["walker"] or "reference"
    found = findings_of(result, walker)
    for finding in found:
        if not finding.data:   # the run's own finding (queue accounting): no sample to store
            save_finding(out_dir, finding)
    return write_run_report(out_dir, build_report(out_dir, result, command, started, walker, found))
