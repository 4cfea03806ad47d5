"""One report for a whole stress test session (tests/stress): the results of every test as
one run report, counters per test and summed, findings of all of them.

A session spread over several hosts (pytest-xdist `--tx` gateways) gets one such report per
host, under `hosts/<key>/`, and the sum of them (walkfuzz.report.merge) in the report
folder itself; a session on one host writes its report there as it is. A result carries the
findings it stored (`stored`, from `stored_findings`): they were written on the host that ran
the test, and are written again into the host's report folder here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from walkfuzz.engine.run_report import write_run_report
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.store import save_finding
from walkfuzz.report.document import RunMeta, RunReport, group_findings, host_info, host_label
from walkfuzz.report.merge import merge_reports
from walkfuzz.targets.minivm.live.reporting import findings_of
from walkfuzz.targets.minivm.live.signature import HARNESS, TARGET
from walkfuzz.targets.minivm.live.summary import figures

SUMMED = ("requested", "delivered", "walked", "exact", "invalid", "faults", "hangs")
COMMAND = ["pytest", "-m", "stress"]
HOSTS_DIR = "hosts"


def stored_findings(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The findings a result stored, as data another host can save again."""
    walker = result["options"]["walker"] or "reference"
    return [{"finding": f.to_json(), "data": f.data.hex()} for f in findings_of(result, walker)]


def _findings(result: dict[str, Any]) -> list[Finding]:
    return [Finding.from_json(s["finding"], bytes.fromhex(s["data"]))
            for s in result.get("stored", [])]


def session_report(out_dir: Path, results: list[dict[str, Any]], started: float,
                   host: dict[str, str | int] | None = None) -> RunReport:
    """The session's report of `results` (run on `host`, default this one); their findings
    saved under out_dir."""
    counters: dict[str, Any] = {k: sum(r["total"][k] for r in results) for k in SUMMED}
    counters["tests"] = len(results)
    by_class: dict[str, int] = {}
    for r in results:
        for cls, n in r["total"]["invalid_by_class"].items():
            by_class[cls] = by_class.get(cls, 0) + n
    counters["invalid_by_class"] = by_class
    found = []
    for r in results:
        f = figures(r)
        counters[r["test"]] = {"walked": r["total"]["walked"], "invalid": r["total"]["invalid"],
                               "faults": r["total"]["faults"],
                               "invalid_rate": round(f["invalid_rate"], 6),
                               "delivered_fraction": round(f["delivered_fraction"], 4),
                               "walk_p99_ns": float(r["latency"].get("p99", 0))}
        found += _findings(r)
    for finding in found:
        save_finding(out_dir, finding)
    modes = sorted({r["options"]["mode"] for r in results})
    meta = RunMeta(run_type="stress", command=COMMAND, target=TARGET,
                   mode="+".join(modes) or HARNESS, started_at=started, ended_at=time.time(),
                   host=host or host_info())
    return RunReport(meta=meta, counters=counters, findings=group_findings(out_dir, found),
                     notes=[f"{len(results)} stress tests"])


def write_session_reports(out_dir: Path, hosts: list[tuple[dict[str, str | int],
                                                           list[dict[str, Any]]]],
                          started: float) -> dict[str, Path]:
    """The session's report of the results each host (`meta.host` of its report) filed: one
    host's in out_dir; several hosts' each under hosts/KEY and their sum in out_dir."""
    by_key: dict[str, tuple[dict[str, str | int], list[dict[str, Any]]]] = {}
    for host, results in hosts:
        mine = by_key.setdefault(host_label(host), (dict(host), []))
        mine[1].extend(results)
        gateways = str(mine[0].get("gateway", "")).split(", ")
        if host.get("gateway") and str(host["gateway"]) not in gateways:
            mine[0]["gateway"] = ", ".join(filter(None, [*gateways, str(host["gateway"])]))
    if len(by_key) == 1:
        host, results = next(iter(by_key.values()))
        return write_run_report(out_dir, session_report(out_dir, results, started, host))
    reports = []
    for key, (host, results) in sorted(by_key.items()):
        host_dir = out_dir / HOSTS_DIR / key
        report = session_report(host_dir, results, started, host)
        write_run_report(host_dir, report)
        reports.append(report)
    merged = merge_reports(reports, COMMAND, notes=[
        f"{key}: {len(results)} stress tests, report {HOSTS_DIR}/{key}/report.html"
        for key, (_, results) in sorted(by_key.items())])
    return write_run_report(out_dir, merged)
