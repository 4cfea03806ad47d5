"""Section 11 EXPECTED and queue op 12 THREAD (docs/case-format.md): the Python and the C codecs
agree on every byte (status, section, offset), round-trip each other, and the live replay
(wf_live_replay) judges a case by its EXPECTED section with the live oracle's classes."""

from __future__ import annotations

import dataclasses
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from walkfuzz.core.native import load
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import encode as enc
from walkfuzz.targets.minivm.case import format as C
from walkfuzz.targets.minivm.case import native as case_native
from walkfuzz.targets.minivm.case.builder import PC_INTERPRETED, CaseBuilder
from walkfuzz.targets.minivm.case.expected import (
    MAX_EXPECTED,
    Expected,
    ExpectedFrame,
    Source,
    has_expected,
)
from walkfuzz.targets.minivm.case.queue_program import Opcode, QueueOp
from walkfuzz.targets.minivm.case.status import CaseStatus
from walkfuzz.targets.minivm.case.strategies import profile
from walkfuzz.targets.minivm.queue.run import run_case

JAVA, NATIVE = int(vm.FrameType.JAVA), int(vm.FrameType.JAVA_NATIVE)
SIGNAL, QUEUE = 1, 3


def assert_same_status(data: bytes) -> None:
    native = case_native.decode(data)
    python = dec.decode_status(data)
    assert (python[0], python[1], python[2]) == (native.status, native.section, native.offset), (
        f"python {python} != C {native} ({len(data)} bytes)")


def interpreted_case(bci: int = 5) -> C.Case:
    """One interpreted frame of method 0 at `bci`, called from C (return address 0)."""
    b = CaseBuilder(stack_words=8)
    fp = b.interpreted_frame(b.hi - 16, ret=0, caller_fp=0, method=0, bci=bci)
    return b.case(context=(PC_INTERPRETED, b.hi - 48, fp), flags=vm.ThreadFlag.CURRENT,
                  options=int(vm.Option.WALK_SAME_THREAD))


def expected(*frames: ExpectedFrame, source: int = Source.WALK, window: int = 0,
             mode: int = SIGNAL) -> Expected:
    return Expected(mode, int(source), window, 0, frames)


def live_case(frames: tuple[ExpectedFrame, ...] = (ExpectedFrame(0, 5, JAVA, 0),),
              window: int = 0, queue: tuple[QueueOp, ...] | None = None,
              source: int = Source.WALK) -> bytes:
    case = dataclasses.replace(interpreted_case(), queue=queue,
                               expected=expected(*frames, source=source, window=window,
                                                 mode=QUEUE if queue else SIGNAL))
    return enc.encode(case)


def test_round_trips_through_both_codecs() -> None:
    data = live_case((ExpectedFrame(0, 5, JAVA, 0), ExpectedFrame(2, -1, NATIVE, -1)), window=3)
    case = dec.decode(data)
    assert case.expected == expected(ExpectedFrame(0, 5, JAVA, 0),
                                     ExpectedFrame(2, -1, NATIVE, -1), window=3)
    assert has_expected(data) and not has_expected(enc.encode(interpreted_case()))
    assert case_native.decode(data).status == 0
    assert case_native.encode_mapped() == data


