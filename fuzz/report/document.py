"""The run report: one JSON document per run (schema: reports/run.schema.json), the source
of truth that the HTML page (report_html) and the Markdown summary (report_md) are rendered from;
report_files writes the three.

Every run type writes through it: fuzz campaigns, stress jobs, the hotspot and libunwind runs.
What differs between them goes into free-form `counters` and named `series`/`histograms`;
what they share (metadata, findings grouped by signature with a reproducer, hit count and
first/last seen) has a fixed shape.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import shlex
import socket
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import cast

from walkfuzz import __version__
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.hits import Hits, load_hits
from walkfuzz.findings.store import finding_dir, saved_at

SCHEMA_VERSION = 2
# Series a fuzz campaign records; other run types may add their own names.
STANDARD_SERIES = ("coverage", "features", "exec_per_sec", "corpus", "findings", "execs")

Point = tuple[float, float]
CounterValue = int | float | str | bool | dict[str, int | float | str]


# Names the host in a report when several runs share one machine (two execnet gateways on
# one host): `walkfuzz merge` keeps one breakdown per label.
HOST_LABEL_ENV = "WALKFUZZ_HOST_LABEL"


# A merged campaign's counter: the fuzzing time of its campaigns, summed (they ran side by
# side, so its clock is the longest one's).
CAMPAIGN_SECONDS = "campaign_seconds"


def host_info() -> dict[str, str | int]:
    return {
        "hostname": socket.gethostname(),
        "label": os.environ.get(HOST_LABEL_ENV) or socket.gethostname(),
        "platform": platform.platform(),
        "cpus": os.cpu_count() or 1,
        "python": platform.python_version(),
    }


def host_label(host: Mapping[str, str | int]) -> str:
    """The host a report was written on: its label, or its host name in reports written
    before labels were."""
    return str(host.get("label") or host.get("hostname") or "unknown")


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
    """All findings of one signature: how often and when it was hit, one description, where
    the inputs are. Times: seconds since the start of the run (`*_s`), Unix seconds (`*_at`);
    None only until write_report fills them (complete_times)."""

    signature: str
    kind: str
    target: str
    harness: str
    location: str
    shape: list[str]
    count: int  # hits, every one (a few inputs are stored)
    examples: list[str]  # paths of stored inputs
    reproducer: str  # replays the first example, or reruns the run for an input without bytes
    details: dict[str, object] = field(default_factory=dict)
    first_seen_s: float | None = None
    first_seen_at: float | None = None
    last_seen_s: float | None = None
    last_seen_at: float | None = None

    @property
    def hits(self) -> Hits | None:
        if self.first_seen_s is None or self.first_seen_at is None or \
                self.last_seen_s is None or self.last_seen_at is None:
            return None
        return Hits(self.count, self.first_seen_s, self.first_seen_at, self.last_seen_s,
                    self.last_seen_at)

    def take(self, hits: Hits) -> None:
        self.count = hits.count
        self.first_seen_s, self.first_seen_at = round(hits.first_s, 3), round(hits.first_at, 3)
        self.last_seen_s, self.last_seen_at = round(hits.last_s, 3), round(hits.last_at, 3)


@dataclass
class RunReport:
    meta: RunMeta
    series: dict[str, list[Point]] = field(default_factory=dict)
    counters: dict[str, CounterValue] = field(default_factory=dict)
    histograms: dict[str, Histogram] = field(default_factory=dict)
    findings: list[FindingGroup] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        complete_times(self)
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

    def findings_by_kind(self) -> dict[str, tuple[int, int]]:
        """Per finding kind: (distinct signatures, hits)."""
        totals: dict[str, tuple[int, int]] = {}
        for group in self.findings:
            signatures, hits = totals.get(group.kind, (0, 0))
            totals[group.kind] = (signatures + 1, hits + group.count)
        return totals

    def findings_sentence(self) -> str:
        """The findings in one line, signatures and hits each named: a hit count alone beside
        "N signatures" reads as a count of signatures."""
        kinds = "; ".join(f"{kind}: {_plural(signatures, 'signature')}, {_plural(hits, 'hit')}"
                          for kind, (signatures, hits) in sorted(self.findings_by_kind().items()))
        total = _plural(len(self.findings), "distinct signature")
        return f"{total} ({kinds})" if kinds else total


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def seen(seconds: float | None, wall: float | None) -> str:
    """`+12.3 s (14:02:07 UTC)`: since the start of the run, and the time of day."""
    if seconds is None or wall is None:
        return "n/a"
    clock = dt.datetime.fromtimestamp(wall, tz=dt.UTC).strftime("%H:%M:%S UTC")
    return f"+{seconds:.1f} s ({clock})"


# The harness of a live capture: a case file carrying the live oracle's EXPECTED section, which
# `walkfuzz replay` recognizes by its bytes (no --target or --harness). A live sample with no
# capture has no input to replay: its reproducer is the run's command (reproducer_command).
LIVE_CAPTURE_HARNESS = "stress"
# A sanitizer's finding kind, and the `--sanitizer` its replay runs under.
SANITIZER_KINDS = {"asan": "address", "ubsan": "undefined"}


def replay_command(target: str, harness: str, walker: str, input_path: str,
                   kind: str = "", unwinder: str = "") -> str:
    """`walkfuzz replay` of one input, as reports and triage print it; a finding of a
    sanitizer's `kind` is replayed on the sanitizer build that reported it, one of the native
    target's on the `unwinder` that walked it (only a native finding names one)."""
    argv = ["walkfuzz", "replay", "--target", target, "--harness", harness]
    if harness == LIVE_CAPTURE_HARNESS and not unwinder:  # a native sample names its unwinder
        argv = ["walkfuzz", "replay"]
    if kind in SANITIZER_KINDS:
        argv[2:2] = ["--sanitizer", SANITIZER_KINDS[kind]]
    if walker not in ("", "reference"):
        argv += ["--walker", walker]
    if unwinder:
        argv += ["--unwinder", unwinder]
    argv.append(input_path)
    return shlex.join(argv)


