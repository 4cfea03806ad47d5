"""The reference walker through cffi: generated layouts walk to their true trace, every
documented error code comes out of some case, bad pointers never fault, RewindIterator
repeats a walk, and RunWithIteratorFromFrame from any frame of a walk gives its suffix."""

from __future__ import annotations

import pytest

from tests.native.refwalk_helpers import (
    CASE,
    Phys,
    ffi,
    find_seed,
    frame_tuple,
    generate,
    lib,
    peek,
    poke,
    run,
    thread,
    truth,
    walk_from,
    walked_frames,
)

STATES = range(lib.WF_THREAD_NOT_JAVA, lib.WF_THREAD_EXITING + 1)
FINDING_NONE = lib.WF_FINDING_NONE


def assert_clean(r: object) -> None:
    """No fault, no contract violation, no oracle disagreement."""
    assert (r.finding, lib.wf_check_name(r.check)) == (FINDING_NONE, lib.wf_check_name(0)), (
        f"finding {r.finding} check {ffi.string(lib.wf_check_name(r.check))!r} "
        f"at frame {r.diff_index}, run {r.run_result} end {r.end_code}"
    )


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("options", range(4))
def test_generated_layouts_walk_to_their_truth(state: int, options: int) -> None:
    for seed in range(40):
        generate(seed, state=state, options=options, consistent=1)
        r = run()
        assert r.oracle == lib.WF_ORACLE_TRUTH
        assert_clean(r)
        assert walked_frames() == truth()
        assert (r.run_result, r.end_code) == (CASE.truth_run_result, CASE.truth_end_code)


def test_every_frame_kind_and_entry_is_generated_and_walked() -> None:
    kinds, entries = set(), set()
    for seed in range(400):
        layout = generate(seed)
        kinds |= {f.kind for f in layout}
        entries.add(CASE.entry)
        assert_clean(run())
    assert kinds == {lib.WF_FRAME_INTERPRETED, lib.WF_FRAME_COMPILED, lib.WF_FRAME_NATIVE,
                     lib.WF_FRAME_STUB, lib.WF_FRAME_ENTRY, lib.WF_FRAME_C}
    assert entries == {lib.WF_ENTRY_UCONTEXT, lib.WF_ENTRY_FROM_FRAME, lib.WF_ENTRY_NULL_CONTEXT}


def test_deep_stacks_of_thousands_of_frames_walk_to_their_truth() -> None:
    generate(11, state=lib.WF_THREAD_IN_JAVA, options=1, entry=0, consistent=1,
             min_frames=3000, max_frames=3000)
    r = run()
    assert_clean(r)
    assert r.frames == CASE.truth_count > 3000


# ---- each documented code ---------------------------------------------------------------

def java_case(**fields: int) -> list[Phys]:
    return generate(1, state=lib.WF_THREAD_IN_JAVA, options=0, entry=0, consistent=1, **fields)


def interpreted_top() -> Phys:
    _, layout = find_seed(lambda frames: frames[0].kind == lib.WF_FRAME_INTERPRETED,
                          state=lib.WF_THREAD_IN_JAVA, options=0, entry=0, consistent=1)
    return layout[0]


def walk_mutated() -> object:
    """The mapped case was changed by the test: no truth, the reference checks itself."""
    CASE.has_truth = 0
    r = run()
    assert_clean(r)
    return r


@pytest.mark.parametrize(("state", "options", "code"), [
    (lib.WF_THREAD_NOT_JAVA, 0, lib.ASGST_NO_THREAD),
    (lib.WF_THREAD_EXITING, 0, lib.ASGST_THREAD_EXIT),
    (lib.WF_THREAD_NEW, 0, lib.ASGST_UNSAFE_STATE),
    (lib.WF_THREAD_IN_TRANSITION, 1, lib.ASGST_UNSAFE_STATE),
    (lib.WF_THREAD_NOT_JAVA, 1, lib.ASGST_CPP_TRACE),
    (lib.WF_THREAD_IN_NATIVE, 0, lib.ASGST_JAVA_TRACE),
])
def test_thread_states_give_their_run_result(state: int, options: int, code: int) -> None:
    generate(5, state=state, options=options, entry=0, consistent=1)
    r = run()
    assert_clean(r)
    assert r.run_result == code


def test_thread_in_a_mode_the_options_do_not_ask_is_no_thread() -> None:
    java_case()
    thread().flags = lib.WF_THREAD_CURRENT  # separate-thread walk of a running thread
    assert walk_mutated().run_result == lib.ASGST_NO_THREAD


def test_thread_outside_java_without_anchor_is_no_top_java_frame() -> None:
    generate(3, state=lib.WF_THREAD_IN_VM, options=0, entry=0, consistent=1)
    thread().anchor.sp = 0
    assert walk_mutated().run_result == lib.ASGST_NO_TOP_JAVA_FRAME


