"""The hot path from Python: one C call per input (native/include/wf_run.h) and its result
as typed values, what a test asserts on. (A finding is described from the raw C result by
walkfuzz.targets.minivm.finding.to_finding, the one place that builds a finding's details, so a
campaign and triage's replay store the same ones.)

    runner = Runner(Walker.reference())
    result = runner.run_generated(data, mutate=MUTATE_ALL)
    if result.finding: ...   # "crash" | "hang" | "invalid-trace" | "contract"

One case is mapped per process (wf_case.h), so a process has one `Runner` at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from walkfuzz.core.errors import CaseFormatError
from walkfuzz.core.guard import Fault
from walkfuzz.core.native import load
from walkfuzz.findings.finding import FindingKind
from walkfuzz.targets.minivm.case.format import Frame
from walkfuzz.targets.minivm.case.native import fault_of, frame_of
from walkfuzz.targets.minivm.finding import KINDS, ORACLES, SHAPE_NAMES, check_name
from walkfuzz.targets.minivm.walker_library import load_walker

MUTATE_REGISTERS, MUTATE_STACK, MUTATE_LAYOUT, MUTATE_THREAD, MUTATE_ALL = 1, 2, 4, 8, 15


@dataclass(frozen=True)
class RunResult:
    """A wf_run_result: what one walk of one case did and which check, if any, it failed."""

    finding: FindingKind | None
    check: str                 # "none", "bci-range", "oracle-frame", ... (wf_check_name)
    oracle: str                # "truth", "reference" or "none"
    run_result: int
    end_code: int
    frames: int
    diff_index: int            # first frame that failed a check or differs, -1 if none
    got: Frame | None          # the walker's frame at diff_index
    want: Frame | None         # the oracle's frame at diff_index
    fault: Fault | None
    shape: tuple[str, ...]     # frame kinds up to the failure, repeats collapsed
    mutations: int

    @property
    def location(self) -> str:
        """Where it went wrong: the failed check, or the faulting pc (symbolized later)."""
        if self.fault is not None:
            return f"pc:{self.fault.pc:#x}"
        return f"check:{self.check}"


class Walker:
    """A wf_walker table: the in-core reference walker or a loaded walker library."""

    def __init__(self, table: Any, name: str) -> None:
        self.table = table
        self.name = name

    @classmethod
    def reference(cls) -> Walker:
        return cls(load().lib.wf_walker_reference(), "reference")

    @classmethod
    def library(cls, path: str) -> Walker:
        """A walker library (walkfuzz.targets.minivm.walker_library); WalkerLibraryError names what
        is wrong."""
        return cls(load_walker(path), path)


class Runner:
    """Runs cases through the hot path with one walker; reuses one wf_case and result."""

    def __init__(self, walker: Walker) -> None:
        self.ffi, self.lib = load()
        self.walker = walker
        self.case = self.ffi.gc(self.lib.wf_case_new(), self.lib.wf_case_free)
        self.result = self.ffi.new("wf_run_result *")
        self.params = self.ffi.new("wf_gen_params *")
        self.lib.wf_gen_default_params(self.params)

    def run_case(self, data: bytes, source: str = "<bytes>") -> RunResult:
        """Decode `data` as a case file and walk it; CaseFormatError if it does not decode."""
        err = self.ffi.new("wf_case_error *")
        status = self.lib.wf_case_decode(data, len(data), self.case, err)
        if status != 0:
            name = self.ffi.string(self.lib.wf_case_status_name(status)).decode()
            message = self.ffi.string(err.message).decode(errors="replace")
            raise CaseFormatError(source, f"{name} at byte {err.offset}: {message}")
        return self.run_mapped()

    def run_generated(self, data: bytes, mutate: int = 0) -> RunResult:
        """Generate a case from `data`, mutate it with the bytes left (wf_mutation_class bits
        in `mutate`), walk it."""
        self.lib.wf_run_generated(self.walker.table, data, len(data), self.params, mutate,
                                  self.case, self.result)
        return self._result()

    def run_mapped(self) -> RunResult:
        """Walk the case mapped now."""
        self.lib.wf_run_mapped(self.walker.table, self.case, self.result)
        return self._result()

    def frames(self) -> list[Frame]:
        """The frames the last walk returned."""
        raw = self.lib.wf_run_frames()
        return [frame_of(self.ffi, raw[i]) for i in range(self.result.frames)]

    def _result(self) -> RunResult:
        r, ffi = self.result, self.ffi
        has_diff = r.diff_index >= 0
        return RunResult(
            finding=KINDS.get(r.finding),
            check=check_name(ffi, self.lib, r.check),
            oracle=ORACLES.get(r.oracle, str(r.oracle)),
            run_result=r.run_result,
            end_code=r.end_code,
            frames=r.frames,
            diff_index=r.diff_index,
            got=frame_of(ffi, r.got) if has_diff and r.diff_index < r.frames else None,
            want=frame_of(ffi, r.want)
            if has_diff and r.diff_index < r.want_frames else None,
            fault=fault_of(r),
            shape=tuple(SHAPE_NAMES.get(r.shape[i], "other") for i in range(r.shape_len)),
            mutations=r.mutations,
        )
