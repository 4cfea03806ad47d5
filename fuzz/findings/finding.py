"""Findings: what went wrong on one input, stored so that nothing found is ever lost.

A finding is an input plus what went wrong with it. Its `signature` groups findings that share
a cause, the way Hypothesis' escalation keys a failure by its *origin* rather than by the input:
the kind, the walker location (the faulting function and source line, walkfuzz.core.symbolize,
or the check that failed) and the tail of the walk's shape (frame kinds just before the failure,
repeats collapsed). Inputs that walk ten or twenty Java frames before hitting the same bad read
are one bug, so only the tail counts. The location names code, never the library's file name
or an address, so a copy of a walker under another name, or its other build flavour, finds the
same signatures.

A finding is stored by walkfuzz.findings.store, its signature's hits counted by
walkfuzz.findings.hits.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

FindingKind = Literal["crash", "hang", "invalid-trace", "contract", "asan", "ubsan"]
FINDING_KINDS: tuple[FindingKind, ...] = get_args(FindingKind)

FINDINGS_DIR = "findings"
CRASH_PREFIX = "crash-"
TIMEOUT_PREFIX = "timeout-"  # libFuzzer's name for a hang's input
# Of a finding's description. 2: a fault's location is `function@file.c:LINE`; 1 named the
# library file and an offset (`walker.so!function+0x1a`). Both load; a version 1 finding
# replayed now gets a version 2 signature (triage notes the change).
FORMAT_VERSION = 2


def artifact_name(finding: Finding) -> str:
    """libFuzzer's name for a finding's input copy: timeout-<sha1> for a hang, else crash-."""
    return f"{TIMEOUT_PREFIX if finding.kind == 'hang' else CRASH_PREFIX}{finding.sha1}"


# The location of a finding whose process died on its input, and how it died: a fuzz worker's
# or a replay's child alike (`process-death:SIGSEGV`). Findings stored before it was one name
# say `worker:SIGSEGV` for a fuzz worker; they load as they are (a location is its text).
DEATH_LOCATION = "process-death"


def death_location(how: str) -> str:
    """`process-death:SIGSEGV` for a process that died of SIGSEGV (`how`: describe_exit's)."""
    return f"{DEATH_LOCATION}:{how}"


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
