"""The walker spec (walkfuzz.targets.minivm.spec) against docs/case-format.md §4, rule by rule, on
small hand-built stacks (walkfuzz.targets.minivm.case.builder). Expected frames are written from the
rules."""

from __future__ import annotations

import pytest

from walkfuzz.targets.minivm import spec
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.builder import (
    COMPILED_FRAME,
    NATIVE_FRAME,
    PC_C,
    PC_COMPILED,
    PC_COMPILED_INLINED,
    PC_COMPILED_PROLOGUE,
    PC_ENTRY,
    PC_INTERPRETED,
    PC_NATIVE,
    PC_NO_BLOB,
    PC_NOT_CODE,
    PC_STUB,
    STUB_FRAME,
    CaseBuilder,
)
from walkfuzz.targets.minivm.case.format import Case, Frame
from walkfuzz.targets.minivm.vm_model import (
    FrameType,
    Option,
    ThreadFlag,
    ThreadState,
    WalkCode,
    WalkEntry,
)

M = vm.method_handle
JAVA, INLINED, NATIVE, NON_JAVA = (int(FrameType.JAVA), int(FrameType.JAVA_INLINED),
                                   int(FrameType.JAVA_NATIVE), int(FrameType.NON_JAVA))
ALL = int(Option.INCLUDE_NON_JAVA_FRAMES)


def mixed_stack() -> tuple[CaseBuilder, dict[str, tuple[int, int, int]]]:
    """Top to bottom: stub, compiled (inlined pc), interpreted, native wrapper <- C <- entry
    (no saved anchor) <- C thread start. Returns the builder and each frame's (pc, sp, fp)."""
    b = CaseBuilder(stack_words=64)
    hi = b.hi
    start_fp = b.c_frame(hi - 16, ret=0, caller_fp=0)                     # sp hi-32
    entry_fp = b.entry_frame(hi - 48, ret=PC_C, caller_fp=start_fp, anchor=(0, 0, 0))
    entry_sp = entry_fp - 32
    # interpreted frame called by the entry frame
    interp_fp = b.interpreted_frame(entry_sp - 16, ret=PC_ENTRY, caller_fp=entry_fp,
                                    method=0, bci=42)
    interp_sp = interp_fp - 24
    # compiled frame called by the interpreted one: sp + 32 = interp_sp - ... caller sp
    compiled_sp = interp_sp - 8 - COMPILED_FRAME + 8  # its caller's sp is compiled_sp + size
    b.fixed_frame(compiled_sp, COMPILED_FRAME, ret=PC_INTERPRETED, caller_fp=interp_fp)
    stub_sp = compiled_sp - STUB_FRAME
    b.fixed_frame(stub_sp, STUB_FRAME, ret=PC_COMPILED_INLINED, caller_fp=0x5A5A)
    frames = {
        "stub": (PC_STUB, stub_sp, 0x77),
        "compiled": (PC_COMPILED_INLINED, compiled_sp, 0x5A5A),
        "interpreted": (PC_INTERPRETED, interp_sp, interp_fp),
        "entry": (PC_ENTRY, entry_sp, entry_fp),
        "start": (PC_C, hi - 32, start_fp),
    }
    return b, frames


def run(case: Case, **kw: int) -> spec.WalkResult:
    return spec.walk(case, **kw)  # type: ignore[arg-type]


def phys(frame: tuple[int, int, int]) -> tuple[int, int, int]:
    pc, sp, fp = frame
    return pc, sp, fp


def test_java_only_walk_of_mixed_stack() -> None:
    b, f = mixed_stack()
    case = b.case(context=f["stub"])
    result = run(case)
    pc, sp, fp = f["compiled"]
    ipc, isp, ifp = f["interpreted"]
    assert result.run_result == vm.TraceKind.JAVA
    assert result.frames == (
        Frame(INLINED, 4, 3, M(2), pc, sp, fp), Frame(INLINED, 4, 7, M(1), pc, sp, fp),
        Frame(JAVA, 4, 9, M(0), pc, sp, fp), Frame(JAVA, 0, 42, M(0), ipc, isp, ifp))
    assert result.end_code == WalkCode.NO_FRAME  # entry frame without a saved anchor


