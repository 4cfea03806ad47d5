"""The current-input journal: a small mmap'd file per worker holding the input being run.

A worker writes every input into it *before* running it. The mapping is MAP_SHARED on a
regular file, so the bytes are in the page cache the moment they are copied and survive the
worker process however it dies (stack overflow, abort with signals blocked, SIGKILL). The
supervisor reads it back when a worker dies and turns the input into a `crash` finding.

Layout (little-endian):

    offset 0   u64  execs     inputs started by this worker process (exec/s for the supervisor)
    offset 8   u64  length    length of the input below
    offset 16  ...  data      the input, `length` bytes

The data is copied before the length is stored, so a reader sees either the previous input's
length with new bytes (only if the process is killed inside that copy, i.e. mid-memcpy) or the
complete new input; a journal whose length exceeds the file is reported as empty.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

HEADER = struct.Struct("<QQ")
DEFAULT_CAPACITY = 1 << 16
JOURNAL_NAME = "current-input"


class JournalWriter:
    """The worker's side: `record(data)` before running each input."""

    def __init__(self, path: Path, capacity: int = DEFAULT_CAPACITY) -> None:
        self.path = path
        self.execs = 0
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self._map = self._mapping(capacity)

    def _mapping(self, capacity: int) -> mmap.mmap:
        os.ftruncate(self._fd, HEADER.size + capacity)
        return mmap.mmap(self._fd, HEADER.size + capacity, mmap.MAP_SHARED)

    def record(self, data: bytes) -> None:
        """Copy `data` into the journal and count it; grows the file for a larger input."""
        size = len(data)
        if HEADER.size + size > len(self._map):
            capacity = max(size, 2 * (len(self._map) - HEADER.size))
            self._map.close()
            self._map = self._mapping(capacity)
        self._map[HEADER.size : HEADER.size + size] = data
        self.execs += 1
        HEADER.pack_into(self._map, 0, self.execs, size)

    def close(self) -> None:
        self._map.close()
        os.close(self._fd)


@dataclass(frozen=True)
class JournalState:
    execs: int
    data: bytes | None  # None: no input recorded yet (or a torn journal)


def read_journal(path: Path) -> JournalState:
    """The supervisor's side: what the worker last started, and how many inputs it started."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return JournalState(0, None)
    if len(raw) < HEADER.size:
        return JournalState(0, None)
    execs, length = HEADER.unpack_from(raw, 0)
    if execs == 0 or HEADER.size + length > len(raw):
        return JournalState(execs, None)
    return JournalState(execs, raw[HEADER.size : HEADER.size + length])


def read_execs(path: Path) -> int:
    """Just the exec counter (16 bytes read, cheap enough for every progress tick)."""
    try:
        with path.open("rb") as journal:
            head = journal.read(HEADER.size)
    except FileNotFoundError:
        return 0
    return HEADER.unpack(head)[0] if len(head) == HEADER.size else 0
