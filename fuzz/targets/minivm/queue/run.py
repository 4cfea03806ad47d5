"""Run a case's queue program (section 9) in C and read the executor's log back as
`walkfuzz.targets.minivm.queue.model.Event`s, so it compares directly with `QueueModel.run`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from walkfuzz.core.errors import CaseFormatError
from walkfuzz.core.guard import Fault
from walkfuzz.core.native import load
from walkfuzz.targets.minivm.case.native import FINDING_NAMES, fault_of, frame_of
from walkfuzz.targets.minivm.queue.cases import encoded
from walkfuzz.targets.minivm.queue.model import Event

_state: dict[str, Any] = {}


@dataclass(frozen=True)
class NativeRun:
    status: int               # wf_queue_result.status
    events: list[Event]
    violations: int           # the executor's own bookkeeping checks that failed
    violation: str
    walker: str               # whose queue entries ran the program
    finding: str              # the queue harness's verdict on the log: none, crash, ...
    check: str                # the check that failed, or "none"
    fault: Fault | None


class NoQueueEntries(Exception):
    """The walker exports no queue API, so a queue program cannot run through it."""

    def __init__(self, walker: str) -> None:
        super().__init__(f"walker {walker} has no queue entries (wf_walker.has_queue is 0)")
        self.walker = walker


def _buffers() -> tuple[Any, Any, Any, Any]:
    ffi, lib = load()
    if "result" not in _state:
        _state["result"] = ffi.gc(lib.wf_queue_result_new(), lib.wf_queue_result_free)
        _state["case"] = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    return ffi, lib, _state["case"], _state["result"]


def _event(e: Any, frames: Any, ffi: Any) -> Event:
    walked = tuple(frame_of(ffi, frames[i])
                   for i in range(e.frame_begin, e.frame_begin + e.frame_count))
    return Event(e.kind, e.op, e.queue, e.code, e.arg, e.pc, e.sp, e.fp, e.size, e.capacity,
                 e.attempts, walked)


def decode_status(data: bytes) -> tuple[int, int]:
    """(status, byte offset) of the C decoder on `data` (maps it when it decodes)."""
    ffi, lib, case, _ = _buffers()
    err = ffi.new("wf_case_error *")
    status = lib.wf_case_decode(data, len(data), case, err)
    return (status, int(err.offset)) if status else (0, 0)


def encode_mapped() -> bytes:
    """The C encoding of the case decoded last (section 9 included)."""
    ffi, lib, case, _ = _buffers()
    return encoded(ffi, lib, case)


def run_case(data: bytes, source: str = "<queue case>", walker: Any = None) -> NativeRun:
    """Decode `data` in C (mapping it), run its queue program through `walker`'s queue entries
    (default: the reference walker) under the guard, check the log as the queue harness does,
    return the log and the verdict."""
    ffi, lib, case, result = _buffers()
    err = ffi.new("wf_case_error *")
    status = lib.wf_case_decode(data, len(data), case, err)
    if status != 0:
        message = ffi.string(err.message).decode(errors="replace")
        raise CaseFormatError(source, f"C decoder: status {status}: {message}")
    walker = lib.wf_walker_reference() if walker is None else walker
    if not walker.has_queue:
        raise NoQueueEntries(ffi.string(walker.name).decode(errors="replace"))
    r = ffi.new("wf_run_result *")
    lib.wf_queue_case_run(walker, case, result, r)
    events = [_event(result.events[i], result.frames, ffi) for i in range(result.event_count)]
    return NativeRun(result.status, events, result.violations,
                     ffi.string(result.violation).decode(errors="replace"),
                     ffi.string(walker.name).decode(errors="replace"),
                     FINDING_NAMES.get(r.finding, str(r.finding)),
                     ffi.string(lib.wf_check_name(r.check)).decode(), fault_of(r))
