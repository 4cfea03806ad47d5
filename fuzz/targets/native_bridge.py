"""The native target's replay part in the Target protocol's shape, over its replayers as they
are today (walkfuzz.targets.harness_replay.LibunwindReplayer, the snapshot's SnapshotReplayer,
the CLI's replay functions in walkfuzz.targets.replay): the table's native and libunwind
entries name this module until the native package has its own replay.py.

An input of the native target is walked live by its unwinder (harness `perturb`) or, a
snapshot, in remote-memory mode (harness `snapshot`); a differential finding is judged across
several unwinders' processes, so triage groups it by its stored description.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from walkfuzz.findings.classify import fault_class
from walkfuzz.targets.harness_replay import LibunwindReplayer
from walkfuzz.targets.native.snapshot.format import is_snapshot
from walkfuzz.targets.native.snapshot.replayer import SnapshotReplayer
from walkfuzz.targets.native.snapshot.walk import UNWINDERS as SNAPSHOT_UNWINDERS
from walkfuzz.targets.native.unwinders import DEFAULT as DEFAULT_UNWINDER
from walkfuzz.targets.native.walk_snapshot import SUFFIX as SNAPSHOT_SUFFIX
from walkfuzz.targets.native.walk_snapshot import snapshot_of
from walkfuzz.targets.protocol import Replay, StoredInput, stored_replay
from walkfuzz.targets.replay import replay_libunwind, replay_native
from walkfuzz.targets.table import LIBUNWIND, NATIVE

PERTURB = "perturb"  # an input walked live
SNAPSHOT = "snapshot"  # a snapshot, walked in remote-memory mode
DIFFERENTIAL = "differential"  # a finding across unwinders: grouped by its description
DEATH_CLASS = "process-death"  # a native worker died on it: no fault address was kept


def replay(args: argparse.Namespace) -> int:
    return replay_libunwind(args) if args.target == LIBUNWIND else replay_native(args)


def _harness(stored: StoredInput, data: bytes) -> str:
    """The stored harness, else what the bytes say: a snapshot is known by its bytes."""
    if stored.harness:
        return stored.harness
    return SNAPSHOT if stored.target == NATIVE and is_snapshot(data) else PERTURB


def _fault_class(doc: Mapping[str, object]) -> str:
    details = doc.get("details")
    address = details.get("fault_address") if isinstance(details, dict) else None
    if not isinstance(address, str):
        return DEATH_CLASS
    si_code = details.get("si_code") if isinstance(details, dict) else 0
    # the regions are those of the process that found it, gone: the address alone
    return fault_class(int(address, 16), si_code if isinstance(si_code, int) else 0, ())[0]


class Replayer:
    """One replay process's native replays: its key's unwinder, or snapshots, made on first
    use (an unwinder's library must be a process's only one: process_key)."""

    def __init__(self, hang_ns: int, key: str) -> None:
        self.hang_ns = hang_ns
        self._live: LibunwindReplayer | None = None
        self._snapshots: SnapshotReplayer | None = None

    def run(self, data: bytes, stored: StoredInput) -> Replay:
        if stored.target == NATIVE and stored.harness == DIFFERENTIAL:
            return stored_replay(stored, _fault_class)
        harness = _harness(stored, data)
        if harness == SNAPSHOT:
            if self._snapshots is None:
                self._snapshots = SnapshotReplayer(self.hang_ns)
            return self._snapshots.run(data, stored.unwinder, stored.path)
        if self._live is None:
            self._live = LibunwindReplayer(self.hang_ns, stored.unwinder)
        return self._live.run(data, harness, stored.walker, stored.path)


def process_key(stored: StoredInput) -> str:
    """Its unwinder, or `snapshot` (each unwinder's library, and the snapshot extension's,
    must be a process's only one: their unw_* and _Unwind_* symbols clash)."""
    if stored.harness == SNAPSHOT or Path(stored.path).suffix == SNAPSHOT_SUFFIX:
        return SNAPSHOT
    return stored.unwinder or DEFAULT_UNWINDER


def alternatives(stored: StoredInput) -> list[StoredInput]:
    """The snapshot saved beside an input walked live: replayed when the input walks clean
    in a fresh process (a walk of that process's stack, not the one the finding walked)."""
    unwinder = stored.unwinder or DEFAULT_UNWINDER
    snapshot = snapshot_of(Path(stored.path))
    if stored.harness != PERTURB or unwinder not in SNAPSHOT_UNWINDERS or \
            not snapshot.is_file():
        return []
    return [StoredInput(str(snapshot), NATIVE, SNAPSHOT, stored.walker, unwinder)]