def test_walk_with_non_java_frames_follows_entry_into_c() -> None:
    b, f = mixed_stack()
    result = run(b.case(context=f["stub"], options=ALL))
    types = [fr.type for fr in result.frames]
    assert types == [NON_JAVA, INLINED, INLINED, JAVA, JAVA, NON_JAVA, NON_JAVA]
    assert [(fr.pc, fr.sp, fr.fp) for fr in result.frames[-2:]] == [f["entry"], f["start"]]
    assert result.end_code == WalkCode.NO_FRAME and "return address 0" in result.reason


def test_compiled_pc_without_descriptor_has_bci_minus_one() -> None:
    b = CaseBuilder(8)
    sp = b.fixed_frame(b.hi - COMPILED_FRAME, COMPILED_FRAME, ret=0, caller_fp=0)
    result = run(b.case(context=(PC_COMPILED, sp, 0)))
    assert result.frames == (Frame(JAVA, 4, -1, M(0), PC_COMPILED, sp, 0),)


def test_native_wrapper_frame() -> None:
    b = CaseBuilder(8)
    sp = b.fixed_frame(b.hi - NATIVE_FRAME, NATIVE_FRAME, ret=0, caller_fp=0)
    result = run(b.case(context=(PC_NATIVE, sp, 9)))
    assert result.frames == (Frame(NATIVE, -1, -1, M(1), PC_NATIVE, sp, 9),)


def test_first_frame_not_built_takes_return_address_at_sp() -> None:
    b = CaseBuilder(16)
    caller = b.fixed_frame(b.hi - COMPILED_FRAME, COMPILED_FRAME, ret=0, caller_fp=0)
    sp = caller - 8
    b.put(sp, PC_COMPILED)
    result = run(b.case(context=(PC_COMPILED_PROLOGUE, sp, 0x1234)))
    assert [(fr.pc, fr.sp, fr.fp) for fr in result.frames] == [
        (PC_COMPILED_PROLOGUE, sp, 0x1234), (PC_COMPILED, caller, 0x1234)]


def test_prologue_pc_as_return_address_is_bad_pc() -> None:
    b = CaseBuilder(16)
    sp = b.fixed_frame(b.hi - 2 * COMPILED_FRAME, COMPILED_FRAME, ret=PC_COMPILED_PROLOGUE,
                       caller_fp=0)
    result = run(b.case(context=(PC_COMPILED, sp, 0)))
    assert len(result.frames) == 1 and result.end_code == WalkCode.BAD_PC


def test_entry_frame_jumps_to_saved_anchor() -> None:
    b = CaseBuilder(32)
    older_sp = b.fixed_frame(b.hi - COMPILED_FRAME, COMPILED_FRAME, ret=0, caller_fp=0)
    b.put(older_sp - 8, PC_COMPILED)  # anchor pc 0: taken from [sp - 8]
    entry_fp = b.entry_frame(older_sp - 64, ret=PC_C, caller_fp=0, anchor=(older_sp, 0x42, 0))
    result = run(b.case(context=(PC_ENTRY, entry_fp - 24, entry_fp)))
    assert result.frames == (Frame(JAVA, 4, -1, M(0), PC_COMPILED, older_sp, 0x42),)


def test_entry_anchor_with_unreadable_pc_is_bad_sp() -> None:
    b = CaseBuilder(8)
    entry_fp = b.entry_frame(b.hi - 16, ret=0, caller_fp=0, anchor=(b.lo, 0, 0))
    result = run(b.case(context=(PC_ENTRY, entry_fp - 24, entry_fp)))
    assert result.end_code == WalkCode.BAD_SP and result.frames == ()


@pytest.mark.parametrize("state, anchor_pc", [(ThreadState.IN_VM, PC_INTERPRETED),
                                              (ThreadState.IN_NATIVE, 0),
                                              (ThreadState.BLOCKED, 0)])
def test_anchored_states_start_at_the_anchor(state: ThreadState, anchor_pc: int) -> None:
    b = CaseBuilder(16)
    fp = b.interpreted_frame(b.hi - 16, ret=0, caller_fp=0, method=1, bci=3)
    sp = fp - 16
    b.put(sp - 8, PC_INTERPRETED)
    case = b.case(context=(PC_NOT_CODE, 0, 0), state=state, anchor=(sp, fp, anchor_pc),
                  entry=WalkEntry.NULL_CONTEXT)
    assert run(case).frames == (Frame(JAVA, 0, 3, M(1), PC_INTERPRETED, sp, fp),)


