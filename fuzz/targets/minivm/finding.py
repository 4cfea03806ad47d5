"""A minivm hot-path result (wf_run_result, native/include/wf_run.h) described as a Finding.

The campaign harness (walkfuzz.targets.minivm.harness) and triage's replay
(walkfuzz.targets.minivm.replayer)
both describe a finding with `to_finding`, so a replayed input gets the very signature its
campaign stored: same details keys, same location (for a crash the faulting pc's function and
source line, for a hang its function: walkfuzz.core.symbolize, the source file and line also in
details["source"]; `check:<name>` of the failed check otherwise), same shape.
"""

from __future__ import annotations

from typing import Any

from walkfuzz.core.guard import Fault
from walkfuzz.core.symbolize import locate
from walkfuzz.findings.finding import Finding, FindingKind

KINDS: dict[int, FindingKind] = {1: "crash", 2: "hang", 3: "invalid-trace", 4: "contract"}
SHAPE_NAMES = {1: "interpreted", 2: "compiled", 3: "inlined", 4: "native", 5: "non-java",
               6: "other"}
ORACLES = {0: "none", 1: "truth", 2: "reference"}
API_HARNESS = "api"  # its findings name the operation that failed


def check_name(ffi: Any, lib: Any, check: int) -> str:
    """The name of a wf_check value ("none", "bci-range", "oracle-frame", ...)."""
    name: bytes = ffi.string(lib.wf_check_name(check))
    return name.decode()


def api_op(ffi: Any, lib: Any, index: int) -> dict[str, object]:
    """The api harness's failing operation: its index among the ops the input ran and its
    name (wf_api_fuzz.h), e.g. {"api_op": 3, "api_op_name": "method-info"}."""
    name: bytes = ffi.string(lib.wf_api_op_name(lib.wf_api_fuzz_op(index)))
    return {"api_op": index, "api_op_name": name.decode()}


def frame_details(ffi: Any, frame: Any) -> dict[str, object]:
    """An ASGST_Frame as JSON-able details, pointers as hex strings."""
    def address(pointer: Any) -> str:
        return hex(int(ffi.cast("uintptr_t", pointer)))

    return {"type": frame.type, "comp_level": frame.comp_level, "bci": frame.bci,
            "method": address(frame.method), "pc": address(frame.pc),
            "sp": address(frame.sp)}


def to_finding(ffi: Any, lib: Any, r: Any, data: bytes, harness: str, walker: str,
               with_queue_op: bool = False) -> Finding:
    """Describe result `r` of a run that found something (r.finding != 0); `with_queue_op`
    adds the failing queue operation for the harnesses that run the safepoint queue API."""
    kind = KINDS[r.finding]
    shape = tuple(SHAPE_NAMES.get(r.shape[i], "other") for i in range(r.shape_len))
    check = check_name(ffi, lib, r.check)
    details: dict[str, object] = {
        "walker": walker,
        "oracle": ORACLES.get(r.oracle, str(r.oracle)),
        "check": check,
        "run_result": r.run_result, "end_code": r.end_code, "frames": r.frames,
        "want_run_result": r.want_run_result, "want_end_code": r.want_end_code,
        "want_frames": r.want_frames, "mutations": r.mutations,
        "diff_index": r.diff_index,
    }
    if with_queue_op:
        details["queue_op"] = r.queue_op
    if harness == API_HARNESS:
        details.update(api_op(ffi, lib, int(r.queue_op)))
    if r.diff_index >= 0:
        details["got"] = frame_details(ffi, r.got)
        details["want"] = frame_details(ffi, r.want)
    if kind in ("crash", "hang"):
        fault = Fault.from_native(r.fault)
        details["fault"] = fault.to_json()
        located = locate(fault.pc, hang=kind == "hang")
        location = located.location
        if located.source is not None:
            details["source"] = located.source
    else:
        location = f"check:{check}"
    return Finding(kind=kind, target="minivm", harness=harness, location=location,
                   shape=shape, data=data, details=details)
