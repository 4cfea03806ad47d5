"""A user walker for the simulated VM, loaded the way `--walker PATH.so` loads it
(wf_walker_load), walks like the rules say: on generated layouts it walks to the generator's
truth and agrees with the Python spec; on mutated and perturbed layouts it agrees with the
in-core reference walker (the harness's differential oracle) and with the spec, inside the
guard, without a fault or a hang; its info calls and thread state agree with the reference's.

By default the walker under test is the example walker (examples/walker/, built by
`make build`). Point the same tests at your own walker library with:

    WALKFUZZ_TEST_WALKER=path/to/my-walker.so .venv/bin/pytest -q tests/native/test_user_walker.py

(docs/writing-a-walker.md). The library must be a plain build (no -fsanitize=fuzzer-no-link).
"""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from walkfuzz.targets.minivm import spec, user_walker
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import encode as enc
from walkfuzz.targets.minivm.case import format as C
from walkfuzz.targets.minivm.case import native as case_native
from walkfuzz.targets.minivm.case.strategies import generated_cases, profile
from walkfuzz.targets.minivm.vm_model import ThreadState, WalkEntry

WALKER_ENV = "WALKFUZZ_TEST_WALKER"
ALL_MUTATIONS = 15
GENERATED_SEEDS = 1000
MUTATED_SEEDS = 2000
STACK_WORDS = [0, 1, 0x3E0003100000, 0x3E00030FFFF8, 0x3E0001000000, 0x3E0002000000,
               0x3E0000020000, 0x3E0004000000, 2**64 - 8]


def walker_under_test() -> Path:
    """$WALKFUZZ_TEST_WALKER, or the example walker (built if missing)."""
    path = os.environ.get(WALKER_ENV)
    return Path(path) if path else user_walker.example_walker("plain")


@pytest.fixture(scope="module")
def walker() -> Any:
    return case_native.load_walker(str(walker_under_test()))


def walk(walker: Any, data: bytes) -> tuple[case_native.NativeRun, spec.WalkResult]:
    """Map `data`, walk it with `walker` through the guarded, checked hot path, and with the
    spec."""
    decoded = case_native.decode(data)
    assert decoded.status == 0, decoded
    return case_native.run_mapped(walker), spec.walk(dec.decode(data))


def assert_like_spec(native: case_native.NativeRun, want: spec.WalkResult, what: str) -> None:
    assert native.finding not in ("crash", "hang"), f"{what}: {native.finding} {native.fault}"
    got = (native.run_result, native.frames, native.end_code, native.state_after)
    expected = (want.run_result, want.frames, want.end_code, want.end_code)
    assert got == expected, f"{what}: walker differs from the spec ({want.reason})"


def test_generated_layouts_walk_to_the_truth(walker: Any) -> None:
    """Every state, option and entry, then plain seeds: native == truth == spec."""
    params = [{"state": s, "options": o, "entry": e} for s in ThreadState for o in range(4)
              for e in WalkEntry]
    params += [{} for _ in range(GENERATED_SEEDS - len(params))]
    kinds: Counter[str] = Counter()
    for seed, fields in enumerate(params):
        data = case_native.generate(seed=seed, **fields)
        native, want = walk(walker, data)
        assert native.oracle == "truth" and native.finding == "none", (
            f"seed {seed} {fields}: {native.finding} at check {native.check}, frame "
            f"{native.diff_index}")
        assert_like_spec(native, want, f"seed {seed} {fields}")
        kinds["frames" if native.frames else "no frames"] += 1
    assert kinds["frames"] > GENERATED_SEEDS // 2  # most layouts walk, not refuse


def test_mutated_layouts_agree_with_the_reference_and_the_spec(walker: Any) -> None:
    """The C mutators (registers, stack, layout, thread) on generated layouts."""
    ends: Counter[int] = Counter()
    for seed in range(MUTATED_SEEDS):
        case_native.generate(seed=seed)
        _, data = case_native.mutate(ALL_MUTATIONS, seed)
        native, want = walk(walker, data)
        assert native.finding == "none", (
            f"mutated seed {seed}: {native.finding} at check {native.check}, frame "
            f"{native.diff_index} (oracle {native.oracle}) {native.fault or ''}")
        assert_like_spec(native, want, f"mutated seed {seed}")
        ends[native.end_code] += 1
    assert len(ends) >= 5  # the mutations reach several error paths, not just the clean end