def test_anchor_pc_zero_and_sp_at_stack_bottom_is_bad_sp() -> None:
    b = CaseBuilder(4)
    case = b.case(context=(0, 0, 0), state=ThreadState.IN_VM, anchor=(b.lo, 0, 0))
    assert run(case) == spec.WalkResult(WalkCode.BAD_SP, (), WalkCode.BAD_SP, (), run(case).reason)


def test_not_java_thread_walks_c_frames_as_cpp_trace() -> None:
    b = CaseBuilder(8)
    fp = b.c_frame(b.hi - 16, ret=0, caller_fp=0)
    case = b.case(context=(PC_C, fp - 8, fp), state=ThreadState.NOT_JAVA, options=ALL)
    result = run(case)
    assert result.run_result == vm.TraceKind.CPP
    assert result.frames == (Frame(NON_JAVA, -1, -1, 0, PC_C, fp - 8, fp),)


def _c_case(**kw: int) -> Case:
    b = CaseBuilder(8)
    fp = b.c_frame(b.hi - 16, ret=0, caller_fp=0)
    return b.case(context=(PC_C, fp, fp), **kw)


@pytest.mark.parametrize("kw, code", [
    ({"state": ThreadState.NOT_JAVA}, WalkCode.NO_THREAD),
    ({"flags": 0}, WalkCode.NO_THREAD),
    ({"flags": ThreadFlag.SUSPENDED, "options": Option.WALK_SAME_THREAD}, WalkCode.NO_THREAD),
    ({"state": ThreadState.EXITING}, WalkCode.THREAD_EXIT),
    ({"state": ThreadState.NEW}, WalkCode.UNSAFE_STATE),
    ({"state": ThreadState.IN_TRANSITION}, WalkCode.UNSAFE_STATE),
    ({"state": ThreadState.IN_VM}, WalkCode.NO_TOP_JAVA_FRAME),
    ({"entry": WalkEntry.NULL_CONTEXT}, WalkCode.BAD_ARGUMENT),
])
def test_run_refusals(kw: dict[str, int], code: WalkCode) -> None:
    result = run(_c_case(**kw))
    assert (result.run_result, result.frames, result.end_code) == (code, (), code)
    assert result.reason


def test_same_thread_walk_needs_current_flag_only() -> None:
    case = _c_case(flags=ThreadFlag.CURRENT, options=Option.WALK_SAME_THREAD | ALL)
    assert run(case).run_result == vm.TraceKind.JAVA


def test_from_frame_ignores_the_state_for_the_start_frame() -> None:
    case = _c_case(state=ThreadState.IN_VM, entry=WalkEntry.FROM_FRAME, options=ALL)
    assert len(run(case).frames) == 1


def test_null_handler_is_bad_argument() -> None:
    case = _c_case()
    assert spec.run_with_iterator(case, spec.Physical(0, 0, 0), 0, None) == WalkCode.BAD_ARGUMENT


def _one(context: tuple[int, int, int], b: CaseBuilder | None = None, **kw: int) -> int:
    b = b or CaseBuilder(8)
    return run(b.case(context=context, options=ALL, **kw)).end_code


def test_walk_errors_each_with_its_rule() -> None:
    b = CaseBuilder(8)
    hi, lo = b.hi, b.lo
    assert _one((PC_C, hi, hi - 16)) == WalkCode.BAD_SP            # sp == stack_hi
    assert _one((PC_C, lo - 8, lo)) == WalkCode.BAD_SP             # below the stack
    assert _one((PC_C, lo + 4, lo + 16)) == WalkCode.BAD_SP        # misaligned
    assert _one((PC_NOT_CODE, lo, lo)) == WalkCode.BAD_PC
    assert _one((PC_NO_BLOB, lo, lo)) == WalkCode.BAD_PC
    assert _one((PC_C, lo + 16, lo + 8)) == WalkCode.BAD_FP        # fp < sp
    assert _one((PC_C, lo, hi - 8)) == WalkCode.BAD_FP             # fp + 16 > hi
    assert _one((PC_C, lo, lo + 4)) == WalkCode.BAD_FP             # misaligned fp
    assert _one((PC_ENTRY, lo, lo + 16)) == WalkCode.BAD_FP        # sp > fp - 24
    assert _one((PC_INTERPRETED, lo, lo + 8)) == WalkCode.BAD_FP   # sp > fp - 16
    assert _one((PC_INTERPRETED, lo, lo + 16)) == WalkCode.BAD_METHOD  # [fp-8] = 0


