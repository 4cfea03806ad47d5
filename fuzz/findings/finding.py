"""Findings: what went wrong on one input, stored so that nothing found is ever lost.

A finding is an input plus what went wrong with it. Its `signature` groups findings that share
a cause, the way Hypothesis' escalation keys a failure by its *origin* rather than by the input:
the kind, the walker location (the faulting function and source line, walkfuzz.core.symbolize,
or the check that failed) and the tail of the walk's shape (frame kinds just before the failure,
repeats collapsed). Inputs that walk ten or twenty Java frames before hitting the same bad read
are one bug, so only the tail counts. The location names code, never the library's file name
or an address, so a copy of a walker under another name, or its other build flavour, finds the
same signatures.

On disk (several worker processes may save at once; every file is written to a temporary name
and renamed, so a reader never sees half a file and a SIGKILL never leaves a torn one):

    <out>/findings/<signature>/<sha1>.bin    the input bytes (written first)
    <out>/findings/<signature>/<sha1>.json   the finding without its bytes, with its
                                             signature's hits (count, first and last seen)
    <out>/crash-<sha1>                       the bytes again, where libFuzzer tooling looks
                                             (a hang: timeout-<sha1>, libFuzzer's name)
    <out>/hits/<pid>-<token>.hits            one process's hits per signature (HitStore)

Time: every hit is counted with the seconds since the start of the run (a RunClock: a resumed
campaign's clock goes on from where its last session stopped) and the wall time. A signature's
hits are the merge of every process's (load_hits): the count summed, the first and the last
hit by wall time, so a resumed run keeps the first-seen time of what it found before.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import re
import struct
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from walkfuzz.core.filemode import new_file_mode

FindingKind = Literal["crash", "hang", "invalid-trace", "contract", "asan", "ubsan"]
FINDING_KINDS: tuple[FindingKind, ...] = get_args(FindingKind)

FINDINGS_DIR = "findings"
HITS_DIR = "hits"
HITS_SUFFIX = ".hits"
CRASH_PREFIX = "crash-"
TIMEOUT_PREFIX = "timeout-"  # libFuzzer's name for a hang's input
# Of a finding's description. 2: a fault's location is `function@file.c:LINE`; 1 named the
# library file and an offset (`walker.so!function+0x1a`). Both load; a version 1 finding
# replayed now gets a version 2 signature (triage notes the change).
FORMAT_VERSION = 2


def artifact_name(finding: Finding) -> str:
    """libFuzzer's name for a finding's input copy: timeout-<sha1> for a hang, else crash-."""
    return f"{TIMEOUT_PREFIX if finding.kind == 'hang' else CRASH_PREFIX}{finding.sha1}"


# A worker learns its run's clock from the environment (RunClock.to_text).
CLOCK_ENV = "WALKFUZZ_RUN_CLOCK"
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


@dataclass(frozen=True)
class Hits:
    """How often one signature was hit, and when first and last: seconds since the start of
    the run (`*_s`) and Unix time (`*_at`) of the same two hits."""

    count: int
    first_s: float
    first_at: float
    last_s: float
    last_at: float

    @classmethod
    def one(cls, t: float, wall: float) -> Hits:
        return cls(1, t, wall, t, wall)

    def merge(self, other: Hits) -> Hits:
        """Both together: counts summed, the earlier first hit and the later last hit (by wall
        time, so hits of runs with different starts still order right)."""
        first = self if self.first_at <= other.first_at else other
        last = self if self.last_at >= other.last_at else other
        return Hits(self.count + other.count, first.first_s, first.first_at, last.last_s,
                    last.last_at)

    def to_json(self) -> dict[str, int | float]:
        return {"count": self.count,
                "first_seen_s": round(self.first_s, 3), "first_seen_at": round(self.first_at, 3),
                "last_seen_s": round(self.last_s, 3), "last_seen_at": round(self.last_at, 3)}

    @classmethod
    def from_json(cls, doc: Mapping[str, object]) -> Hits:
        """Inverse of to_json; ValueError naming the field that is wrong."""
        values: list[float] = []
        for name in ("count", "first_seen_s", "first_seen_at", "last_seen_s", "last_seen_at"):
            value = doc.get(name)
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise ValueError(f"hits {name} {value!r} is not a number")
            values.append(float(value))
        if values[0] < 1 or values[0] != int(values[0]):
            raise ValueError(f"hits count {doc.get('count')!r} is not a positive integer")
        return cls(int(values[0]), *values[1:])


@dataclass(frozen=True)
class RunClock:
    """The time axis of a run: t = offset + (monotonic now - origin). `origin` is a
    CLOCK_MONOTONIC reading, the same in every process of the machine, so a worker process
    counts on its supervisor's axis; `offset` is the run time of a resumed campaign's earlier
    sessions. `monotonic` and `wall` are the clocks read (tests pass fakes)."""

    origin: float
    offset: float = 0.0
    monotonic: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)
    wall: Callable[[], float] = field(default=time.time, compare=False, repr=False)

    @classmethod
    def start(cls, offset: float = 0.0) -> RunClock:
        """A clock whose run starts now (after `offset` seconds of earlier sessions)."""
        return cls(time.monotonic(), offset)

    def now(self) -> tuple[float, float]:
        """Seconds since the start of the run, and the wall time."""
        return self.at(self.monotonic())

    def at(self, monotonic_s: float) -> tuple[float, float]:
        """Run seconds and wall time of a CLOCK_MONOTONIC reading (e.g. taken in C)."""
        wall = self.wall() - (self.monotonic() - monotonic_s)
        return self.offset + monotonic_s - self.origin, wall

    def span(self, count: int, first_monotonic_s: float, last_monotonic_s: float) -> Hits:
        """`count` hits between two CLOCK_MONOTONIC readings."""
        first, first_at = self.at(first_monotonic_s)
        last, last_at = self.at(last_monotonic_s)
        return Hits(count, first, first_at, last, last_at)

    def to_text(self) -> str:
        return f"{self.origin!r},{self.offset!r}"

    @classmethod
    def from_text(cls, text: str) -> RunClock:
        """Inverse of to_text; ValueError naming the text."""
        try:
            origin, offset = (float(part) for part in text.split(","))
        except ValueError:
            raise ValueError(f"run clock {text!r} is not 'origin,offset' (two numbers)") from None
        return cls(origin, offset)


# One slot of a hits file: signature (NUL-padded), count, first_s, first_at, last_s, last_at.
_HITS_MAGIC = b"WFHITS1\n"
_HITS_SIGNATURE_BYTES = 128  # signatures are at most SIGNATURE_TEXT_MAX + 9 characters
_HITS_SLOT = struct.Struct(f"<{_HITS_SIGNATURE_BYTES}sQdddd")
_HITS_FIRST_SLOTS = 64


class HitStore:
    """One process's hits per signature in <out>/hits/<pid>-<token>.hits, a file mapped
    shared: each hit is in the page cache once counted, so a process that is SIGKILLed or
    ends in libFuzzer's exit() loses none, and a hit costs no system call. Created on the
    first hit; a forked child starts a file of its own. Read with load_hits."""

    def __init__(self, out_dir: Path, clock: RunClock) -> None:
        self.out_dir = out_dir
        self.clock = clock
        self._pid = 0
        self._map: mmap.mmap | None = None
        self._slots: dict[str, int] = {}
        self._hits: dict[str, Hits] = {}

    def hit(self, signature: str) -> Hits:
        """Count one hit now; returns this process's hits of `signature` so far."""
        return self.add(signature, Hits.one(*self.clock.now()))

    def add(self, signature: str, hits: Hits) -> Hits:
        """Count hits that happened earlier (a run read afterwards); returns the total."""
        encoded = signature.encode()
        if len(encoded) > _HITS_SIGNATURE_BYTES:
            raise ValueError(f"signature {signature!r} is longer than a hits slot")
        if self._pid != os.getpid():
            self._open()
        previous = self._hits.get(signature)
        total = hits if previous is None else previous.merge(hits)
        self._hits[signature] = total
        slot = self._slots.get(signature)
        if slot is None:
            slot = self._slots[signature] = len(self._slots)
            self._grow(slot)
        assert self._map is not None
        _HITS_SLOT.pack_into(self._map, len(_HITS_MAGIC) + slot * _HITS_SLOT.size, encoded,
                             total.count, total.first_s, total.first_at, total.last_s,
                             total.last_at)
        return total

    def _open(self) -> None:
        """A new file (an inherited mapping is the parent's: leave it, and its counts, alone)."""
        directory = self.out_dir / HITS_DIR
        directory.mkdir(parents=True, exist_ok=True)
        self._pid = os.getpid()
        self._slots, self._hits = {}, {}
        path = directory / f"{self._pid}-{os.urandom(4).hex()}{HITS_SUFFIX}"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            size = len(_HITS_MAGIC) + _HITS_FIRST_SLOTS * _HITS_SLOT.size
            os.ftruncate(fd, size)
            self._map = mmap.mmap(fd, size, mmap.MAP_SHARED)
        finally:
            os.close(fd)
        self._map[: len(_HITS_MAGIC)] = _HITS_MAGIC

    def _grow(self, slot: int) -> None:
        assert self._map is not None
        need = len(_HITS_MAGIC) + (slot + 1) * _HITS_SLOT.size
        if need > len(self._map):
            self._map.resize(max(need, 2 * len(self._map)))


def _read_hits(path: Path) -> dict[str, Hits]:
    data = path.read_bytes()
    if not data.startswith(_HITS_MAGIC):
        raise ValueError("not a hits file")
    found: dict[str, Hits] = {}
    for offset in range(len(_HITS_MAGIC), len(data) - _HITS_SLOT.size + 1, _HITS_SLOT.size):
        raw, count, *times = _HITS_SLOT.unpack_from(data, offset)
        signature = raw.rstrip(b"\0").decode(errors="replace")
        if signature and count > 0:
            found[signature] = Hits(count, *times)
    return found


def load_hits(out_dir: Path) -> dict[str, Hits]:
    """Every process's hits under out_dir, merged per signature; an unreadable file is skipped
    with a FindingFileWarning naming it."""
    merged: dict[str, Hits] = {}
    for path in sorted((out_dir / HITS_DIR).glob(f"*{HITS_SUFFIX}")):
        try:
            hits = _read_hits(path)
        except (OSError, ValueError) as err:
            warnings.warn(f"{path}: skipped: {err}", FindingFileWarning, stacklevel=2)
            continue
        for signature, h in hits.items():
            merged[signature] = h if signature not in merged else merged[signature].merge(h)
    return merged


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
