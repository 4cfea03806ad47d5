"""The run report: one JSON document per run (schema: reports/run.schema.json), the source
of truth that the HTML page (report_html) and the Markdown summary (report_md) are rendered from.

Every run type writes through it: fuzz campaigns, stress jobs, the hotspot and libunwind runs.
What differs between them goes into free-form `counters` and named `series`/`histograms`;
what they share (metadata, findings grouped by signature with a reproducer) has a fixed shape.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import socket
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import cast

from walkfuzz import __version__
from walkfuzz.findings import Finding, finding_dir, write_atomic

SCHEMA_VERSION = 1
REPORT_STEM = "report"
# Series a fuzz campaign records; other run types may add their own names.
STANDARD_SERIES = ("coverage", "features", "exec_per_sec", "corpus", "findings", "execs")

Point = tuple[float, float]
CounterValue = int | float | str | bool | dict[str, int | float | str]


def host_info() -> dict[str, str | int]:
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "cpus": os.cpu_count() or 1,
        "python": platform.python_version(),
    }


@dataclass
class RunMeta:
    """What was run, where and when (times are Unix seconds)."""

    run_type: str  # "fuzz", "stress", "hotspot", "libunwind", ...
    command: list[str]
    target: str
    mode: str  # the harness of a campaign, the sampling mode of a stress run
    started_at: float
    ended_at: float
    walker: str = "reference"
    status: str = "completed"  # "completed", "interrupted", "failed"
    host: dict[str, str | int] = field(default_factory=host_info)
    version: str = __version__

    @property
    def duration(self) -> float:
        return max(0.0, self.ended_at - self.started_at)


@dataclass
class Histogram:
    """Counts per bucket; bucket i is [edges[i], edges[i+1])."""

    unit: str
    edges: list[float]
    counts: list[int]

    def __post_init__(self) -> None:
        if len(self.edges) != len(self.counts) + 1:
            raise ValueError(
                f"histogram has {len(self.counts)} counts but {len(self.edges)} edges "
                f"(want counts + 1)"
            )


@dataclass
class FindingGroup:
    """All findings of one signature: how many, one description, where the inputs are."""

    signature: str
    kind: str
    target: str
    harness: str
    location: str
    shape: list[str]
    count: int
    examples: list[str]  # paths of stored inputs
    reproducer: str  # a shell command that replays the first example
    details: dict[str, object] = field(default_factory=dict)


@dataclass
class RunReport:
    meta: RunMeta
    series: dict[str, list[Point]] = field(default_factory=dict)
    counters: dict[str, CounterValue] = field(default_factory=dict)
    histograms: dict[str, Histogram] = field(default_factory=dict)
    findings: list[FindingGroup] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        doc = asdict(self)
        doc["schema_version"] = SCHEMA_VERSION
        doc["meta"]["duration"] = self.meta.duration
        doc["series"] = {name: [list(p) for p in pts] for name, pts in self.series.items()}
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, object]) -> RunReport:
        meta = dict(cast(Mapping[str, object], doc["meta"]))
        meta.pop("duration", None)
        series = cast(Mapping[str, list[list[float]]], doc.get("series", {}))
        histograms = cast(Mapping[str, Mapping[str, object]], doc.get("histograms", {}))
        groups = cast(list[Mapping[str, object]], doc.get("findings", []))
        return cls(
            meta=RunMeta(**meta),  # type: ignore[arg-type]
            series={k: [(float(t), float(v)) for t, v in pts] for k, pts in series.items()},
            counters=dict(cast(Mapping[str, CounterValue], doc.get("counters", {}))),
            histograms={k: Histogram(**h) for k, h in histograms.items()},  # type: ignore[arg-type]
            findings=[FindingGroup(**g) for g in groups],  # type: ignore[arg-type]
            notes=list(cast(Sequence[str], doc.get("notes", []))),
        )

    def findings_by_kind(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for group in self.findings:
            totals[group.kind] = totals.get(group.kind, 0) + group.count
        return totals


# Inputs `walkfuzz replay` recognizes by their bytes: a live stress capture (a case file with
# the live oracle's EXPECTED section) needs no --target or --harness.
SELF_DESCRIBING = frozenset({("minivm", "stress")})


def reproducer_command(finding: Finding, input_path: Path) -> str:
    """The shell command that replays one stored input (`walkfuzz replay`, the triage tool)."""
    argv = ["walkfuzz", "replay", "--target", finding.target, "--harness", finding.harness]
    if (finding.target, finding.harness) in SELF_DESCRIBING:
        argv = ["walkfuzz", "replay"]
    walker = finding.details.get("walker")
    if isinstance(walker, str) and walker not in ("", "reference"):
        argv += ["--walker", walker]
    argv.append(str(input_path))
    return shlex.join(argv)


def group_findings(out_dir: Path, findings: Iterable[Finding]) -> list[FindingGroup]:
    """One group per signature, in order of first appearance in `findings`."""
    groups: dict[str, FindingGroup] = {}
    for finding in findings:
        signature = finding.signature
        path = finding_dir(out_dir, signature) / f"{finding.sha1}.bin"
        group = groups.get(signature)
        if group is None:
            groups[signature] = FindingGroup(
                signature=signature,
                kind=finding.kind,
                target=finding.target,
                harness=finding.harness,
                location=finding.location,
                shape=list(finding.shape),
                count=1,
                examples=[str(path)],
                reproducer=reproducer_command(finding, path),
                details=dict(finding.details),
            )
        else:
            group.count += 1
            group.examples.append(str(path))
    return list(groups.values())


def write_report(out_dir: Path, doc: RunReport) -> dict[str, Path]:
    """Write report.json, report.html and report.md into out_dir (each atomically)."""
    from walkfuzz.report_html import render_html
    from walkfuzz.report_md import render_markdown

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out_dir / f"{REPORT_STEM}.json",
        "html": out_dir / f"{REPORT_STEM}.html",
        "md": out_dir / f"{REPORT_STEM}.md",
    }
    write_atomic(paths["json"], json.dumps(doc.to_json(), indent=1, default=str).encode())
    write_atomic(paths["html"], render_html(doc).encode())
    write_atomic(paths["md"], render_markdown(doc).encode())
    return paths


def load_report(path: Path) -> RunReport:
    return RunReport.from_json(json.loads(path.read_text()))
