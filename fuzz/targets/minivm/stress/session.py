"""One report for a whole stress test session (tests/stress): the results of every test as
one run report, counters per test and summed, findings of all of them."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from walkfuzz.findings.finding import save_finding
from walkfuzz.report.document import RunMeta, RunReport, group_findings
from walkfuzz.report.files import write_report
from walkfuzz.targets.minivm.stress.reporting import findings_of
from walkfuzz.targets.minivm.stress.signature import HARNESS, TARGET
from walkfuzz.targets.minivm.stress.summary import figures

SUMMED = ("walked", "exact", "invalid", "faults", "hangs")


def write_session_report(out_dir: Path, results: list[dict[str, Any]],
                         started: float) -> dict[str, Path]:
    counters: dict[str, Any] = {k: sum(r["total"][k] for r in results) for k in SUMMED}
    counters["tests"] = len(results)
    found = []
    for r in results:
        f = figures(r)
        counters[r["test"]] = {"walked": r["total"]["walked"], "invalid": r["total"]["invalid"],
                               "faults": r["total"]["faults"],
                               "invalid_rate": round(f["invalid_rate"], 6),
                               "delivered_fraction": round(f["delivered_fraction"], 4),
                               "walk_p99_ns": float(r["latency"].get("p99", 0))}
        found += findings_of(r, r["options"]["walker"] or "reference")
    for finding in found:
        save_finding(out_dir, finding)
    modes = sorted({r["options"]["mode"] for r in results})
    meta = RunMeta(run_type="stress", command=["pytest", "-m", "stress"], target=TARGET,
                   mode="+".join(modes) or HARNESS, started_at=started, ended_at=time.time())
    report = RunReport(meta=meta, counters=counters, findings=group_findings(out_dir, found),
                       notes=[f"{len(results)} stress tests"])
    return write_report(out_dir, report)
