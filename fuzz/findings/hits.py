"""Hits: how often each finding signature was hit, and when, kept so that no hit is lost.

Time: every hit is counted with the seconds since the start of the run (a RunClock: a resumed
campaign's clock goes on from where its last session stopped) and the wall time. Every run
keeps its hits in the store

    <out>/hits/<pid>-<token>.hits            one process's hits per signature (HitStore)

and a signature's hits are the merge of every process's (load_hits): the count summed, the
first and the last hit by wall time, so a resumed run keeps the first-seen time of what it
found before.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from walkfuzz.findings.finding import FindingFileWarning

HITS_DIR = "hits"
HITS_SUFFIX = ".hits"
# A worker learns its run's clock from the environment (RunClock.to_text).
CLOCK_ENV = "WALKFUZZ_RUN_CLOCK"


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
        if self._pid != os.getpid():
            self._open()
        previous = self._hits.get(signature)
        return self.put(signature, hits if previous is None else previous.merge(hits))

    def put(self, signature: str, total: Hits) -> Hits:
        """This process's hits of `signature` are `total` (counted elsewhere, as the live
        stress run's C side counts them, and read again as they grow); returns it."""
        encoded = signature.encode()
        if len(encoded) > _HITS_SIGNATURE_BYTES:
            raise ValueError(f"signature {signature!r} is longer than a hits slot")
        if self._pid != os.getpid():
            self._open()
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


def write_hits(out_dir: Path, hits: Mapping[str, Hits]) -> None:
    """Store `hits` in out_dir's hits/ as one process's (hits counted before, e.g. merged from
    other folders)."""
    store = HitStore(out_dir, RunClock.start())
    for signature, h in sorted(hits.items()):
        store.add(signature, h)


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


