"""Cases for queue programs: a generated case (C generator, with its true trace) plus a
section 9. Shared by the queue tests, the stress test and the queue benchmark."""

from __future__ import annotations

from typing import Any

from walkfuzz.core.native import load
from walkfuzz.targets.minivm.case.decode import decode
from walkfuzz.targets.minivm.case.encode import insert_section
from walkfuzz.targets.minivm.case.format import Case
from walkfuzz.targets.minivm.case.queue_program import QueueOp, queue_section

_state: dict[str, Any] = {}


def base_case(seed: int, state: int, options: int, min_frames: int = 4,
              max_frames: int = 16) -> tuple[bytes, Case]:
    """A generated case (thread flags consistent with `options`, walked from its ucontext as
    ASGST_Enqueue walks, so its true trace is what Enqueue sees) and its decoded form."""
    ffi, lib = load()
    if "case" not in _state:
        _state["case"] = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    p = ffi.new("wf_gen_params *")
    lib.wf_gen_default_params(p)
    p.state, p.options, p.entry, p.consistent = state, options, 0, 1
    p.min_frames, p.max_frames = min_frames, max_frames
    status = lib.wf_gen_from_seed(seed, p, _state["case"])
    if status != 0:
        raise RuntimeError(f"generator failed for seed {seed}: status {status}")
    data = encoded(ffi, lib, _state["case"])
    return data, decode(data, f"<generated seed {seed}>")


def encoded(ffi: Any, lib: Any, case: Any) -> bytes:
    """wf_case_encode of the mapped case (with its queue program, if any)."""
    size = -lib.wf_case_encode(case, ffi.NULL, 0)
    buf = ffi.new("uint8_t[]", size)
    got = lib.wf_case_encode(case, buf, size)
    if got != size:
        raise RuntimeError(f"wf_case_encode wrote {got} bytes, announced {size}")
    return bytes(ffi.buffer(buf, size))


def physical_frames(case: Case) -> list[tuple[int, int, int]]:
    """The distinct physical frames (pc, sp, fp) of the case's true trace, top first."""
    assert case.truth is not None
    out: list[tuple[int, int, int]] = []
    for f in case.truth.frames:
        if not out or out[-1][1] != f.sp:
            out.append((f.pc, f.sp, f.fp))
    return out


def with_program(base: bytes, ops: tuple[QueueOp, ...] | list[QueueOp]) -> bytes:
    """`base` (a case without section 9) with the queue program as its section 9."""
    return insert_section(base, queue_section(ops))
