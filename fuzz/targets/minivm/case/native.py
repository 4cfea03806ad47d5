"""Cases on the C side, seen from Python: decode, encode, generate, mutate and walk through the
process's flavour of the core (`walkfuzz.core.native.load()`: plain, or the ASan build in the ASan
run). This is what replay and the walker-vs-spec tests compare the Python decoder and spec with;
it adds no logic of its own.

One case is mapped per process at a time (wf_case.h), so these functions share one `wf_case`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from walkfuzz.core import native
from walkfuzz.core.guard import Fault
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.format import Frame
from walkfuzz.targets.minivm.case.status import CaseStatus
from walkfuzz.targets.minivm.walker_library import load_walker as load_walker_library

FINDING_NAMES = {0: "none", 1: "crash", 2: "hang", 3: "invalid-trace", 4: "contract"}
ORACLE_NAMES = {0: "none", 1: "truth", 2: "reference"}
HANG_BUDGET_NS = 2_000_000_000  # a replayed walk running longer than this is a hang


def _native() -> tuple[Any, Any]:
    # One flavour per process: the VM span is mapped once, by whichever module maps it first,
    # so a second flavour in the same process could not map it (MAP_FIXED_NOREPLACE: EEXIST).
    core = native.load()
    return core.ffi, core.lib


_state: dict[str, Any] = {}


def mapped_case() -> Any:
    """The process's one `wf_case *` (allocated on first use), for direct cffi calls."""
    if "case" not in _state:
        ffi, lib = _native()
        _state["case"] = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    return _state["case"]


@dataclass(frozen=True)
class NativeDecode:
    status: int
    section: int
    offset: int
    message: str


def decode(data: bytes) -> NativeDecode:
    """Decode (and map) `data` with the C decoder; its status and where it stopped."""
    ffi, lib = _native()
    err = ffi.new("wf_case_error *")
    status = lib.wf_case_decode(data, len(data), mapped_case(), err)
    if status == CaseStatus.OK:
        return NativeDecode(0, 0, 0, "")
    return NativeDecode(status, err.section, err.offset, ffi.string(err.message).decode())


def encode_mapped() -> bytes:
    """The C encoding of the mapped case."""
    ffi, lib = _native()
    need = lib.wf_case_encode(mapped_case(), ffi.NULL, 0)
    size = abs(need)
    # 12 spare bytes: wf_case_encode writes an empty queue section header (section 9) past
    # the end when there is no queue program and the buffer is exactly full (noted for the
    # C side in notes-walker-py.md); the spare bytes are never part of the result.
    buf = ffi.new("uint8_t[]", size + 12)
    got = lib.wf_case_encode(mapped_case(), buf, size)
    if got != size:
        raise RuntimeError(f"wf_case_encode wrote {got} bytes, announced {size}")
    return bytes(ffi.buffer(buf, size))


def code_bytes(address: int, n: int) -> bytes:
    """n bytes of the mapped code heap at `address` (what a walker reads there)."""
    ffi, _ = _native()
    if not vm.CODE_HEAP <= address <= address + n <= vm.CODE_HEAP + vm.CODE_HEAP_SIZE:
        raise ValueError(f"[{address:#x}, +{n}) is not inside the code heap")
    return bytes(ffi.buffer(ffi.cast("uint8_t *", address), n))


def _params(state: int = -1, options: int = -1, entry: int = -1, consistent: int | None = None,
            min_frames: int = 0, max_frames: int = 0, deep: int = 0) -> Any:
    ffi, lib = _native()
    p = ffi.new("wf_gen_params *")
    lib.wf_gen_default_params(p)
    p.state, p.options, p.entry = state, options, entry
    if consistent is not None:
        p.consistent = consistent
    p.min_frames, p.max_frames = min_frames, max_frames
    p.deep = deep
    return p


def generate(data: bytes | None = None, seed: int | None = None, **params: int) -> bytes:
    """Generate a case with the C generator (from bytes, or a seed), map it, return its bytes.
    `params` are fields of wf_gen_params (state, options, entry, consistent, min/max_frames,
    deep)."""
    _, lib = _native()
    p = _params(**params)
    if seed is not None:
        status = lib.wf_gen_from_seed(seed, p, mapped_case())
    else:
        raw = data or b""
        status = lib.wf_gen_from_bytes(raw, len(raw), p, mapped_case())
    if status != CaseStatus.OK:
        raise RuntimeError(f"generator failed: {CaseStatus(status).label}")
    return encode_mapped()


def walk_depth() -> int:
    """Physical frames a walk of the last generated case visits without a depth limit."""
    return int(_native()[1].wf_gen_walk_depth())


def mutate(classes: int, seed: int) -> tuple[int, bytes]:
    """Apply the C mutators (wf_mutation_class bits) to the mapped case; (count, new bytes)."""
    _, lib = _native()
    applied = lib.wf_mutate_seed(mapped_case(), classes, seed)
    return applied, encode_mapped()


def layout() -> list[tuple[int, int, int, int]]:
    """Physical frames (kind, sp, fp, pc) the generator laid out for the last generated case."""
    ffi, lib = _native()
    out = ffi.new("wf_gen_frame *")
    frames = []
    for i in range(lib.wf_gen_layout_count()):
        lib.wf_gen_layout_frame(i, out)
        frames.append((out.kind, out.sp, out.fp, out.pc))
    return frames


@dataclass(frozen=True)
class NativeRun:
    """One guarded walk of the mapped case and the C harness's verdict on it."""

    walker: str
    run_result: int
    frames: tuple[Frame, ...]
    end_code: int
    state_after: int
    finding: str
    check: str
    oracle: str
    diff_index: int
    fault: Fault | None


def frame_of(ffi: Any, f: Any) -> Frame:
    def word(p: Any) -> int:
        return int(ffi.cast("uintptr_t", p))

    return Frame(f.type, f.comp_level, f.bci, word(f.method), word(f.pc), word(f.sp), word(f.fp))


def load_walker(path: str | None) -> Any:
    """The reference walker (None) or a walker library (walkfuzz.targets.minivm.walker_library)."""
    if path is None:
        return _native()[1].wf_walker_reference()
    walker = load_walker_library(path)
    _state.setdefault("walkers", []).append(walker)  # keep it alive with the process
    return walker


def fault_of(r: Any) -> Fault | None:
    """The guard's record of a crash or hang from a `wf_run_result *` (a walk's, or a queue
    program's run), None for any other verdict."""
    return Fault.from_native(r.fault) if r.finding in (1, 2) else None  # crash, hang


def run_mapped(walker: Any = None) -> NativeRun:
    """Walk the mapped case with `walker` (default: the reference) inside the guard."""
    ffi, lib = _native()
    walker = lib.wf_walker_reference() if walker is None else walker
    if lib.wf_guard_budget_ns() != HANG_BUDGET_NS:
        lib.wf_guard_set_budget_ns(HANG_BUDGET_NS)
    r = ffi.new("wf_run_result *")
    status = lib.wf_run_mapped(walker, mapped_case(), r)
    if status != 0:
        raise RuntimeError(f"wf_run_mapped failed: {CaseStatus(status).label}")
    raw = lib.wf_run_frames()
    frames = tuple(frame_of(ffi, raw[i]) for i in range(min(r.frames, 65536)))
    return NativeRun(ffi.string(walker.name).decode(errors="replace"), r.run_result, frames,
                     r.end_code, r.state_after, FINDING_NAMES.get(r.finding, str(r.finding)),
                     ffi.string(lib.wf_check_name(r.check)).decode(),
                     ORACLE_NAMES.get(r.oracle, str(r.oracle)), r.diff_index, fault_of(r))
