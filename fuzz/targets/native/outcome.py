"""What one walk of an unwinder came to, in Python: a copy of the C result, its frames named
(the finding it makes is walkfuzz.targets.native.finding's).

Frame kinds: `bottom` / `root` / `worker-root` for the fixed functions, `chain-fp`,
`chain-nofp`, `work-fp`, `work-nofp` for generated ones, `sigtramp` for glibc's signal
trampoline, else the module a pc is in (`libc`, `libunwind`, ...) or `wild` for a pc in no
module. They are all in a finding's details.

A walk's `shape` is the part of its finding's signature that the input decides, never what
stale memory held: a pc the unwinder read from a perturbed frame is whatever that memory held
in this process, so whether it lands in a module or in no code differs between a campaign's
worker and a fresh replay. A crash or a hang has no shape (the faulting pc, the location,
names the code path); an invalid trace keeps the kinds up to the first differing frame, that
frame's kind as `step_class` has it (`foreign` for any pc outside the generated code and the
signal trampoline).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from walkfuzz.core.errors import MissingDependencyError
from walkfuzz.core.guard import Fault, native_fault
from walkfuzz.core.symbolize import Located, locate
from walkfuzz.findings.finding import FindingKind
from walkfuzz.targets.native import chaingen

STOP_NAMES = ("none", "root", "end", "step-error", "init-error", "cycle", "budget", "fault", "hang")
FAULT_STOPS = ("fault", "hang")  # the stops the guard's fault record tells of
INVALID_NAMES = ("valid", "missing", "extra", "wrong-function", "truncated", "cycle")
STATUS_KINDS: dict[int, FindingKind] = {1: "crash", 2: "hang", 3: "invalid-trace"}
ID_WORK_BASE = 16
FIXED_IDS = {32: "bottom", 33: "root", 34: "worker-root"}
_CHAIN_KINDS = [s.kind for s in chaingen.chain_specs()]
_WORK_KINDS = [s.kind for s in chaingen.work_specs()]
_MODULE = re.compile(r"^(?P<module>[^+]+?)(?:\.so[.0-9]*)?\+0x[0-9a-f]+$")
# A pc's description (`module+0xoffset`, dladdr's) is a name, not an error line: a module's
# name is short, so it has a buffer of its own size.
DESCRIPTION_LEN = 256


def symbol_of(pc: int, hang: bool) -> Located | None:
    """The symbol holding `pc`; None when llvm-symbolizer is missing (the finding still has
    the library and offset)."""
    try:
        return locate(pc, hang=hang)
    except MissingDependencyError:
        return None


class Namer:
    """Names pcs with the module's help (dladdr), remembering the trampoline's address and the
    unwinder the module was built with."""

    def __init__(self, native: Any) -> None:
        self.ffi, self.lib = native.ffi, native.lib
        self.trampoline = int(self.lib.wf_uw_signal_trampoline())
        self._buf = self.ffi.new("char[]", DESCRIPTION_LEN)
        self.unwinder = self.ffi.string(self.lib.wf_uw_unwinder_name()).decode()
        self.library = self.ffi.string(self.lib.wf_uw_unwinder_library()).decode()

    def describe(self, pc: int) -> str:
        self.lib.wf_uw_describe_pc(pc, self._buf, DESCRIPTION_LEN)
        text: str = self.ffi.string(self._buf).decode(errors="replace")
        return text

    def kind(self, frame_id: int, pc: int) -> str:
        if 0 <= frame_id < len(_CHAIN_KINDS):
            return _CHAIN_KINDS[frame_id]
        if ID_WORK_BASE <= frame_id < ID_WORK_BASE + len(_WORK_KINDS):
            return _WORK_KINDS[frame_id - ID_WORK_BASE]
        if frame_id in FIXED_IDS:
            return FIXED_IDS[frame_id]
        if self.trampoline and self.trampoline <= pc < self.trampoline + 16:
            return "sigtramp"
        match = _MODULE.match(self.describe(pc))
        return match.group("module") if match else "wild"


@dataclass(frozen=True)
class WalkOutcome:
    """A copy of wf_uw_result that outlives the C struct."""

    status: int
    stop: str
    unw_rc: int
    invalid: str
    perturbations: int
    first_diff: int
    known_limit: bool  # not judged: beyond the unwinder's known limit (wf_uw_result)
    frames: tuple[tuple[int, int, int], ...]  # (id, pc, sp)
    expected: tuple[int, ...]
    captured: tuple[int, int, int]  # rip, rsp, rbp
    walked_from: tuple[int, int, int]
    fault: Fault | None  # of a walk that faulted or hung

    @classmethod
    def from_c(cls, r: Any) -> WalkOutcome:
        return cls(
            status=int(r.status),
            stop=STOP_NAMES[r.stop],
            unw_rc=int(r.unw_rc),
            invalid=INVALID_NAMES[r.invalid],
            perturbations=int(r.perturbations),
            first_diff=int(r.first_diff),
            known_limit=bool(r.known_limit),
            frames=tuple((int(r.frame[i].id), int(r.frame[i].pc), int(r.frame[i].sp))
                         for i in range(r.frames)),
            expected=tuple(int(r.expected[i]) for i in range(r.expected_count)),
            captured=(int(r.captured[0]), int(r.captured[1]), int(r.captured[2])),
            walked_from=(int(r.walked_from[0]), int(r.walked_from[1]), int(r.walked_from[2])),
            fault=native_fault(r.fault) if STOP_NAMES[r.stop] in FAULT_STOPS else None,
        )

    @property
    def finding_kind(self) -> FindingKind | None:
        return STATUS_KINDS.get(self.status)

    def kinds(self, namer: Namer) -> tuple[str, ...]:
        return tuple(namer.kind(fid, pc) for fid, pc, _ in self.frames)

    def shape(self, namer: Namer) -> tuple[str, ...]:
        if self.finding_kind != "invalid-trace":
            return ()
        kinds = self.kinds(namer)
        kept = kinds[: self.first_diff + 1] if self.first_diff >= 0 else kinds
        return (*kept[:-1], step_class(kept[-1])) if kept else ()


KNOWN_KINDS = frozenset({*_CHAIN_KINDS, *_WORK_KINDS, *FIXED_IDS.values()})


def step_class(kind: str) -> str:
    """A frame kind as a signature keeps it: a generated or fixed frame's kind, `sigtramp`,
    else `foreign` (a module's name or `wild` depends on what stale memory held)."""
    return kind if kind in KNOWN_KINDS or kind == "sigtramp" else "foreign"


def expected_kinds(namer: Namer, ids: Sequence[int]) -> list[str]:
    return [namer.kind(i, 0) for i in ids]
