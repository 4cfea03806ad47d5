"""The C reference walker against the Python spec (walkfuzz.targets.minivm.spec) and the generator's
truth: native == spec == truth on generated layouts of every frame kind, thread state, option and
entry; native == spec, no fault, no hang on perturbed and mutated layouts; every documented walk
code produced by some case, with both sides agreeing."""

from __future__ import annotations

import collections
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from walkfuzz.core.native import load
from walkfuzz.targets.minivm import spec
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import encode as enc
from walkfuzz.targets.minivm.case import format as C
from walkfuzz.targets.minivm.case import native as case_native
from walkfuzz.targets.minivm.case.builder import (
    PC_C,
    PC_COMPILED,
    PC_ENTRY,
    PC_INTERPRETED,
    PC_NO_BLOB,
    CaseBuilder,
)
from walkfuzz.targets.minivm.case.strategies import generated_cases, profile
from walkfuzz.targets.minivm.vm_model import FrameKind, Option, ThreadState, WalkCode, WalkEntry

ffi, lib = load()
ALL_MUTATIONS = 15


def walk_both(data: bytes) -> tuple[C.Case, case_native.NativeRun, spec.WalkResult]:
    case = dec.decode(data)
    decoded = case_native.decode(data)
    assert decoded.status == 0, decoded
    return case, case_native.run_mapped(), spec.walk(case)


def assert_native_is_spec(native: case_native.NativeRun, want: spec.WalkResult) -> None:
    assert native.finding not in ("crash", "hang"), native.fault
    assert native.run_result == want.run_result, want.reason
    for i, (got, expected) in enumerate(zip(native.frames, want.frames, strict=False)):
        assert got == expected, f"frame {i} differs; spec steps: {want.steps[-3:]}"
    assert len(native.frames) == len(want.frames), want.reason
    assert native.end_code == want.end_code, want.reason
    assert native.state_after == want.end_code


def assert_truth(case: C.Case, native: case_native.NativeRun, want: spec.WalkResult) -> None:
    assert case.truth is not None
    assert (want.run_result, want.frames, want.end_code) == (
        case.truth.run_result, case.truth.frames, case.truth.end_code), want.reason
    assert native.finding == "none" and native.oracle == "truth"
    assert_native_is_spec(native, want)


# ---- unmutated layouts: native == spec == truth --------------------------------------------

@profile()
@given(generated_cases())
def test_generated_layouts_walk_to_the_truth(data: bytes) -> None:
    assert_truth(*walk_both(data))


@pytest.mark.parametrize("state", list(ThreadState))
@pytest.mark.parametrize("options", range(4))
def test_every_state_and_option_walks_to_the_truth(state: ThreadState, options: int) -> None:
    rng = random.Random(state * 4 + options)
    for _ in range(3):
        data = case_native.generate(data=rng.randbytes(rng.randrange(300)), state=state,
                                    options=options)
        case, native, want = walk_both(data)
        assert (case.thread.state, case.walk.options) == (state, options)
        assert_truth(case, native, want)


@pytest.mark.parametrize("entry", list(WalkEntry))
def test_every_entry_walks_to_the_truth(entry: WalkEntry) -> None:
    for seed in range(8):
        case, native, want = walk_both(case_native.generate(seed=seed, entry=entry))
        assert case.walk.entry == entry
        assert_truth(case, native, want)


@pytest.mark.parametrize("seed", range(3))
def test_deep_layouts_walk_to_the_truth(seed: int) -> None:
    data = case_native.generate(seed=seed, state=ThreadState.IN_JAVA, options=seed % 2,
                                consistent=1, min_frames=3000, max_frames=4000)
    case, native, want = walk_both(data)
    assert len(want.frames) >= 3000
    assert_truth(case, native, want)


