"""The native target's replay part (walkfuzz.targets.protocol):

    replay(args)     `walkfuzz replay --target native|libunwind FILE`: the input once more in a
                     fresh process (walkfuzz.targets.native.runs), walked by --unwinder's
                     extension (libunwind's for --target libunwind, which takes no --unwinder);
                     --unwinder all or a comma list: by every one of them, the per-unwinder
                     table printed (walkfuzz.targets.native.differential.cli)
    Replayer         one stored input walked again in this process, its finding built as the
                     harness that found it builds it (walkfuzz.targets.native.finding), so
                     signatures match: a perturb record by its unwinder's one-call replay
                     (`wf_uw_fuzz_one`), a snapshot by its unwinder in remote-memory mode. Triage's
                     replay processes run it, and so does the fresh process of `walkfuzz replay`
                     and of the reproducer check (walkfuzz.targets.native.child_replay)
    process_key      each unwinder's library, and the snapshot extension, must be a process's
                     only one (their unw_* and _Unwind_* symbols clash): one key each
    alternatives     the snapshot saved beside a perturb input (walkfuzz.targets.native
                     .walk_snapshot): the input walks a fresh process's stack, not the one its
                     finding walked, and may run clean; the snapshot walks the same anywhere

A walk that faults is caught by the guard; a fault that escapes it (signals blocked inside the
unwinder) kills this process, which is why every caller runs the Replayer in a child process.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from walkfuzz.core.errors import CaseFormatError
from walkfuzz.core.guard import ADDRESS_KEYS, Fault
from walkfuzz.findings import classify
from walkfuzz.findings.finding import Finding
from walkfuzz.targets.native import ALIAS, TARGET
from walkfuzz.targets.native.finding import DIFFERENTIAL, snapshot_finding, walk_finding
from walkfuzz.targets.native.inputs import PERTURB, SNAPSHOT, decode, harness_of
from walkfuzz.targets.native.outcome import Namer, WalkOutcome
from walkfuzz.targets.native.snapshot import format as fmt
from walkfuzz.targets.native.snapshot.walk import UNWINDERS as SNAPSHOT_UNWINDERS
from walkfuzz.targets.native.snapshot.walk import Walker
from walkfuzz.targets.native.unwinders import DEFAULT
from walkfuzz.targets.native.walk_snapshot import SUFFIX as SNAPSHOT_SUFFIX
from walkfuzz.targets.native.walk_snapshot import snapshot_of
from walkfuzz.targets.protocol import (
    DEFAULT_HANG_NS,
    Replay,
    ReplayError,
    StoredInput,
    stored_replay,
)


def replay(args: argparse.Namespace) -> int:
    """The exit status of the replay: 0 a clean walk, 1 a finding (or the child died)."""
    from walkfuzz.targets.native.runs import replay_and_judge

    if args.target == ALIAS:
        return replay_and_judge(Path(args.file))
    from walkfuzz.targets.native.differential.cli import is_differential, replay_differential_file

    if is_differential(args.unwinder):
        return replay_differential_file(Path(args.file), args.unwinder)
    return replay_and_judge(Path(args.file), args.unwinder or DEFAULT)


def process_key(stored: StoredInput) -> str:
    """`snapshot` for a snapshot, else the unwinder that walks the input."""
    if stored.harness == SNAPSHOT or Path(stored.path).suffix == SNAPSHOT_SUFFIX:
        return SNAPSHOT
    return stored.unwinder or DEFAULT


def alternatives(stored: StoredInput) -> list[StoredInput]:
    """The snapshot beside a perturb input, walked by the input's unwinder, when remote-memory
    mode has that unwinder."""
    unwinder = stored.unwinder or DEFAULT
    snapshot = snapshot_of(Path(stored.path))
    if stored.harness != PERTURB or unwinder not in SNAPSHOT_UNWINDERS or not snapshot.is_file():
        return []
    return [StoredInput(str(snapshot), TARGET, SNAPSHOT, stored.walker, unwinder)]


class Replayer:
    """Walks the native target's stored inputs in this process. `key` is the process's
    (process_key): an input of another key is refused, since its library would clash with the
    one loaded here. A `hang_ns` of 0 runs the walks without a watchdog, as `walkfuzz replay`
    does."""

    def __init__(self, hang_ns: int = DEFAULT_HANG_NS, key: str = "") -> None:
        self.hang_ns, self.key = hang_ns, key
        self._live: _LiveWalks | None = None
        self._snapshots: _SnapshotWalks | None = None

    def run(self, data: bytes, stored: StoredInput) -> Replay:
        """One walk; ReplayError for an input this process cannot walk, CaseFormatError for
        a snapshot that does not decode."""
        if stored.target == TARGET and stored.harness == DIFFERENTIAL:
            # judged across several unwinders' processes at once (its replay is one fresh
            # process per unwinder): grouped by the description stored beside it
            return stored_replay(stored, stored_fault_class)
        key = process_key(stored)
        if self.key and key != self.key:
            raise ReplayError(f"{stored.path}: replays in a process of key {key!r}, not "
                              f"{self.key!r} (their unwinder libraries clash)")
        # findings stored under the old target name are all perturb records
        harness = stored.harness or (PERTURB if stored.target == ALIAS else harness_of(data))
        if harness == SNAPSHOT:
            if self._snapshots is None:
                self._snapshots = _SnapshotWalks(self.hang_ns)
            return self._snapshots.run(data, stored.unwinder or DEFAULT, stored.path)
        if stored.walker != "reference":
            raise ReplayError(f"{stored.path}: the native target takes no --walker "
                              f"({stored.walker!r})")
        unwinder = stored.unwinder or DEFAULT
        if self._live is None:
            self._live = _LiveWalks(self.hang_ns, unwinder)
        elif self._live.unwinder != unwinder:
            raise ReplayError(f"{stored.path}: unwinder {unwinder!r} replays in a process of its "
                              f"own; this one walks with {self._live.unwinder!r}")
        return self._live.run(data, harness)


class _LiveWalks:
    """A perturb record walked by one unwinder's extension (`wf_uw_fuzz_one`); `extra` of its
    Replay has the walk for people (the JSON `walkfuzz replay` prints)."""

    def __init__(self, hang_ns: int, unwinder: str) -> None:
        from walkfuzz.targets.native.extension import load

        self.unwinder = unwinder
        self.native = load(unwinder)
        self.ffi, self.lib = self.native.ffi, self.native.lib
        if hang_ns:
            self.lib.wf_uw_set_walk_budget_ns(hang_ns)
        self.result = self.ffi.new("wf_uw_result *")
        self.namer = Namer(self.native)
        self._regions: tuple[classify.Region, ...] | None = None

    def run(self, data: bytes, harness: str) -> Replay:
        self.lib.wf_uw_fuzz_one(data, len(data), self.result)
        outcome = WalkOutcome.from_c(self.result)
        finding = None if outcome.finding_kind is None else \
            walk_finding(outcome, data, self.namer, harness)
        doc = self._doc(data, outcome, finding)
        if finding is None:
            return Replay(None, extra=doc)
        if finding.kind == "crash" and outcome.stop == "fault" and outcome.fault is not None:
            if self._regions is None:
                self._regions = classify.process_regions()
            klass, why = classify.fault_class(outcome.fault.address, outcome.fault.si_code,
                                              self._regions)
        elif finding.kind in ("crash", "hang"):
            klass, why = classify.HANG_CLASS, f"the walk stopped at {outcome.stop}"
        else:
            klass, why = outcome.invalid, f"first differing frame {outcome.first_diff}"
        return Replay(finding, klass, why, extra=doc)

    def _doc(self, data: bytes, outcome: WalkOutcome, finding: Finding | None) -> dict[str, Any]:
        namer = self.namer
        doc: dict[str, Any] = {
            "unwinder": namer.unwinder,
            "case": decode(data).to_json(),
            "verdict": outcome.finding_kind or "ok",
            "stop": outcome.stop,
            "unw_rc": outcome.unw_rc,
            "known_limit": outcome.known_limit,
            "frames": [namer.describe(pc) for _, pc, _ in outcome.frames],
            "expected": [namer.kind(i, 0) for i in outcome.expected],
        }
        if finding is not None:
            doc["location"], doc["signature"] = finding.location, finding.signature
        if outcome.fault is not None:
            doc["fault"] = outcome.fault.to_json()
        return doc


class _SnapshotWalks:
    """Snapshots walked in remote-memory mode, one Walker per unwinder, made on first use."""

    def __init__(self, hang_ns: int) -> None:
        from walkfuzz.targets.native.snapshot.native import load

        self.native = load()
        if hang_ns:
            self.native.lib.wf_snap_set_walk_budget_ns(hang_ns)
        self.walkers: dict[str, Walker] = {}

    def run(self, data: bytes, unwinder: str, source: str) -> Replay:
        if unwinder not in SNAPSHOT_UNWINDERS:
            raise ReplayError(f"{source}: unwinder {unwinder!r} walks no snapshot (remote-memory "
                              f"mode has {', '.join(sorted(SNAPSHOT_UNWINDERS))})")
        fmt.decode(data, source)  # one line naming what is wrong, before C says "bad snapshot"
        walker = self.walkers.setdefault(unwinder, Walker(self.native, unwinder))
        walk = walker.walk(data)
        if walk.stop == "bad-snapshot":
            raise CaseFormatError(source, walk.error)
        if walk.finding_kind is None:
            return Replay(None)
        finding = snapshot_finding(walk, data)
        if walk.stop == "fault" and walk.fault is not None:
            # the addresses are the captured process's: its regions are not this one's
            return Replay(finding, *classify.fault_class(walk.fault.address,
                                                         walk.fault.si_code, ()))
        return Replay(finding, classify.HANG_CLASS, f"the walk stopped at {walk.stop}")


DEATH_CLASS = "process-death"  # a native worker died on it: no fault address was kept


def stored_fault_class(doc: Mapping[str, object]) -> str:
    """The class of a stored native finding's fault from its description alone: the regions
    are those of the process that found it, gone, so the address alone."""
    fault = _stored_fault(doc.get("details"))
    if fault is None:
        return DEATH_CLASS
    return classify.fault_class(fault.address, fault.si_code, ())[0]


def _stored_fault(details: object) -> Fault | None:
    """The fault a stored finding's details name: their `fault` record, or the flat keys
    findings stored before it kept (`fault_address`); None when no address was kept."""
    if not isinstance(details, dict):
        return None
    record = details.get("fault", details)
    if not isinstance(record, dict) or not set(ADDRESS_KEYS) & record.keys():
        return None
    try:
        return Fault.from_json(record)
    except ValueError:
        return None
