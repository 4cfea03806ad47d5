"""One snapshot walked by one unwinder, in Python: the frames and the verdict (the finding it
makes is walkfuzz.targets.native.finding's).

A frame's kind: `truth-N` for the N-th function of the snapshot's known chain (innermost 0),
else the base name of the snapshot module holding the pc, else `wild`. A finding's shape is the
class of the frame the unwinder was stepping from (`known`, `module`, `wild`; `init` when there
was none), as for a live walk: the fault's location names the code path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from walkfuzz.core.guard import Fault, native_fault
from walkfuzz.findings.finding import FindingKind
from walkfuzz.targets.native.snapshot import format as fmt

UNWINDERS = {"libunwind": 0, "libdw": 1}
UNWINDER_ENV = "WALKFUZZ_UNWINDER"  # the harness's unwinder, set by the campaign for its workers
LIBRARIES = {"libunwind": "libunwind-x86_64.so.8 (remote address space)",
             "libdw": "libdw.so.1 (Dwfl_Thread_Callbacks)"}
STOP_NAMES = ("none", "root", "end", "step-error", "init-error", "cycle", "budget", "fault",
              "hang", "bad-snapshot")  # wf_snap_stop, the native target's numbers and one more


@dataclass(frozen=True)
class Frame:
    pc: int
    sp: int
    fp: int
    truth: int  # index of the truth range holding pc, -1 none
    exact: bool


@dataclass(frozen=True)
class SnapshotWalk:
    """A copy of wf_snap_result that outlives the C struct."""

    unwinder: str
    stop: str
    rc: int
    matched: bool
    truth: int
    frames: tuple[Frame, ...]
    modules: int
    reads: int
    misses: int
    walk_ns: int
    fault: Fault | None  # of a walk that faulted or hung
    error: str

    @classmethod
    def from_c(cls, unwinder: str, r: Any, ffi: Any) -> SnapshotWalk:
        return cls(
            unwinder=unwinder, stop=STOP_NAMES[r.stop], rc=int(r.rc), matched=bool(r.matched),
            truth=int(r.truth),
            frames=tuple(Frame(int(x.pc), int(x.sp), int(x.fp), int(x.truth), bool(x.exact))
                         for x in (r.frame[i] for i in range(r.frames))),
            modules=int(r.modules), reads=int(r.reads), misses=int(r.misses),
            walk_ns=int(r.walk_ns),
            fault=native_fault(r.fault) if STOP_NAMES[r.stop] in ("fault", "hang") else None,
            error=ffi.string(r.error).decode(errors="replace"),
        )

    @property
    def finding_kind(self) -> FindingKind | None:
        if self.stop == "fault":
            return "crash"
        if self.stop in ("hang", "cycle"):
            return "hang"
        return None

    def signature_frames(self) -> tuple[tuple[int, int, int], ...]:
        """What must come out the same on every replay: pc, sp, fp of each frame."""
        return tuple((f.pc, f.sp, f.fp) for f in self.frames)


class Walker:
    """Walks snapshots with one unwinder of walkfuzz._snapshot (one C call a walk)."""

    def __init__(self, native: Any, unwinder: str) -> None:
        self.ffi, self.lib = native.ffi, native.lib
        self.unwinder = unwinder
        self._code = UNWINDERS[unwinder]
        self._result = self.ffi.new("wf_snap_result *")

    def walk(self, data: bytes) -> SnapshotWalk:
        self.lib.wf_snap_walk(self._code, data, len(data), self._result)
        return SnapshotWalk.from_c(self.unwinder, self._result, self.ffi)

    @property
    def raw(self) -> Any:
        """The last walk's wf_snap_result (no copy: the harness's hot path reads it)."""
        return self._result


def frame_kind(snapshot: fmt.Snapshot, maps: list[fmt.Mapping], frame: Frame) -> str:
    if frame.truth >= 0:
        return f"truth-{frame.truth}"
    pc = frame.pc if frame.exact else frame.pc - 1
    for m in maps:
        if m.start <= pc < m.end:
            return os.path.basename(m.path).split(".so")[0]
    return "wild"


def step_class(kind: str) -> str:
    if kind == "wild":
        return kind
    return "known" if kind.startswith("truth-") else "module"


def describe(snapshot: fmt.Snapshot, walk: SnapshotWalk) -> list[str]:
    """Each frame as `kind pc sp`, for reports and replay."""
    maps = snapshot.mappings()
    return [f"{frame_kind(snapshot, maps, f)} pc={f.pc:#x} sp={f.sp:#x}" for f in walk.frames]
