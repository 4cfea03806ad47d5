"""Helpers for the reference-walker tests: generate a case, poke the mapped VM, walk it.

The VM of a case is mapped at the fixed addresses of native/include/wf_vm.h, so a test can
read and write it through cffi pointers (that is how the tests build the bad pointers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from walkfuzz.core.native import load

ffi, lib = load()

MAX = 65536
CASE = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
RESULT = ffi.new("wf_run_result *")


@dataclass(frozen=True)
class Phys:
    kind: int
    sp: int
    fp: int
    pc: int


def word(p: Any) -> int:
    return int(ffi.cast("uintptr_t", p))


def frame_tuple(f: Any) -> tuple[int, int, int, int, int, int, int]:
    return (f.type, f.comp_level, f.bci, word(f.method), word(f.pc), word(f.sp), word(f.fp))


def params(**fields: int) -> Any:
    p = ffi.new("wf_gen_params *")
    lib.wf_gen_default_params(p)
    for name, value in fields.items():
        setattr(p, name, value)
    return p


def generate(seed: int, **fields: int) -> list[Phys]:
    """Map the case of `seed`; its physical frames, top first."""
    assert lib.wf_gen_from_seed(seed, params(**fields), CASE) == 0
    out = ffi.new("wf_gen_frame *")
    frames = []
    for i in range(lib.wf_gen_layout_count()):
        lib.wf_gen_layout_frame(i, out)
        frames.append(Phys(out.kind, out.sp, out.fp, out.pc))
    return frames


def find_seed(predicate: Any, **fields: int) -> tuple[int, list[Phys]]:
    """The first seed whose layout satisfies predicate(layout) (the case stays mapped)."""
    for seed in range(2000):
        layout = generate(seed, **fields)
        if predicate(layout):
            return seed, layout
    raise AssertionError(f"no seed in 0..1999 gives a layout for {predicate} with {fields}")


def poke(addr: int, value: int) -> None:
    ffi.cast("uint64_t *", addr)[0] = value & 0xFFFFFFFFFFFFFFFF


def peek(addr: int) -> int:
    return int(ffi.cast("uint64_t *", addr)[0])


def thread() -> Any:
    return ffi.cast("struct wf_vm_thread *", lib.WF_VM_THREAD)


def run(walker: Any = None) -> Any:
    """Run the mapped case through the hot path (guarded, checked); the result struct."""
    walker = lib.wf_walker_reference() if walker is None else walker
    assert lib.wf_run_mapped(walker, CASE, RESULT) == 0
    return RESULT


def walked_frames() -> list[tuple[int, ...]]:
    frames = lib.wf_run_frames()
    return [frame_tuple(frames[i]) for i in range(RESULT.frames)]


def truth() -> list[tuple[int, ...]]:
    return [frame_tuple(CASE.truth[i]) for i in range(CASE.truth_count)]


def walk_from(sp: int, fp: int, pc: int, options: int) -> tuple[int, list[tuple[int, ...]], int]:
    out = ffi.new("ASGST_Frame[]", MAX)
    run_code, end = ffi.new("int *"), ffi.new("int *")
    n = lib.wf_walk_from_frame(lib.wf_walker_reference(), sp, fp, pc, options, out, MAX,
                               run_code, end)
    return run_code[0], [frame_tuple(out[i]) for i in range(n)], end[0]


def encode() -> bytes:
    size = -lib.wf_case_encode(CASE, ffi.NULL, 0)
    buf = ffi.new("uint8_t[]", size)
    assert lib.wf_case_encode(CASE, buf, size) == size
    return bytes(ffi.buffer(buf, size))


def decode(data: bytes) -> tuple[int, Any]:
    err = ffi.new("wf_case_error *")
    return lib.wf_case_decode(data, len(data), CASE, err), err
