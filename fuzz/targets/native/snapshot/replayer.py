"""Triage's replay of one native snapshot in this process (walkfuzz.targets.harness_replay's
`Replay`): walked by one unwinder in remote-memory mode, its finding built as the snapshot
harness builds it (walkfuzz.targets.native.snapshot.walk.to_finding), so signatures match.

A snapshot carries its own memory, so it walks the same in any process: the triage of a native
finding whose input walks clean in a fresh process replays the snapshot saved beside it
(walkfuzz.targets.native.walk_snapshot). The snapshot extension is a process's only unwinder
library here: triage gives snapshots replay processes of their own.
"""

from __future__ import annotations

from walkfuzz.core.errors import CaseFormatError
from walkfuzz.findings import classify
from walkfuzz.targets.harness_replay import DEFAULT_HANG_NS, Replay, ReplayError
from walkfuzz.targets.native.snapshot import format as fmt
from walkfuzz.targets.native.snapshot.native import load
from walkfuzz.targets.native.snapshot.walk import UNWINDERS, Walker, to_finding

DEFAULT_UNWINDER = "libunwind"  # the snapshot campaign's default (snapshot.campaign)


class SnapshotReplayer:
    """Walks snapshots with the extension's unwinders, one Walker each, made on first use."""

    def __init__(self, hang_ns: int = DEFAULT_HANG_NS) -> None:
        self.native = load()
        self.native.lib.wf_snap_set_walk_budget_ns(hang_ns)
        self.walkers: dict[str, Walker] = {}

    def run(self, data: bytes, unwinder: str, source: str) -> Replay:
        """One walk; ReplayError for an unwinder that walks no snapshot, CaseFormatError for
        bytes that are no snapshot."""
        name = unwinder or DEFAULT_UNWINDER
        if name not in UNWINDERS:
            raise ReplayError(f"{source}: unwinder {name!r} walks no snapshot (remote-memory "
                              f"mode has {', '.join(sorted(UNWINDERS))})")
        fmt.decode(data, source)  # one line naming what is wrong, before C says "bad snapshot"
        walker = self.walkers.setdefault(name, Walker(self.native, name))
        walk = walker.walk(data)
        if walk.stop == "bad-snapshot":
            raise CaseFormatError(source, walk.error)
        if walk.finding_kind is None:
            return Replay(None)
        finding = to_finding(walk, data)
        if walk.stop == "fault" and walk.fault is not None:
            # the addresses are the captured process's: its regions are not this one's
            return Replay(finding, *classify.fault_class(walk.fault.address,
                                                         walk.fault.si_code, ()))
        return Replay(finding, classify.HANG_CLASS, f"the walk stopped at {walk.stop}")