def test_generator_bytes_reach_every_kind_state_option_and_entry() -> None:
    """What st.binary() feeds the generator reaches everything the truth tests rely on."""
    rng = random.Random(1)
    seen: dict[str, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    for _ in range(300):
        case = dec.decode(case_native.generate(data=rng.randbytes(rng.randrange(512))))
        result = spec.walk(case)
        seen["state"][case.thread.state] += 1
        seen["options"][case.walk.options & 3] += 1
        seen["entry"][case.walk.entry] += 1
        seen["kind"].update(s.kind for s in result.steps if s.kind is not None)
        seen["frame type"].update(f.type for f in result.frames)
        seen["end"][result.end_code] += 1
    assert set(seen["state"]) == set(ThreadState)
    assert set(seen["options"]) == {0, 1, 2, 3}
    assert set(seen["entry"]) == set(WalkEntry)
    assert set(seen["kind"]) == set(FrameKind)
    assert set(seen["frame type"]) == set(vm.FrameType)
    assert {WalkCode.NO_FRAME, WalkCode.NO_THREAD, WalkCode.THREAD_EXIT,
            WalkCode.UNSAFE_STATE} <= set(seen["end"])


# ---- perturbed and mutated layouts: native == spec, no fault, no hang -----------------------

REGION_WORDS = [0, 1, vm.STACK_TOP, vm.STACK_TOP - 8, vm.CODE_HEAP, vm.NATIVE_TEXT,
                vm.METHODS, vm.BYTECODE, 2**64 - 8, 0x00007FFFFFFFF000, PC_NO_BLOB]


@st.composite
def perturbations(draw: st.DrawFn) -> list[tuple[str, int, int]]:
    """Edits: ("sp"|"fp"|"pc", how, value) of the context, ("stack", index, xor) of bytes."""
    edits = []
    for _ in range(draw(st.integers(1, 4))):
        target = draw(st.sampled_from(["sp", "fp", "pc", "stack", "stack"]))
        if target == "stack":
            edits.append((target, draw(st.integers(0, 2**20)), draw(st.integers(1, 255))))
        else:
            how = draw(st.sampled_from(["add", "set", "flip"]))
            value = (draw(st.integers(-256, 256)) if how == "add"
                     else draw(st.sampled_from(REGION_WORDS) | st.integers(0, 2**64 - 1))
                     if how == "set" else draw(st.integers(0, 63)))
            edits.append((target, {"add": 0, "set": 1, "flip": 2}[how], value))
    return edits


def perturb(case: C.Case, edits: list[tuple[str, int, int]]) -> C.Case:
    regs = {"pc": case.context.pc, "sp": case.context.sp, "fp": case.context.fp}
    stack = bytearray(case.stack)
    for target, how, value in edits:
        if target == "stack":
            stack[how % len(stack)] ^= value
        elif how == 0:
            regs[target] = (regs[target] + value) % 2**64
        elif how == 1:
            regs[target] = value
        else:
            regs[target] ^= 1 << value
    return C.Case(case.classes, case.methods, case.blobs, case.thread, bytes(stack),
                  C.Context(**regs), case.walk, None)


@profile(2)
@given(generated_cases(), perturbations())
def test_perturbed_registers_and_stack_bytes(data: bytes,
                                             edits: list[tuple[str, int, int]]) -> None:
    mutated = enc.encode(perturb(dec.decode(data), edits))
    _, native, want = walk_both(mutated)
    assert_native_is_spec(native, want)


@profile(2)
@given(generated_cases(), st.integers(0, 2**64 - 1))
def test_c_mutators(data: bytes, seed: int) -> None:
    case_native.decode(data)
    _, mutated = case_native.mutate(ALL_MUTATIONS, seed)
    _, native, want = walk_both(mutated)
    assert_native_is_spec(native, want)


def test_a_few_thousand_mutated_walks() -> None:
    codes: collections.Counter[int] = collections.Counter()
    for seed in range(2000):
        case_native.generate(seed=seed)
        _, mutated = case_native.mutate(ALL_MUTATIONS, seed ^ 0x5EED)
        _, native, want = walk_both(mutated)
        assert_native_is_spec(native, want)
        codes[want.end_code] += 1
    mutated_codes = {WalkCode.BAD_PC, WalkCode.BAD_SP, WalkCode.BAD_FP, WalkCode.BAD_METHOD,
                     WalkCode.NO_FRAME, WalkCode.NO_THREAD, WalkCode.NO_TOP_JAVA_FRAME}
    assert mutated_codes <= set(codes), codes


# ---- every documented code, native and spec agreeing ----------------------------------------

def _c_stack(**kw: int) -> C.Case:
    b = CaseBuilder(8)
    fp = b.c_frame(b.hi - 16, ret=0, caller_fp=0)
    return b.case(context=(PC_C, fp, fp), options=kw.pop("options", 1), **kw)


def _deep() -> C.Case:
    n = vm.MAX_DEPTH + 1
    b = CaseBuilder(stack_words=2 * n + 2)
    fps = [b.hi - 16 * (i + 1) for i in range(n)]
    for i, fp in enumerate(fps):
        b.c_frame(fp, ret=PC_C if i else 0, caller_fp=fps[i - 1] if i else 0)
    return b.case(context=(PC_C, fps[-1], fps[-1]), options=1)


def _interpreted(method_slot: int, bci_slot: int) -> C.Case:
    b = CaseBuilder(8)
    fp = b.hi - 16
    b.fp_frame(fp, 0, 0)
    b.put(fp - 8, method_slot)
    b.put(fp - 16, bci_slot)
    return b.case(context=(PC_INTERPRETED, fp - 16, fp))


def _entry_with_low_anchor() -> C.Case:
    b = CaseBuilder(16)
    fp = b.hi - 16
    b.entry_frame(fp, ret=0, caller_fp=0, anchor=(fp - 64, 0, PC_COMPILED))
    return b.case(context=(PC_ENTRY, fp - 24, fp))


CODE_CASES = {
    WalkCode.NO_FRAME: lambda: _c_stack(),
    WalkCode.NO_THREAD: lambda: _c_stack(state=ThreadState.NOT_JAVA, options=0),
    WalkCode.THREAD_EXIT: lambda: _c_stack(state=ThreadState.EXITING),
    WalkCode.UNSAFE_STATE: lambda: _c_stack(state=ThreadState.IN_TRANSITION),
    WalkCode.NO_TOP_JAVA_FRAME: lambda: _c_stack(state=ThreadState.BLOCKED),
    WalkCode.BAD_PC: lambda: CaseBuilder(4).case(context=(PC_NO_BLOB, vm.STACK_TOP - 32, 0)),
    WalkCode.BAD_SP: _entry_with_low_anchor,
    WalkCode.BAD_FP: lambda: CaseBuilder(4).case(context=(PC_C, vm.STACK_TOP - 16,
                                                          vm.STACK_TOP - 8), options=1),
    WalkCode.BAD_METHOD: lambda: _interpreted(vm.METHODS + 8, 0),
    WalkCode.BAD_BCP: lambda: _interpreted(vm.method_handle(1), vm.bytecode_base(1) + 50),
    WalkCode.DEPTH_LIMIT: _deep,
    WalkCode.BAD_ARGUMENT: lambda: _c_stack(entry=WalkEntry.NULL_CONTEXT),
}


def test_every_documented_code_has_a_case() -> None:
    assert set(CODE_CASES) == set(WalkCode)


@pytest.mark.parametrize("code", list(CODE_CASES), ids=lambda c: c.name)
def test_documented_code_native_and_spec_agree(code: WalkCode) -> None:
    _, native, want = walk_both(enc.encode(CODE_CASES[code]()))
    assert want.end_code == code, want.reason
    assert_native_is_spec(native, want)


def test_compiled_frame_off_the_stack_is_bad_sp_on_both_sides() -> None:
    b = CaseBuilder(2)
    _, native, want = walk_both(enc.encode(b.case(context=(PC_COMPILED, b.lo, 0))))
    assert want.end_code == WalkCode.BAD_SP
    assert_native_is_spec(native, want)


# ---- rewind and from-frame, native vs spec ---------------------------------------------------

@pytest.mark.parametrize("seed", range(10))
def test_from_frame_of_each_physical_frame_gives_the_suffix(seed: int) -> None:
    data = case_native.generate(seed=seed, state=ThreadState.IN_JAVA, options=1)
    case, _, full = walk_both(data)
    out = ffi.new("ASGST_Frame[]", 4096)
    run, end = ffi.new("int *"), ffi.new("int *")
    for step in full.steps:
        f = step.frame
        n = lib.wf_walk_from_frame(lib.wf_walker_reference(), f.sp, f.fp, f.pc, 1, out, 4096,
                                   run, end)
        want = spec.walk(case, start=spec.Physical(f.sp, f.fp, f.pc), entry=WalkEntry.FROM_FRAME,
                         options=1)
        got = tuple(case_native.frame_of(ffi, out[i]) for i in range(n))
        assert (run[0], got, end[0]) == (want.run_result, want.frames, want.end_code)
        first = [i for i, fr in enumerate(full.frames) if fr.sp == f.sp]
        if first and step.code is None:
            assert want.frames == full.frames[first[0]:]


@pytest.mark.parametrize("seed", range(10))
def test_rewind_walks_the_same_frames_again(seed: int) -> None:
    case = dec.decode(case_native.generate(seed=seed))
    out1, out2 = ffi.new("ASGST_Frame[]", 4096), ffi.new("ASGST_Frame[]", 4096)
    count2 = ffi.new("uint32_t *")
    n1 = lib.wf_walk_twice_rewound(lib.wf_walker_reference(), case_native.mapped_case(), out1, out2,
                                   4096, count2)
    first = tuple(case_native.frame_of(ffi, out1[i]) for i in range(n1))
    second = tuple(case_native.frame_of(ffi, out2[i]) for i in range(count2[0]))
    assert first == second == spec.walk(case).frames


def test_include_non_java_option_changes_what_is_reported() -> None:
    data = case_native.generate(seed=7, state=ThreadState.IN_JAVA, options=0)
    case = dec.decode(data)
    java_only = spec.walk(case)
    with_c = spec.walk(case, options=int(Option.INCLUDE_NON_JAVA_FRAMES))
    assert java_only.frames and all(f.type != vm.FrameType.NON_JAVA for f in java_only.frames)
    assert any(f.type == vm.FrameType.NON_JAVA for f in with_c.frames)