@profile(2)
@given(generated_cases(), st.randoms(use_true_random=False))
def test_perturbed_registers_and_stack_words(walker: Any, data: bytes,
                                             rng: random.Random) -> None:
    """Wild register values and stack words: no fault, and the spec's walk."""
    case = dec.decode(data)
    stack = bytearray(case.stack)
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(len(stack) // 8) * 8
        stack[at:at + 8] = rng.choice(STACK_WORDS).to_bytes(8, "little")
    regs = {r: rng.choice([*STACK_WORDS, getattr(case.context, r) + rng.randrange(-64, 64, 8)])
            % 2**64 for r in ("pc", "sp", "fp")}
    perturbed = C.Case(case.classes, case.methods, case.blobs, case.thread, bytes(stack),
                       C.Context(**regs), case.walk, None)
    native, want = walk(walker, enc.encode(perturbed))
    assert native.finding == "none", f"{native.finding} {native.check} {native.fault}"
    assert_like_spec(native, want, "perturbed")


# ---- the calls outside the iterator: against the reference walker ----------------------------

def method_info(w: Any, handle: int, capacity: int) -> tuple[object, ...]:
    ffi = case_native._native()[0]
    bufs = [ffi.new("char[]", max(capacity, 1)) for _ in range(3)]
    info = ffi.new("ASGST_MethodInfo *", {
        "method_name": bufs[0], "method_name_length": capacity, "signature": bufs[1],
        "signature_length": capacity, "generic_signature": bufs[2],
        "generic_signature_length": capacity, "modifiers": -7})
    w.get_method_info(ffi.cast("ASGST_Method", handle), info)
    klass = int(ffi.cast("uintptr_t", info.klass))
    return (*(ffi.string(b) for b in bufs), info.method_name_length, info.signature_length,
            info.generic_signature_length, info.modifiers, klass)


def class_info(w: Any, handle: int, capacity: int) -> tuple[object, ...]:
    ffi = case_native._native()[0]
    bufs = [ffi.new("char[]", max(capacity, 1)) for _ in range(2)]
    info = ffi.new("ASGST_ClassInfo *", {
        "class_name": bufs[0], "class_name_length": capacity, "generic_class_name": bufs[1],
        "generic_class_name_length": capacity, "modifiers": -7})
    w.get_class_info(ffi.cast("ASGST_Class", handle), info)
    return (*(ffi.string(b) for b in bufs), info.class_name_length,
            info.generic_class_name_length, info.modifiers)


def test_method_and_class_info_agree_with_the_reference(walker: Any) -> None:
    reference = case_native.load_walker(None)
    case = dec.decode(case_native.generate(seed=3))
    methods = [0x3E0000020000 + 64 * i for i in range(len(case.methods) + 1)]  # + one invalid
    classes = [0x3E0000010000 + 64 * i for i in range(len(case.classes) + 1)]
    odd = [0, 8, 0x3E0000020000 + 8, 0x3E0000010000 - 64, 2**64 - 64]
    for capacity in (0, 1, 5, 4096):
        for h in [*methods, *odd]:
            assert method_info(walker, h, capacity) == method_info(reference, h, capacity), (
                f"method handle {h:#x}, capacity {capacity}")
        for h in [*classes, *odd]:
            assert class_info(walker, h, capacity) == class_info(reference, h, capacity), (
                f"class handle {h:#x}, capacity {capacity}")


@pytest.mark.parametrize("state", list(ThreadState))
def test_thread_state_agrees_with_the_reference(walker: Any, state: ThreadState) -> None:
    reference = case_native.load_walker(None)
    for seed in range(4):  # the generator varies the SUSPENDED / CURRENT flags
        case_native.generate(seed=seed, state=state)
        assert walker.thread_state() == reference.thread_state(), f"{state.name} seed {seed}"


def test_capabilities_are_documented_bits(walker: Any) -> None:
    assert walker.capabilities() & ~0x3 == 0