def test_anchor_without_pc_takes_the_return_address_below_its_sp() -> None:
    generate(3, state=lib.WF_THREAD_IN_NATIVE, options=0, entry=0, consistent=1)
    t = thread()
    want = run().run_result, walked_frames()
    t.anchor.pc = 0
    r = walk_mutated()
    assert (r.run_result, walked_frames()) == want
    t.anchor.sp = t.stack_lo  # [sp - 8] is below the stack
    assert walk_mutated().run_result == lib.ASGST_WF_BAD_SP


def test_null_ucontext_for_a_thread_in_java_is_bad_argument() -> None:
    java_case()
    CASE.entry = lib.WF_ENTRY_NULL_CONTEXT
    assert walk_mutated().run_result == lib.ASGST_WF_BAD_ARGUMENT


@pytest.mark.parametrize(("register", "value", "code"), [
    ("pc", 0x1234, lib.ASGST_WF_BAD_PC),
    ("pc", lib.WF_VM_CODE_HEAP + lib.WF_VM_CODE_HEAP_SIZE - 1, lib.ASGST_WF_BAD_PC),
    ("sp", lib.WF_VM_STACK_TOP, lib.ASGST_WF_BAD_SP),
])
def test_bad_registers_give_their_code(register: str, value: int, code: int) -> None:
    java_case()
    setattr(CASE, register, value)
    r = walk_mutated()
    assert (r.run_result, r.end_code, r.frames) == (lib.ASGST_JAVA_TRACE, code, 0)


def test_misaligned_sp_is_bad_sp() -> None:
    java_case()
    CASE.sp += 4
    assert walk_mutated().end_code == lib.ASGST_WF_BAD_SP


def test_interpreted_frame_slots() -> None:
    top = interpreted_top()
    method = ffi.cast("struct wf_vm_method *", peek(top.fp - 8))
    CASE.fp = top.sp - 8  # fp below sp
    assert walk_mutated().end_code == lib.ASGST_WF_BAD_FP
    CASE.fp = top.fp
    poke(top.fp - 8, lib.WF_VM_METHODS + 8)  # inside the table, not an entry
    assert walk_mutated().end_code == lib.ASGST_WF_BAD_METHOD
    poke(top.fp - 8, int(ffi.cast("uintptr_t", method)))
    poke(top.fp - 16, method.code_base + method.code_size)
    assert walk_mutated().end_code == lib.ASGST_WF_BAD_BCP
    poke(top.fp - 16, method.code_base - 1)
    assert walk_mutated().end_code == lib.ASGST_WF_BAD_BCP


def test_depth_is_bounded() -> None:
    """A C fp chain of more than WF_WALK_MAX_DEPTH 16-byte frames ends with DEPTH_LIMIT."""
    generate(2, state=lib.WF_THREAD_IN_JAVA, options=1, entry=0, consistent=1,
             min_frames=3000, max_frames=3000)
    t = thread()
    frames = lib.WF_WALK_MAX_DEPTH + 10
    assert t.stack_hi - t.stack_lo >= 16 * frames, "stack image too small for the chain"
    pc = lib.WF_VM_NATIVE_TEXT + 0x40
    for i in range(frames):
        fp = t.stack_hi - 16 * (i + 1)
        poke(fp, fp + 16 if i else 0)
        poke(fp + 8, pc if i else 0)
    top_fp = t.stack_hi - 16 * frames
    CASE.sp, CASE.fp, CASE.pc = top_fp, top_fp, pc
    r = walk_mutated()
    assert (r.frames, r.end_code) == (lib.WF_WALK_MAX_DEPTH, lib.ASGST_WF_DEPTH_LIMIT)


def test_stale_truth_is_caught_by_the_truth_oracle() -> None:
    """The truth oracle can fail: a return address moved after generation disagrees."""
    layout = java_case(min_frames=8, max_frames=8)
    poke(layout[2].sp - 8, layout[4].pc)
    r = run()
    assert r.oracle == lib.WF_ORACLE_TRUTH
    assert r.finding == lib.WF_FINDING_INVALID_TRACE
    assert r.diff_index >= 0


# ---- bad pointers never fault -----------------------------------------------------------

HOSTILE = [0, 1, 8, 0xFFFFFFFFFFFFFFFF, 0x8000000000000000, 0x00007FFFFFFFF000,
           lib.WF_VM_ROOT, lib.WF_VM_ROOT + 4, lib.WF_VM_METHODS, lib.WF_VM_BYTECODE,
           lib.WF_VM_CODE_HEAP, lib.WF_VM_NATIVE_TEXT + 3, lib.WF_VM_STACK,
           lib.WF_VM_STACK_TOP, lib.WF_VM_STACK_TOP - 8, lib.WF_VM_STACK_TOP + 0x1000,
           lib.WF_VM_SPAN_END]


