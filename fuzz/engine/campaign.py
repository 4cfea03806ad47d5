"""A campaign's output directory: what was asked, what happened over time, and its report.

    <out>/campaign.json          the campaign's parameters and its sessions (one per start)
    <out>/stats.jsonl            one aggregated sample a second, appended (survives SIGKILL)
    <out>/corpus/                libFuzzer's corpus (seeds imported, then grown by workers)
    <out>/findings/<sig>/        findings (walkfuzz.findings.store), plus <out>/crash-<sha1>
    <out>/workers/<n>/           per worker: log, current-input journal, libFuzzer artifacts
    <out>/quarantine/            corpus entries that killed a worker (kept out of the corpus)
    <out>/report.{json,html,md}  written when a session ends

Running `walkfuzz fuzz` again with the same --out resumes: same corpus, same findings, and the
time series goes on from where the last session stopped.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.core.native import HARNESS_FLAVOUR, Flavour
from walkfuzz.findings.finding import FINDING_KINDS, FINDINGS_DIR
from walkfuzz.findings.store import load_findings, write_atomic
from walkfuzz.report.document import Point, RunMeta, RunReport, group_findings

CAMPAIGN_FILE = "campaign.json"
LOCK_FILE = ".lock"
STATS_FILE = "stats.jsonl"
# Parameters that make a campaign what it is: a resume must not change them.
IDENTITY = ("target", "harness", "walker")


@dataclass
class CampaignSpec:
    target: str
    harness: str
    script: str
    walker: str  # "reference" or a library path
    jobs: int
    time_budget: float | None  # seconds, for this session
    runs: int | None  # inputs per worker, for this session
    max_len: int
    stop_on_first: bool
    libfuzzer_flags: list[str]
    command: list[str]
    native: Flavour = HARNESS_FLAVOUR  # the build of the core the workers load


@dataclass
class Sample:
    """One aggregated observation of the whole campaign."""

    t: float  # seconds of fuzzing since the campaign's first session started
    wall: float
    execs: int
    exec_per_sec: float
    coverage: int
    features: int
    corpus: int
    findings: int  # distinct signatures
    # A worker that ran at the previous sample ended for good within this one's interval (it
    # finished its budget, or the session stopped them all): its exec_per_sec counts time no
    # one fuzzed in, so it is no rate of fuzzing (the report's exec/s leaves it out).
    partial: bool = False


@dataclass
class Session:
    started_at: float
    ended_at: float | None = None
    status: str = "running"
    counters: dict[str, int] = field(default_factory=dict)


class CampaignDir:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.corpus = root / "corpus"
        self.findings = root / FINDINGS_DIR
        self.workers = root / "workers"
        self.quarantine = root / "quarantine"
        self.campaign_file = root / CAMPAIGN_FILE
        self.stats_file = root / STATS_FILE

    def worker_dir(self, index: int) -> Path:
        return self.workers / str(index)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Held while a session runs: two supervisors on one directory would share workers'
        slots. The kernel drops the lock when the process dies, however it dies."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                raise UserError(
                    f"output directory {str(self.root)!r} is in use by a running campaign "
                    f"(pid {holder})"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            yield
        finally:
            os.close(fd)

    def exists(self) -> bool:
        return self.campaign_file.is_file()

    def load(self) -> tuple[dict[str, object], list[Session]]:
        try:
            doc = json.loads(self.campaign_file.read_text())
            spec = dict(doc["spec"])
            sessions = [Session(**s) for s in doc["sessions"]]
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise UserError(
                f"output directory {str(self.root)!r} holds an unreadable {CAMPAIGN_FILE}: {err}"
            ) from err
        return spec, sessions

    def save(self, spec: CampaignSpec, sessions: list[Session]) -> None:
        doc = {"spec": asdict(spec), "sessions": [asdict(s) for s in sessions]}
        write_atomic(self.campaign_file, json.dumps(doc, indent=1).encode())

    def prepare(self, spec: CampaignSpec) -> list[Session]:
        """Create the layout, or check that an existing campaign is the same one; returns
        the sessions so far (empty for a new campaign)."""
        sessions: list[Session] = []
        if self.exists():
            previous, sessions = self.load()
            for key in IDENTITY:
                if previous.get(key) != getattr(spec, key):
                    raise UserError(
                        f"output directory {str(self.root)!r} holds a campaign with {key} "
                        f"{previous.get(key)!r}, not {getattr(spec, key)!r}; "
                        f"use another --out to start a new campaign"
                    )
            for s in sessions:
                if s.status == "running":  # that session was killed
                    s.status = "killed"
        for directory in (self.root, self.corpus, self.findings, self.workers):
            directory.mkdir(parents=True, exist_ok=True)
        return sessions

    def append_sample(self, sample: Sample) -> None:
        with self.stats_file.open("a") as stats:
            stats.write(json.dumps(asdict(sample)) + "\n")

    def samples(self) -> list[Sample]:
        """Every complete sample recorded so far (a line torn by a kill is ignored)."""
        if not self.stats_file.exists():
            return []
        found = []
        for line in self.stats_file.read_text().splitlines():
            try:
                found.append(Sample(**json.loads(line)))
            except (ValueError, TypeError):
                continue
        return found

    def signatures_by_kind(self) -> dict[str, int]:
        """Signatures with a stored finding, by kind. A directory counts once its first
        description is written (after the input): --stop-on-first stops the workers when the
        count goes up, and one stopped while still writing would lose the finding."""
        counts: dict[str, int] = dict.fromkeys(FINDING_KINDS, 0)
        for directory in self.findings.iterdir() if self.findings.is_dir() else ():
            kind = directory.name.split(".", 1)[0]
            if kind in counts and any(directory.glob("*.json")):
                counts[kind] += 1
        return counts


def build_report(
    out: CampaignDir, spec: CampaignSpec, sessions: list[Session], notes: list[str]
) -> RunReport:
    samples = out.samples()

    def series(name: str) -> list[Point]:
        kept = [s for s in samples if not (name == "exec_per_sec" and s.partial)]
        return [(s.t, float(getattr(s, name))) for s in kept]

    counters: dict[str, int] = {}
    for session in sessions:
        for key, value in session.counters.items():
            counters[key] = counters.get(key, 0) + value
    last = sessions[-1]
    return RunReport(
        meta=RunMeta(
            run_type="fuzz",
            command=spec.command,
            target=spec.target,
            mode=spec.harness,
            walker=spec.walker,
            started_at=sessions[0].started_at,
            ended_at=last.ended_at or time.time(),
            status=last.status if last.status in ("completed", "interrupted") else "failed",
        ),
        series={
            name: series(name)
            for name in ("coverage", "features", "exec_per_sec", "corpus", "findings", "execs")
        },
        counters={**counters, "sessions": len(sessions), "jobs": spec.jobs},
        findings=group_findings(out.root, load_findings(out.root)),
        notes=[*notes, "exec/s is per 1 s sample; samples in which a worker stopped for good "
                       "(its budget spent, the session stopping) are left out"],
    )
