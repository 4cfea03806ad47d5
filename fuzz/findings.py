"""Findings: what went wrong on one input, stored so that nothing found is ever lost.

A finding is an input plus what went wrong with it. Its `signature` groups findings that share
a cause, the way Hypothesis' escalation keys a failure by its *origin* rather than by the input:
the kind, the walker location (faulting function+offset, or the check that failed) and the tail
of the walk's shape (frame kinds just before the failure, repeats collapsed). Inputs that walk
ten or twenty Java frames before hitting the same bad read are one bug, so only the tail counts.

On disk (several worker processes may save at once; every file is written to a temporary name
and renamed, so a reader never sees half a file and a SIGKILL never leaves a torn one):

    <out>/findings/<signature>/<sha1>.bin    the input bytes (written first)
    <out>/findings/<signature>/<sha1>.json   the finding without its bytes
    <out>/crash-<sha1>                       the bytes again, where libFuzzer tooling looks
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

FindingKind = Literal["crash", "hang", "invalid-trace", "contract"]
FINDING_KINDS: tuple[FindingKind, ...] = get_args(FindingKind)

FINDINGS_DIR = "findings"
CRASH_PREFIX = "crash-"
FORMAT_VERSION = 1
# How many frame kinds before the failure belong to its origin: the kind of the frame where
# it failed. Deeper context splits one bug into many signatures (triage clusters further).
SHAPE_TAIL = 1
# Longest readable part of a signature; the hash suffix keeps truncated ones distinct.
SIGNATURE_TEXT_MAX = 96
# Absolute addresses (ASLR makes them differ run to run) are not part of a location.
_ABSOLUTE_ADDRESS = re.compile(r"0x[0-9a-fA-F]{9,}")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")


class FindingFileWarning(UserWarning):
    """A file under findings/ that cannot be read back; it is skipped."""


def normalize_location(location: str) -> str:
    """The location without absolute addresses: 'lib.so!f+0x1a' stays, '0x7f12ab345678' goes."""
    return _ABSOLUTE_ADDRESS.sub("0xADDR", location.strip()) or "unknown"


def shape_tail(shape: Iterable[str], tail: int = SHAPE_TAIL) -> tuple[str, ...]:
    """The last `tail` frame kinds, each run of equal kinds collapsed to one."""
    collapsed: list[str] = []
    for kind in shape:
        if not collapsed or collapsed[-1] != kind:
            collapsed.append(kind)
    return tuple(collapsed[-tail:]) if tail > 0 else ()


def _slug(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("._") or "_"


@dataclass(frozen=True)
class Finding:
    """One input and what went wrong with it (see the module docstring for the signature)."""

    kind: FindingKind
    target: str
    harness: str
    location: str
    shape: tuple[str, ...]
    data: bytes
    details: Mapping[str, object] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.kind not in FINDING_KINDS:
            raise ValueError(f"finding kind {self.kind!r} is not one of {FINDING_KINDS}")

    @property
    def origin(self) -> tuple[str, str, tuple[str, ...]]:
        """The dedup key: kind, normalized location, tail of the shape."""
        return (self.kind, normalize_location(self.location), shape_tail(self.shape))

    @property
    def signature(self) -> str:
        """Stable, filesystem-safe name of the origin: readable text plus a short hash of it."""
        kind, location, tail = self.origin
        text = f"{kind}.{_slug(location)}.{_slug('-'.join(tail) or 'none')}"
        digest = hashlib.sha1(repr(self.origin).encode()).hexdigest()[:8]
        return f"{text[:SIGNATURE_TEXT_MAX]}.{digest}"

    @property
    def sha1(self) -> str:
        """Name of the input: SHA-1 of its bytes; for a live sample without bytes, of details."""
        if self.data:
            return hashlib.sha1(self.data).hexdigest()
        canonical = json.dumps(self.details, sort_keys=True, default=str)
        return hashlib.sha1(canonical.encode()).hexdigest()

    def to_json(self) -> dict[str, object]:
        """Everything but the bytes, plus the derived names a reader wants."""
        return {
            "version": FORMAT_VERSION,
            "signature": self.signature,
            "sha1": self.sha1,
            "size": len(self.data),
            "kind": self.kind,
            "target": self.target,
            "harness": self.harness,
            "location": self.location,
            "shape": list(self.shape),
            "details": dict(self.details),
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, object], data: bytes) -> Finding:
        """Inverse of to_json; raises ValueError naming the field that is wrong."""
        kind = doc.get("kind")
        if kind not in FINDING_KINDS:
            raise ValueError(f"kind {kind!r} is not one of {FINDING_KINDS}")
        strings = {}
        for name in ("target", "harness", "location"):
            value = doc.get(name)
            if not isinstance(value, str):
                raise ValueError(f"{name} {value!r} is not a string")
            strings[name] = value
        shape = doc.get("shape")
        if not isinstance(shape, list) or not all(isinstance(s, str) for s in shape):
            raise ValueError(f"shape {shape!r} is not a list of strings")
        details = doc.get("details", {})
        if not isinstance(details, dict):
            raise ValueError(f"details {details!r} is not an object")
        return cls(
            kind=kind,
            shape=tuple(shape),
            data=data,
            details=details,
            **strings,
        )


def write_atomic(path: Path, content: bytes) -> None:
    """Write to a temporary file in the same directory, fsync, rename over `path`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
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


def save_finding(out_dir: Path, finding: Finding) -> Path:
    """Store `finding` under <out>/findings/<signature>/ and <out>/crash-<sha1>; idempotent.

    Bytes first, then the description, then the libFuzzer-style copy: a process killed in
    between leaves the input on disk. Returns the finding's directory.
    """
    directory = finding_dir(out_dir, finding.signature)
    directory.mkdir(parents=True, exist_ok=True)
    sha1 = finding.sha1
    write_atomic(directory / f"{sha1}.bin", finding.data)
    doc = {**finding.to_json(), "saved_at": time.time(), "pid": os.getpid()}
    write_atomic(directory / f"{sha1}.json", json.dumps(doc, indent=1, default=str).encode())
    if finding.data:
        write_atomic(out_dir / f"{CRASH_PREFIX}{sha1}", finding.data)
    return directory


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


def count_examples(out_dir: Path, signature: str) -> int:
    """How many inputs are stored for `signature` (by any process)."""
    return sum(1 for _ in finding_dir(out_dir, signature).glob("*.json"))


class FindingSink:
    """Deduplicating saver for one worker: in-process by signature, across workers by the
    signature's directory. Keeps at most `examples` inputs per signature, so a campaign that
    hits one bug a million times stores a handful of reproducers and keeps fuzzing."""

    def __init__(self, out_dir: Path, examples: int = 3) -> None:
        self.out_dir = out_dir
        self.examples = examples
        self.seen: dict[str, int] = {}

    def offer(self, finding: Finding) -> Path | None:
        """Save the finding unless its signature already has enough examples; returns the
        finding's directory when it was saved."""
        signature = finding.signature
        if self.seen.get(signature, 0) >= self.examples:
            return None
        if (finding_dir(self.out_dir, signature) / f"{finding.sha1}.json").exists():
            # This very input is stored already; writing it again (three fsyncs) would make a
            # run that meets one input thousands of times, as a HotSpot replay does, crawl.
            return None
        stored = count_examples(self.out_dir, signature)
        if stored >= self.examples:
            self.seen[signature] = stored
            return None
        directory = save_finding(self.out_dir, finding)
        self.seen[signature] = stored + 1
        return directory
