"""What a queue handler walks at the safepoint is the true trace at enqueue time (the C
generator's truth), and an element whose frame left the stack gets a defined error."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from walkfuzz.core.native import load
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case import encode as enc
from walkfuzz.targets.minivm.case.builder import (
    COMPILED_FRAME,
    NATIVE_FRAME,
    PC_C,
    PC_COMPILED,
    PC_COMPILED_INLINED,
    PC_ENTRY,
    PC_INTERPRETED,
    PC_NATIVE,
    PC_STUB,
    STUB_FRAME,
    CaseBuilder,
)
from walkfuzz.targets.minivm.case.format import Case, Frame
from walkfuzz.targets.minivm.case.queue_program import Opcode, QueueOp
from walkfuzz.targets.minivm.queue.cases import base_case, physical_frames, with_program
from walkfuzz.targets.minivm.queue.model import (
    FRAME_GONE,
    MAX_CHECKED_CALLERS,
    Element,
    EventKind,
    QueueModel,
    TruthOracle,
)
from walkfuzz.targets.minivm.queue.run import run_case

STATES = (vm.ThreadState.IN_JAVA, vm.ThreadState.IN_VM, vm.ThreadState.IN_NATIVE,
          vm.ThreadState.BLOCKED)
DOCUMENTED_ENQUEUE = {1, 0, -1, -2, -3, -4, -5, -6, -7, *range(-23, -16)}
DOCUMENTED_WALK_END = {0, 1, -1, *range(-24, -16)}   # 1: cut at the handler's frame limit


def _walkable(seed: int, state: int, options: int) -> tuple[bytes, Case]:
    for s in range(seed, seed + 100):
        data, case = base_case(s, state, options, min_frames=2, max_frames=24)
        if case.truth is not None and case.truth.frames and case.truth.end_code == 0:
            return data, case
    raise AssertionError(f"no walkable case from seed {seed}")


def _true_suffix(case: Case, sp: int) -> tuple[Frame, ...]:
    """The true frames from the first bytecode-backed frame at or above sp (toward callers)."""
    assert case.truth is not None
    frames = case.truth.frames
    top = next(f for f in frames if f.sp >= sp and f.type in (1, 2))
    return tuple(f for f in frames if f.sp >= top.sp)


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("options", [0, 1, 2, 3])
def test_element_walk_is_the_true_trace_at_enqueue(state: int, options: int) -> None:
    checked = 0
    for seed in range(1, 9):
        data, case = _walkable(seed * 97, state, options)
        frames = physical_frames(case)
        ops = [QueueOp(Opcode.REGISTER, n=len(frames), options=options)]
        ops += [QueueOp(Opcode.ENQUEUE, queue=0, pc=pc, sp=sp, fp=fp, arg=i)
                for i, (pc, sp, fp) in enumerate(frames)]
        top_pc, top_sp, top_fp = frames[0]
        ops.append(QueueOp(Opcode.SAFEPOINT, pc=top_pc, sp=top_sp, fp=top_fp))
        run = run_case(with_program(data, ops))
        elements = [e for e in run.events if e.kind == EventKind.ELEMENT]
        enqueued = [e for e in run.events if e.kind == EventKind.OP and e.op in
                    range(1, len(frames) + 1) and e.code == 1]
        assert len(elements) == len(enqueued)
        for e in elements:
            # threads outside Java enqueue their anchor whatever the context says
            sp = frames[e.arg][1] if state == vm.ThreadState.IN_JAVA else frames[0][1]
            assert e.code == 0, f"seed {seed}: element {e.arg} ended with {e.code}"
            assert e.frames == _true_suffix(case, sp), f"seed {seed}: element {e.arg}"
            checked += 1
    assert checked >= 8


def _interpreted_case() -> tuple[bytes, Case, Frame]:
    for seed in range(1, 400):
        data, case = base_case(seed, vm.ThreadState.IN_JAVA, 0, min_frames=2, max_frames=12)
        assert case.truth is not None
        first = next((f for f in case.truth.frames if f.type in (1, 2)), None)
        if first is not None and first.comp_level == 0:
            code_size = case.methods[(first.method - vm.METHODS) // vm.METHOD_STRIDE].code_size
            if code_size > 1:
                return data, case, first
    raise AssertionError("the generator gave no case with an interpreted top frame")


def test_interpreted_top_keeps_its_enqueue_time_bci() -> None:
    """The thread runs on to its poll: the top frame's bcp slot changes after the signal."""
    data, case, top = _interpreted_case()
    index = (top.method - vm.METHODS) // vm.METHOD_STRIDE
    moved_bci = (top.bci + 1) % case.methods[index].code_size
    bcp = vm.BYTECODE + vm.BYTECODE_STRIDE * index + moved_bci
    frame = {"pc": top.pc, "sp": top.sp, "fp": top.fp}
    ops = [QueueOp(Opcode.REGISTER, n=2, options=0),
           QueueOp(Opcode.HANDLER, queue=0, which=0, mode=2, options=0),
           QueueOp(Opcode.ENQUEUE, queue=0, **frame, arg=5),
           QueueOp(Opcode.POKE, pc=top.fp - 16, arg=bcp),
           QueueOp(Opcode.SAFEPOINT, **frame)]
    run = run_case(with_program(data, ops))
    start = next(e for e in run.events if e.kind == EventKind.START)
    element = next(e for e in run.events if e.kind == EventKind.ELEMENT)
    assert element.frames[0].bci == top.bci          # what the signal saw
    assert start.frames[0].bci == moved_bci          # what the stack says now