@pytest.mark.parametrize("register", ["pc", "sp", "fp"])
def test_hostile_registers_never_fault(register: str) -> None:
    for seed in range(30):
        for value in HOSTILE:
            generate(seed, state=lib.WF_THREAD_IN_JAVA, options=seed % 4, entry=0, consistent=1)
            setattr(CASE, register, value)
            walk_mutated()


def test_hostile_stack_words_never_fault() -> None:
    for seed in range(6):
        generate(seed, state=lib.WF_THREAD_IN_JAVA, options=1, entry=0, consistent=1)
        t = thread()
        for addr in range(t.stack_lo, t.stack_hi, 8):
            old = peek(addr)
            for value in (HOSTILE[seed * 3 % len(HOSTILE)], old + 8, old ^ 0x10):
                poke(addr, value)
                walk_mutated()
            poke(addr, old)


def test_mutated_cases_never_fault() -> None:
    applied = 0
    for seed in range(3000):
        generate(seed)
        n = lib.wf_mutate_seed(CASE, lib.WF_MUTATE_ALL, seed)
        assert CASE.has_truth == (n == 0)
        applied += n
        walk_mutated()
    assert applied > 3000


# ---- rewind and suffix ------------------------------------------------------------------

def test_rewind_gives_the_same_frames_again() -> None:
    out1, out2 = ffi.new("ASGST_Frame[]", 4096), ffi.new("ASGST_Frame[]", 4096)
    count2 = ffi.new("uint32_t *")
    walked = 0
    for seed in range(200):
        generate(seed)
        if seed % 2:
            lib.wf_mutate_seed(CASE, lib.WF_MUTATE_ALL, seed)
        n = lib.wf_walk_twice_rewound(lib.wf_walker_reference(), CASE, out1, out2, 4096, count2)
        assert n == count2[0]
        assert [frame_tuple(out1[i]) for i in range(n)] == [frame_tuple(out2[i]) for i in range(n)]
        walked += n
    assert walked > 1000


def test_from_frame_of_any_frame_gives_the_suffix() -> None:
    checked = 0
    for seed in range(120):
        generate(seed, consistent=1)
        r = run()
        if r.run_result <= 0:
            continue
        frames, end = walked_frames(), r.end_code
        for i, f in enumerate(frames):
            if i > 0 and frames[i - 1][5] == f[5]:
                continue  # an outer scope of the frame before: same physical frame
            got = walk_from(f[5], f[6], f[4], CASE.options)
            assert got == (r.run_result, frames[i:], end), f"seed {seed} frame {i}"
            checked += 1
    assert checked > 500


# ---- info calls ---------------------------------------------------------------------------

def test_method_and_class_info() -> None:
    java_case()
    method = ffi.cast("ASGST_Method", lib.WF_VM_METHODS + 64)
    name, sig = ffi.new("char[3]"), ffi.new("char[64]")
    info = ffi.new("ASGST_MethodInfo *", {"method_name": name, "method_name_length": 3,
                                          "signature": sig, "signature_length": 64})
    lib.ASGST_GetMethodInfo(method, info)
    vm_method = ffi.cast("struct wf_vm_method *", lib.WF_VM_METHODS + 64)
    full = ffi.string(vm_method.name)
    assert ffi.string(name) == full[:2] and info.method_name_length == len(full)
    assert ffi.string(sig) == ffi.string(vm_method.signature)
    assert int(ffi.cast("uintptr_t", info.klass)) == int(ffi.cast("uintptr_t", vm_method.klass))
    cname = ffi.new("char[64]")
    cinfo = ffi.new("ASGST_ClassInfo *", {"class_name": cname, "class_name_length": 64})
    lib.ASGST_GetClassInfo(info.klass, cinfo)
    assert ffi.string(cname) == ffi.string(vm_method.klass.name)
    lib.ASGST_GetMethodInfo(ffi.cast("ASGST_Method", lib.WF_VM_METHODS + 1), info)
    assert (ffi.string(sig), info.signature_length, info.klass) == (b"", 0, ffi.NULL)


@pytest.mark.parametrize(("state", "bits"), [
    (lib.WF_THREAD_NOT_JAVA, -1), (lib.WF_THREAD_NEW, 0x100000), (lib.WF_THREAD_IN_JAVA, 0x100005),
    (lib.WF_THREAD_IN_NATIVE, 0x500005), (lib.WF_THREAD_BLOCKED, 0x100401),
    (lib.WF_THREAD_EXITING, 0x100002)])
def test_thread_state_bits(state: int, bits: int) -> None:
    generate(1, state=state, options=0, entry=0, consistent=1)
    thread().flags = lib.WF_THREAD_SUSPENDED
    assert lib.ASGST_ThreadState() == bits
    assert lib.ASGST_Capabilities() & ~lib.ASGST_REGISTER_QUEUE == 0