def reproducer_command(finding: Finding, input_path: Path,
                       run_command: Sequence[str] | None = None) -> str:
    """The shell command that reproduces one stored finding: `walkfuzz replay` of its input,
    or, for a finding without input bytes (a live sample, a hang of a whole run), the command
    of the run that found it when it is known."""
    if not finding.data and run_command:
        return shlex.join(run_command)
    walker = finding.details.get("walker")
    unwinder = finding.details.get("unwinder")
    return replay_command(finding.target, finding.harness,
                          walker if isinstance(walker, str) else "", str(input_path), finding.kind,
                          unwinder if isinstance(unwinder, str) else "")


def _times_of_examples(group: FindingGroup) -> None:
    """A signature no process counted hits of (saved by save_finding alone): one hit per
    stored input, at the wall times they were saved (write_report derives the seconds)."""
    times = [t for t in (saved_at(Path(e).with_suffix(".json")) for e in group.examples) if t]
    if times:
        group.first_seen_at, group.last_seen_at = min(times), max(times)


def group_findings(out_dir: Path, findings: Iterable[Finding],
                   run_command: Sequence[str] | None = None) -> list[FindingGroup]:
    """One group per signature, in order of first appearance in `findings`, with the hits
    counted under out_dir (walkfuzz.findings.hits.load_hits). `run_command` reproduces findings
    that have no input bytes (reproducer_command)."""
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
                reproducer=reproducer_command(finding, path, run_command),
                details=dict(finding.details),
            )
        else:
            group.count += 1
            group.examples.append(str(path))
    counted = load_hits(out_dir) if groups else {}
    for group in groups.values():
        hits = counted.get(group.signature)
        if hits is None:
            _times_of_examples(group)
        else:
            group.take(Hits(max(hits.count, group.count), hits.first_s, hits.first_at,
                            hits.last_s, hits.last_at))
    return list(groups.values())


def complete_times(doc: RunReport) -> None:
    """Fill the findings' times a run did not count: seconds from the wall times where only
    those are known (inputs saved without hits), the run's end where neither is."""
    m = doc.meta
    for group in doc.findings:
        if group.first_seen_at is None or group.last_seen_at is None:
            group.first_seen_at = group.last_seen_at = m.ended_at
        if group.first_seen_s is None:
            group.first_seen_s = round(max(0.0, group.first_seen_at - m.started_at), 3)
        if group.last_seen_s is None:
            group.last_seen_s = round(max(0.0, group.last_seen_at - m.started_at), 3)