def test_popped_frame_is_gone() -> None:
    data, case = _walkable(5, vm.ThreadState.IN_JAVA, 0)
    frames = physical_frames(case)
    assert len(frames) >= 2, f"the seeded case has {len(frames)} physical frame(s), needs two"
    (pc, sp, fp), poll = frames[0], frames[1]
    ops = [QueueOp(Opcode.REGISTER, n=1, options=0),
           QueueOp(Opcode.ENQUEUE, queue=0, pc=pc, sp=sp, fp=fp, arg=1),
           QueueOp(Opcode.SAFEPOINT, pc=poll[0], sp=poll[1], fp=poll[2])]
    element = next(e for e in run_case(with_program(data, ops)).events
                   if e.kind == EventKind.ELEMENT)
    assert (element.code, element.frames) == (FRAME_GONE, ())


def test_replaced_frame_is_gone() -> None:
    """Same sp, but the return address of the enqueued frame changed: another frame is there."""
    data, case = _walkable(11, vm.ThreadState.IN_JAVA, 0)
    frames = physical_frames(case)
    assert len(frames) >= 2, f"the seeded case has {len(frames)} physical frame(s), needs two"
    top, caller = frames[0], frames[1]
    base = [QueueOp(Opcode.REGISTER, n=1, options=0),
            QueueOp(Opcode.ENQUEUE, queue=0, pc=top[0], sp=top[1], fp=top[2], arg=1)]
    poll = QueueOp(Opcode.SAFEPOINT, pc=top[0], sp=top[1], fp=top[2])
    replaced = QueueOp(Opcode.POKE, pc=caller[1] - 8, arg=vm.NATIVE_TEXT + 0x40)
    kept = next(e for e in run_case(with_program(data, [*base, poll])).events
                if e.kind == EventKind.ELEMENT)
    gone = next(e for e in run_case(with_program(data, [*base, replaced, poll])).events
                if e.kind == EventKind.ELEMENT)
    assert kept.code == 0 and kept.frames
    assert (gone.code, gone.frames) == (FRAME_GONE, ())


words = st.integers(0, 2**64 - 1)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(data=st.data(), seed=st.integers(1, 40), state=st.sampled_from(STATES),
       options=st.sampled_from([0, 1, 2, 3]))
