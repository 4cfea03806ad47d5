"""The finding store: every finding saved at once, so that nothing found is ever lost.

On disk (several worker processes may save at once; every file is written to a temporary name
and renamed, so a reader never sees half a file and a SIGKILL never leaves a torn one):

    <out>/findings/<signature>/<sha1>.bin    the input bytes (written first)
    <out>/findings/<signature>/<sha1>.json   the finding without its bytes, with its
                                             signature's hits (count, first and last seen)
    <out>/crash-<sha1>                       the bytes again, where libFuzzer tooling looks
                                             (a hang: timeout-<sha1>, libFuzzer's name)

Hits are counted in the hits store (walkfuzz.findings.hits) as they happen.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

from walkfuzz.core.filemode import new_file_mode
from walkfuzz.findings.finding import FINDINGS_DIR, Finding, FindingFileWarning, artifact_name
from walkfuzz.findings.hits import Hits, HitStore, RunClock


def write_atomic(path: Path, content: bytes) -> None:
    """Write to a temporary file in the same directory, fsync, rename over `path`; the file
    gets the mode any file the user writes gets (mkstemp's 0600 would hide reports and
    findings from the group)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def finding_dir(out_dir: Path, signature: str) -> Path:
    return out_dir / FINDINGS_DIR / signature


def save_finding(out_dir: Path, finding: Finding, hits: Hits | None = None) -> Path:
    """Store `finding` under <out>/findings/<signature>/ and <out>/crash-<sha1> (a hang:
    timeout-<sha1>); idempotent.
    `hits`: its signature's hits so far, kept in the description (update_descriptions brings
    them up to date at the end of a run).

    Bytes first, then the description, then the libFuzzer-style copy: a process killed in
    between leaves the input on disk. Returns the finding's directory.
    """
    directory = finding_dir(out_dir, finding.signature)
    directory.mkdir(parents=True, exist_ok=True)
    sha1 = finding.sha1
    write_atomic(directory / f"{sha1}.bin", finding.data)
    doc: dict[str, object] = {**finding.to_json(), "saved_at": time.time(), "pid": os.getpid()}
    if hits is not None:
        doc["hits"] = hits.to_json()
    write_atomic(directory / f"{sha1}.json", json.dumps(doc, indent=1, default=str).encode())
    if finding.data:
        write_atomic(out_dir / artifact_name(finding), finding.data)
    return directory


def update_descriptions(out_dir: Path, signature: str, fields: Mapping[str, object]) -> None:
    """Set `fields` (e.g. "hits", "reproducer") in the description of every stored input of
    `signature`; a description that already says so is not rewritten."""
    for description in sorted(finding_dir(out_dir, signature).glob("*.json")):
        try:
            doc = json.loads(description.read_text())
        except (OSError, ValueError):
            continue  # load_findings names unreadable descriptions
        if not isinstance(doc, dict) or all(doc.get(k) == v for k, v in fields.items()):
            continue
        doc.update(fields)
        write_atomic(description, json.dumps(doc, indent=1, default=str).encode())


def saved_at(description: Path) -> float | None:
    """When a stored input was saved (its description's `saved_at`), None if unknown."""
    try:
        value = json.loads(description.read_text()).get("saved_at")
    except (OSError, ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, int | float) else None


def _load_one(description: Path) -> Finding:
    doc = json.loads(description.read_text())
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    data_path = description.with_suffix(".bin")
    data = data_path.read_bytes() if data_path.exists() else b""
    finding = Finding.from_json(doc, data)
    if finding.sha1 != description.stem:
        raise ValueError(f"input {data_path.name} does not hash to {description.stem}")
    return finding


def load_findings(out_dir: Path) -> list[Finding]:
    """Every finding saved under out_dir, ordered by signature then input; unreadable ones are
    skipped with a FindingFileWarning naming the file."""
    found: list[Finding] = []
    for description in sorted((out_dir / FINDINGS_DIR).glob("*/*.json")):
        try:
            found.append(_load_one(description))
        except (OSError, ValueError, TypeError) as err:
            warnings.warn(f"{description}: skipped: {err}", FindingFileWarning, stacklevel=2)
    return found


def stored_findings(out_dir: Path, findings: Iterable[Finding]) -> list[Finding]:
    """The inputs stored under out_dir of the signatures among `findings`: a run that made
    many findings of one signature stored a few of them, or none when an earlier run into the
    same directory had stored enough."""
    signatures = {f.signature for f in findings}
    return [f for f in load_findings(out_dir) if f.signature in signatures]


def count_examples(out_dir: Path, signature: str) -> int:
    """How many inputs are stored for `signature` (by any process)."""
    return sum(1 for _ in finding_dir(out_dir, signature).glob("*.json"))


class FindingSink:
    """Deduplicating saver for one worker: in-process by signature, across workers by the
    signature's directory. Keeps at most `examples` inputs per signature, so a campaign that
    hits one bug a million times stores a handful of reproducers and keeps fuzzing; counts
    every hit with its time on `clock` (a HitStore; default: a run starting now)."""

    def __init__(self, out_dir: Path, examples: int = 3, clock: RunClock | None = None) -> None:
        self.out_dir = out_dir
        self.examples = examples
        self.seen: dict[str, int] = {}
        self.saved: set[str] = set()  # inputs (sha1) this sink stored: not stored again
        self.hits = HitStore(out_dir, clock or RunClock.start())

    def offer(self, finding: Finding) -> Path | None:
        """Count the hit; save the finding unless its signature already has enough examples.
        Returns the finding's directory when it was saved."""
        return self.store(finding, self.hits.hit(finding.signature))

    def store(self, finding: Finding, hits: Hits | None = None) -> Path | None:
        """Save the finding unless its signature has enough examples, counting no hit (for a
        run that counts its hits itself, into self.hits.add); `hits` go into its description."""
        signature = finding.signature
        if self.seen.get(signature, 0) >= self.examples:
            return None
        sha1 = finding.sha1
        if sha1 in self.saved or (finding_dir(self.out_dir, signature) / f"{sha1}.json").exists():
            # This very input is stored already; writing it again (three fsyncs) would make a
            # run that meets one input thousands of times, as a HotSpot replay does, crawl.
            return None
        stored = count_examples(self.out_dir, signature)
        if stored >= self.examples:
            self.seen[signature] = stored
            return None
        directory = save_finding(self.out_dir, finding, hits)
        self.saved.add(sha1)
        self.seen[signature] = count_examples(self.out_dir, signature)
        return directory