def test_bad_bcp() -> None:
    b = CaseBuilder(8)
    fp = b.interpreted_frame(b.hi - 16, ret=0, caller_fp=0, method=2, bci=10)  # code_size 10
    assert _one((PC_INTERPRETED, fp - 16, fp), b) == WalkCode.BAD_BCP
    b.put(fp - 16, vm.bytecode_base(2) - 1)
    assert _one((PC_INTERPRETED, fp - 16, fp), b) == WalkCode.BAD_BCP


def test_fixed_frame_running_off_the_stack_is_bad_sp() -> None:
    b = CaseBuilder(2)
    assert _one((PC_COMPILED, b.lo, 0), b) == WalkCode.BAD_SP


def test_sender_sp_not_growing_is_bad_sp() -> None:
    b = CaseBuilder(16)
    fp = b.hi - 16
    b.entry_frame(fp, ret=0, caller_fp=0, anchor=(fp - 64, 0, PC_COMPILED))  # anchor below
    result = run(b.case(context=(PC_ENTRY, fp - 24, fp)))
    assert (result.frames, result.end_code) == ((), WalkCode.BAD_SP)
    assert "must grow" in result.reason


def test_depth_limit_after_max_depth_physical_frames() -> None:
    n = vm.MAX_DEPTH + 1
    b = CaseBuilder(stack_words=2 * n + 2)
    fps = [b.hi - 16 * (i + 1) for i in range(n)]  # fps[0] outermost
    for i, fp in enumerate(fps):
        b.c_frame(fp, ret=PC_C if i else 0, caller_fp=fps[i - 1] if i else 0)
    top = fps[-1]
    result = run(b.case(context=(PC_C, top, top), options=ALL))
    assert (len(result.frames), result.end_code) == (vm.MAX_DEPTH, WalkCode.DEPTH_LIMIT)
    java_only = run(b.case(context=(PC_C, top, top)))
    assert (java_only.frames, java_only.end_code) == ((), WalkCode.DEPTH_LIMIT)


def test_next_frame_is_sticky_and_rewind_replays() -> None:
    b, f = mixed_stack()
    case = b.case(context=f["stub"])
    seen: list[list[tuple[int, Frame | None]]] = []

    def handler(it: spec.SpecIterator) -> None:
        for _ in range(2):
            calls = [it.next_frame() for _ in range(7)]
            seen.append(calls)
            it.rewind()

    spec.run_with_iterator(case, spec.Physical(f["stub"][1], f["stub"][2], f["stub"][0]), 0,
                           handler)
    assert seen[0] == seen[1]
    assert [code for code, _ in seen[0]] == [1, 1, 1, 1, 0, 0, 0]
    assert all(frame is None for _, frame in seen[0][4:])


def test_from_frame_of_any_frame_gives_the_suffix() -> None:
    b, f = mixed_stack()
    case = b.case(context=f["stub"], options=ALL)
    full = run(case)
    physical = sorted({(fr.sp, fr.fp, fr.pc) for fr in full.frames})
    for sp, fp, pc in physical:
        suffix = run(case, start=spec.Physical(sp, fp, pc), entry=WalkEntry.FROM_FRAME)
        first = next(i for i, fr in enumerate(full.frames) if fr.sp == sp)
        assert suffix.frames == full.frames[first:]


@pytest.mark.parametrize("state, flags, bits", [
    (ThreadState.NOT_JAVA, 1, -1), (ThreadState.NEW, 0, 0), (ThreadState.IN_JAVA, 0, 5),
    (ThreadState.IN_NATIVE, 1, 0x500005), (ThreadState.BLOCKED, 0, 0x401),
    (ThreadState.EXITING, 1, 0x100002)])
def test_thread_state_bits(state: ThreadState, flags: int, bits: int) -> None:
    assert spec.thread_state_bits(_c_case(state=state, flags=flags)) == bits


def test_steps_explain_each_physical_frame() -> None:
    b, f = mixed_stack()
    result = run(b.case(context=f["stub"]))
    kinds = [s.kind.name if s.kind else None for s in result.steps]
    assert kinds[:3] == ["STUB", "COMPILED", "INTERPRETED"]
    assert result.steps[0].reason == "skipped" and result.steps[-1].code == WalkCode.NO_FRAME