def test_any_program_gives_documented_codes(data: st.DataObject, seed: int, state: int,
                                            options: int) -> None:
    """Wild contexts, wild safepoint frames and stack words overwritten anywhere: every result
    is a documented code and nothing crashes."""
    base, case = _walkable(seed, state, options)
    lo, hi = case.stack_lo, case.stack_hi
    near = st.one_of(st.integers(lo - 64, hi + 64), words)
    frame = st.fixed_dictionaries({"pc": st.one_of(st.sampled_from([f[0] for f in
                                                                     physical_frames(case)]),
                                                   words),
                                   "sp": near, "fp": near})
    op = st.one_of(
        st.builds(QueueOp, st.just(Opcode.REGISTER), n=st.integers(-1, 3),
                  options=st.just(options)),
        frame.map(lambda f: QueueOp(Opcode.ENQUEUE, queue=0, **f)),
        frame.map(lambda f: QueueOp(Opcode.COMPRESS, queue=0, **f)),
        frame.map(lambda f: QueueOp(Opcode.SAFEPOINT, **f)),
        st.builds(lambda a, v: QueueOp(Opcode.POKE, pc=a, arg=v),
                  st.integers(lo // 8, hi // 8 - 1).map(lambda w: w * 8), words),
        st.builds(QueueOp, st.just(Opcode.HANDLER), queue=st.just(0), which=st.integers(0, 1),
                  mode=st.integers(0, 2), options=st.just(options)),
    )
    ops = data.draw(st.lists(op, min_size=1, max_size=20))
    run = run_case(with_program(base, ops))
    assert run.status == 0 and run.violations == 0, run.violation
    for e in run.events:
        if e.kind == EventKind.OP and ops[e.op].code in (Opcode.ENQUEUE, Opcode.COMPRESS):
            assert e.code in DOCUMENTED_ENQUEUE | {2}, f"op {ops[e.op]} returned {e.code}"
        elif e.kind in (EventKind.ELEMENT, EventKind.START, EventKind.END):
            assert e.code in DOCUMENTED_WALK_END | {2}, f"handler walk ended with {e.code}"


def _case_with_interpreted_caller() -> tuple[bytes, Case, tuple[int, int, int], int]:
    """A case whose top Java frame's caller is interpreted: the data, the case, the top frame
    and the caller's bcp slot."""
    for seed in range(1, 400):
        data, case = base_case(seed, vm.ThreadState.IN_JAVA, 0, min_frames=3, max_frames=12)
        if case.truth is None or case.truth.end_code != 0 or not case.truth.frames:
            continue
        top = physical_frames(case)[0]
        element = TruthOracle(case).probe(*top)
        if isinstance(element, Element) and element.sp == top[1] and element.callers:
            return data, case, top, element.callers[0][0]
    raise AssertionError("the generator gave no case with an interpreted caller")


def _other_bcp(case: Case, slot: int) -> int:
    """Another valid bcp of the interpreted frame whose bcp slot is `slot`."""
    assert case.truth is not None
    frame = next(f for f in case.truth.frames
                 if f.fp - 16 == slot and f.type == vm.FrameType.JAVA and f.comp_level == 0)
    index = (frame.method - vm.METHODS) // vm.METHOD_STRIDE
    size = case.methods[index].code_size
    other = (frame.bci + 1) % size if size > 1 else frame.bci
    return vm.BYTECODE + vm.BYTECODE_STRIDE * index + other


@pytest.mark.parametrize("moved", [False, True])
def test_caller_that_ran_on_means_the_frame_is_gone(moved: bool) -> None:
    """Live stress found it: the element's frame returned and its interpreted caller called
    it again before the safepoint — same sp, same return address (the interpreter's), but
    the caller's bcp moved. Its walk would report the caller's new bci, so it is gone; an
    unchanged caller still walks the true trace. The model predicts the same log."""
    data, case, (pc, sp, fp), slot = _case_with_interpreted_caller()
    bcp = _other_bcp(case, slot) if moved else int.from_bytes(
        case.stack[slot - case.stack_lo:slot - case.stack_lo + 8], "little")
    if moved:
        assert bcp != int.from_bytes(case.stack[slot - case.stack_lo:slot - case.stack_lo + 8],
                                     "little"), "the caller's method has a single bci"
    ops = [QueueOp(Opcode.REGISTER, n=1, options=0),
           QueueOp(Opcode.ENQUEUE, queue=0, pc=pc, sp=sp, fp=fp, arg=1),
           QueueOp(Opcode.POKE, pc=slot, arg=bcp),
           QueueOp(Opcode.SAFEPOINT, pc=pc, sp=sp, fp=fp)]
    run = run_case(with_program(data, ops))
    element = next(e for e in run.events if e.kind == EventKind.ELEMENT)
    if moved:
        assert (element.code, element.frames) == (FRAME_GONE, ())
    else:
        assert (element.code, element.frames) == (0, _true_suffix(case, sp))
    assert QueueModel(TruthOracle(case)).run(ops) == run.events


def _through_c2i_adapter() -> tuple[CaseBuilder, tuple[int, int, int], int]:
    """Compiled code calling an interpreted method through a stub (the live VM's c2i
    adapter); returns the builder, the interpreted top frame and the stub's return slot.

        C frame (outermost)      fp_c
        compiled  S=32           [sp+24] PC_C
        stub      S=16           [sp+8]  PC_COMPILED    <- the compiled caller's call site
        interpreted (top)        [fp+8]  PC_STUB        <- the same for every call site
    """
    b = CaseBuilder(stack_words=32)
    fp_c = b.c_frame(b.hi - 16, ret=0, caller_fp=0)
    compiled = b.fixed_frame(fp_c - COMPILED_FRAME, COMPILED_FRAME, ret=PC_C, caller_fp=fp_c)
    stub = b.fixed_frame(compiled - STUB_FRAME, STUB_FRAME, ret=PC_COMPILED, caller_fp=fp_c)
    fp = b.interpreted_frame(stub - 16, ret=PC_STUB, caller_fp=fp_c, method=0, bci=5)
    return b, (PC_INTERPRETED, fp - 16, fp), stub + STUB_FRAME - 8


def _through_upcall() -> tuple[CaseBuilder, tuple[int, int, int], int]:
    """A native method calling back into Java: the top frame returns to the entry stub, whose
    saved anchor is the native wrapper; returns the builder, the top frame and the wrapper's
    return slot.

        C frame (outermost)      fp_c
        compiled  S=32           [sp+24] PC_C
        native wrapper S=32      [sp+24] PC_COMPILED    <- the compiled caller's call site
        C frame                  [fp+8]  PC_C
        entry                    [fp-8 .. fp-24] anchor = the wrapper (sp, fp, PC_NATIVE)
        interpreted (top)        [fp+8]  PC_ENTRY       <- the same for every upcall
    """
    b = CaseBuilder(stack_words=48)
    fp_c = b.c_frame(b.hi - 16, ret=0, caller_fp=0)
    compiled = b.fixed_frame(fp_c - COMPILED_FRAME, COMPILED_FRAME, ret=PC_C, caller_fp=fp_c)
    wrapper = b.fixed_frame(compiled - NATIVE_FRAME, NATIVE_FRAME, ret=PC_COMPILED,
                            caller_fp=fp_c)
    wrapper_fp = wrapper + NATIVE_FRAME - 16
    fp_native = b.c_frame(wrapper - 16, ret=PC_C, caller_fp=wrapper_fp)
    fp_entry = b.entry_frame(fp_native - 48, ret=PC_C, caller_fp=fp_native,
                             anchor=(wrapper, wrapper_fp, PC_NATIVE))
    fp = b.interpreted_frame(fp_entry - 48, ret=PC_ENTRY, caller_fp=fp_entry, method=0, bci=5)
    return b, (PC_INTERPRETED, fp - 16, fp), wrapper + NATIVE_FRAME - 8


@pytest.mark.parametrize("layout", [_through_c2i_adapter, _through_upcall])
@pytest.mark.parametrize("recalled", [False, True])
def test_recall_from_another_call_site_means_the_frame_is_gone(layout: Any,
                                                               recalled: bool) -> None:
    """Live stress found it (queue mode, caller bci 12 for 6): the top frame returned past
    its poll, and the compiled caller called it again from another call site before the
    safepoint. The top frame's sp and return address are the same (the adapter's or the
    entry stub's are shared by every call site); what changed is the return address under
    the pass-through frames. So the element is gone; an unchanged stack walks as it was."""
    b, (pc, sp, fp), call_site_slot = layout()
    data = enc.encode(b.case(context=(pc, sp, fp)))
    ops = [QueueOp(Opcode.REGISTER, n=1, options=0),
           QueueOp(Opcode.ENQUEUE, queue=0, pc=pc, sp=sp, fp=fp, arg=1)]
    if recalled:
        ops.append(QueueOp(Opcode.POKE, pc=call_site_slot, arg=PC_COMPILED_INLINED))
    ops.append(QueueOp(Opcode.SAFEPOINT, pc=pc, sp=sp, fp=fp))
    element = next(e for e in run_case(with_program(data, ops)).events
                   if e.kind == EventKind.ELEMENT)
    if recalled:
        assert (element.code, element.frames) == (FRAME_GONE, ())
    else:
        assert element.code == 0
        assert [(f.type, f.bci) for f in element.frames if f.type != vm.FrameType.JAVA_NATIVE] == [
            (vm.FrameType.JAVA, 5), (vm.FrameType.JAVA, -1)]   # the top, the compiled caller


def test_checked_caller_bound_matches_the_core() -> None:
    _, lib = load()
    assert MAX_CHECKED_CALLERS == lib.WF_QUEUE_MAX_CHECKED_CALLERS
