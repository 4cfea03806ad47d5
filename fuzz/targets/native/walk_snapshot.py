"""A native finding's walk saved as a snapshot beside it: `<sha1>.wfsnap` next to the stored
input `<sha1>.bin` (walkfuzz.findings.store.save_finding).

An input names a chain and the perturbations of its captured context; replayed in a fresh
process it walks that process's stack, whose stale words below the chain and heap differ from
the ones the finding's walk read, so some findings (libdw's cycles through a swapped rbp) walk
clean there. The snapshot holds what the walk started from in the process that found it: the
perturbed registers, the thread's stack from the walk's lowest address up (wf_uw_snap.c) and
the module map, and `walkfuzz replay SNAPSHOT` walks it the same in any process. Memory outside
that stack (a register perturbed into the heap) is not in it: such walks replay from the input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from walkfuzz.findings.finding import Finding
from walkfuzz.findings.store import write_atomic
from walkfuzz.targets.native.snapshot import format as fmt

SUFFIX = ".wfsnap"
CAPACITY = fmt.HEADER + 16 * fmt.MAX_TRUTH + fmt.MAX_STACK


def snapshot_of(input_path: Path) -> Path:
    """Where the snapshot of a stored input lies (it may not exist)."""
    return input_path.with_suffix(SUFFIX)


class WalkSnapshots:
    """Arms an unwinder extension's capture (wf_uw_snapshot_arm) for this thread's walks: each
    walk that is a finding leaves its snapshot in one buffer, saved when its finding is."""

    def __init__(self, native: Any) -> None:
        self.ffi, self.lib = native.ffi, native.lib
        self._buffer = self.ffi.new("uint8_t[]", CAPACITY)  # C keeps the pointer: kept alive
        self.lib.wf_uw_snapshot_arm(self._buffer, CAPACITY)

    def last(self) -> bytes | None:
        """The last finding's snapshot with this process's module map, None if none was taken."""
        size = int(self.lib.wf_uw_snapshot_size())
        if not size:
            return None
        raw = bytes(self.ffi.buffer(self._buffer, size))
        # The map is read now, after the walk: the modules it needs do not move.
        maps = fmt.parse_maps(Path("/proc/self/maps").read_text())
        return fmt.decode(raw).with_map(maps).encode()

    def save(self, directory: Path | None, finding: Finding) -> Path | None:
        """The last snapshot written beside `finding` stored in `directory` (None: the finding
        was not stored, nothing to write beside)."""
        if directory is None:
            return None
        data = self.last()
        if data is None:
            return None
        path = directory / f"{finding.sha1}{SUFFIX}"
        write_atomic(path, data)
        return path