def test_the_section_is_optional_to_a_decoder_that_skips_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A decoder that does not know section 11 decodes a live case as the case without it:
    the Python decoder with its section 11 decoder taken out, and the C decoder given the
    section under a type it does not know (an experiment's, >= 0x8000, which keeps the order).
    Without the OPTIONAL flag both refuse it."""
    data, plain = live_case(), enc.encode(interpreted_case())
    at = data.index(struct.pack("<HH", 11, C.SECTION_OPTIONAL))
    unknown_type = data[:at] + struct.pack("<H", 0x8000) + data[at + 2:]
    assert case_native.decode(unknown_type).status == 0
    assert case_native.encode_mapped() == plain  # skipped, not kept
    without_flag = data[:at] + struct.pack("<HH", 0x8000, 0) + data[at + 4:]
    assert case_native.decode(without_flag).status == CaseStatus.UNKNOWN_SECTION
    assert_same_status(without_flag)
    monkeypatch.setattr(dec._Decoder, "DECODERS",
                        {k: v for k, v in dec._Decoder.DECODERS.items() if k != 11})
    assert dec.decode(data) == dec.decode(plain)
    assert dec.decode_status(data[:at + 2] + b"\0\0" + data[at + 4:])[0] \
        == CaseStatus.UNKNOWN_SECTION


def test_every_byte_of_the_section_changed() -> None:
    data = live_case((ExpectedFrame(0, 5, JAVA, 0), ExpectedFrame(1, 7, JAVA, 4)))
    start = len(enc.encode(interpreted_case()))
    for i in range(start, len(data)):
        for value in {0x00, 0xFF, data[i] ^ 0x01, data[i] ^ 0x80}:
            assert_same_status(data[:i] + bytes([value]) + data[i + 1:])


def test_every_prefix_of_the_section() -> None:
    data = live_case((ExpectedFrame(0, 5, JAVA, 0),))
    for n in range(len(enc.encode(interpreted_case())), len(data) + 1):
        assert_same_status(data[:n])


@profile()
@given(st.binary(max_size=80), st.sampled_from([0, 1]))
def test_arbitrary_payloads(payload: bytes, flags: int) -> None:
    assert_same_status(enc.encode(interpreted_case()) + struct.pack("<HHI", 11, flags, len(payload))
                       + payload)


@pytest.mark.parametrize(("field", "value", "status"), [
    ("mode", 4, CaseStatus.BAD_FIELD), ("source", 0, CaseStatus.BAD_FIELD),
    ("source", Source.ELEMENT, CaseStatus.BAD_FIELD),   # no queue program
    ("window", 5, CaseStatus.BAD_FIELD), ("end_code", 1, CaseStatus.BAD_FIELD)])
def test_bad_fields_are_named_by_both(field: str, value: int, status: CaseStatus) -> None:
    case = dataclasses.replace(interpreted_case(),
                               expected=dataclasses.replace(expected(), **{field: value}))
    data = enc.encode(case)
    assert dec.decode_status(data)[:2] == (status, 11)
    assert_same_status(data)


@pytest.mark.parametrize("frame", [ExpectedFrame(3, 0, JAVA, 0),       # no method 3
                                   ExpectedFrame(0, 100, JAVA, 0),     # bci >= code size 100
                                   ExpectedFrame(0, 0, 4, 0),          # NON_JAVA
                                   ExpectedFrame(0, 0, JAVA, 5)])      # comp level 5
def test_bad_frames_are_named_by_both(frame: ExpectedFrame) -> None:
    data = live_case((frame,))
    assert dec.decode_status(data)[:2] == (CaseStatus.BAD_FIELD, 11)
    assert_same_status(data)


def test_too_many_frames_is_a_limit() -> None:
    data = live_case(tuple(ExpectedFrame(0, 0, JAVA, 0) for _ in range(MAX_EXPECTED + 1)))
    assert dec.decode_status(data)[:2] == (CaseStatus.LIMIT, 11)
    assert_same_status(data)


def test_a_trace_as_deep_as_a_live_snapshot_fits() -> None:
    """The recursive workload's samples past the depth limit carry their whole expected
    trace: both codecs take an EXPECTED section of every frame a live snapshot holds."""
    _, lib = load()
    assert MAX_EXPECTED == lib.WF_CASE_MAX_EXPECTED  # live_case.c asserts >= WF_LIVE_SHADOW_MAX
    frames = tuple(ExpectedFrame(0, k % 100, JAVA, 0) for k in range(MAX_EXPECTED))
    data = live_case(frames)
    assert dec.decode_status(data)[0] == CaseStatus.OK
    assert_same_status(data)
    decoded = dec.decode(data).expected
    assert decoded is not None and decoded.frames == frames


# ---- queue op THREAD -------------------------------------------------------------------------


def thread_program(state: int) -> tuple[QueueOp, ...]:
    case = interpreted_case()
    return (QueueOp(Opcode.REGISTER, n=4),
            QueueOp(Opcode.THREAD, which=state, mode=int(vm.ThreadFlag.CURRENT), sp=0, fp=0,
                    pc=0),
            QueueOp(Opcode.ENQUEUE, queue=0, pc=case.context.pc, sp=case.context.sp,
                    fp=case.context.fp))


def test_thread_op_round_trips_and_is_checked_by_both() -> None:
    data = enc.encode(dataclasses.replace(interpreted_case(), queue=thread_program(3)))
    assert dec.decode(data).queue == thread_program(3)
    assert case_native.decode(data).status == 0 and case_native.encode_mapped() == data
    for state, flags in ((8, 0), (2, 4)):
        bad = enc.encode(dataclasses.replace(interpreted_case(), queue=(
            QueueOp(Opcode.THREAD, which=state, mode=flags),)))
        assert dec.decode_status(bad)[:2] == (CaseStatus.BAD_FIELD, 9)
        assert_same_status(bad)


def test_thread_op_changes_the_thread_for_later_ops_and_is_undone() -> None:
    """NOT_JAVA makes the Enqueue after it fail with ASGST_NO_THREAD; IN_JAVA lets it enqueue;
    a second run of the same case sees the thread as decoded again."""
    not_java = enc.encode(dataclasses.replace(interpreted_case(), queue=thread_program(0)))
    in_java = enc.encode(dataclasses.replace(interpreted_case(), queue=thread_program(2)))
    for _ in range(2):
        enqueued = [e.code for e in run_case(not_java).events if e.op == 2]
        assert enqueued == [-1]
        assert [e.code for e in run_case(in_java).events if e.op == 2] == [1]


# ---- the live replay ---------------------------------------------------------------------------


def replay(data: bytes) -> tuple[int, int, int, int]:
    ffi, lib = load()
    case = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    assert lib.wf_case_decode(data, len(data), case, ffi.NULL) == 0
    r = ffi.new("wf_live_replay_result *")
    lib.wf_live_replay(lib.wf_walker_reference(), case, r)
    return int(r.status), int(r.outcome), int(r.cls), int(r.first_diff)


def test_a_walk_equal_to_expected_is_exact() -> None:
    assert replay(live_case()) == (0, 0, 0, -1)


def test_the_live_oracles_class_and_first_difference() -> None:
    wrong_bci = replay(live_case((ExpectedFrame(0, 6, JAVA, 0),)))
    assert wrong_bci == (0, 1, 3, 0)                      # invalid, wrong-bci, frame 0
    missing = replay(live_case((ExpectedFrame(0, 5, JAVA, 0), ExpectedFrame(1, 2, JAVA, 0))))
    assert missing == (0, 1, 0, 1)                        # invalid, missing, frame 1


def test_the_window_only_says_where_the_sample_was() -> None:
    """EXPECTED is already the trace at the sampled instruction: a top frame too many is
    invalid whatever the window."""
    extra_top = (ExpectedFrame(2, 0, JAVA, 0), ExpectedFrame(0, 5, JAVA, 0))
    for window in range(5):
        assert replay(live_case(extra_top, window=window))[1:3] == (1, 0)   # invalid, missing


def test_an_element_source_walks_the_queue_programs_element() -> None:
    case = interpreted_case()
    ctx = case.context
    program = (QueueOp(Opcode.REGISTER, n=4),
               QueueOp(Opcode.ENQUEUE, queue=0, pc=ctx.pc, sp=ctx.sp, fp=ctx.fp),
               QueueOp(Opcode.SAFEPOINT, pc=ctx.pc, sp=ctx.sp, fp=ctx.fp))
    good = live_case(queue=program, source=Source.ELEMENT)
    assert replay(good) == (0, 0, 0, -1)
    bad = live_case((ExpectedFrame(1, 5, JAVA, 0),), queue=program, source=Source.ELEMENT)
    assert replay(bad)[1:] == (1, 2, 0)                   # invalid, wrong-method, frame 0



def test_an_enqueue_source_judges_the_enqueue_result() -> None:
    """The thread is not Java: Enqueue fails with ASGST_NO_THREAD, an empty walk ending in an
    error where an empty expected trace wants a clean end (wrong-result at frame 0)."""
    case = interpreted_case()
    ctx = case.context
    program = (QueueOp(Opcode.REGISTER, n=4),
               QueueOp(Opcode.ENQUEUE, queue=0, pc=ctx.pc, sp=ctx.sp, fp=ctx.fp))
    not_java = dataclasses.replace(case, thread=dataclasses.replace(case.thread, state=0),
                                   queue=program, expected=expected(source=Source.ENQUEUE))
    assert replay(enc.encode(not_java)) == (0, 1, 8, 0)


def test_a_case_without_expected_is_refused() -> None:
    assert replay(enc.encode(interpreted_case()))[0] == -1
