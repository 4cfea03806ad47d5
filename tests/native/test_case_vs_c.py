"""The Python decoder (walkfuzz.targets.minivm.case.format) and the C decoder
(native/src/dec.c) agree on
every input: same status, and on an error the same section and byte offset. And the two
encoders agree: encode(decode(bytes)) == bytes for everything the C generator emits."""

from __future__ import annotations

import random
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import encode as enc
from walkfuzz.targets.minivm.case import format as C
from walkfuzz.targets.minivm.case import native as case_native
from walkfuzz.targets.minivm.case.builder import PC_C, CaseBuilder
from walkfuzz.targets.minivm.case.queue_program import (
    Opcode,
    QueueOp,
    encode_program,
    queue_section,
)
from walkfuzz.targets.minivm.case.status import CaseStatus, Section
from walkfuzz.targets.minivm.case.strategies import generated_cases, profile


def assert_same_status(data: bytes) -> None:
    native = case_native.decode(data)
    python = dec.decode_status(data)
    assert (python[0], python[1], python[2]) == (native.status, native.section, native.offset), (
        f"python {python} != C {native} for {data[:64].hex()}... ({len(data)} bytes)")


def small_case_bytes() -> bytes:
    b = CaseBuilder(stack_words=4)
    fp = b.c_frame(b.hi - 16, ret=0, caller_fp=0)
    return enc.encode(b.case(context=(PC_C, b.hi - 32, fp)))


@profile()
@given(st.binary(max_size=256))
def test_arbitrary_bytes(data: bytes) -> None:
    assert_same_status(data)


@profile()
@given(st.binary(max_size=256))
def test_bytes_after_a_valid_header(data: bytes) -> None:
    assert_same_status(C.MAGIC + b"\x01\x00\x00\x00" + data)


def test_every_prefix_of_a_case() -> None:
    data = small_case_bytes()
    for n in range(len(data) + 1):
        assert_same_status(data[:n])


def test_every_byte_of_a_case_changed() -> None:
    data = small_case_bytes()
    for i in range(len(data)):
        for value in {0x00, 0xFF, data[i] ^ 0x01, data[i] ^ 0x80}:
            assert_same_status(data[:i] + bytes([value]) + data[i + 1:])


@profile(0.5)
@given(generated_cases(), st.randoms(use_true_random=False))
def test_mutated_generated_cases(data: bytes, rng: random.Random) -> None:
    edits = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        i = rng.randrange(len(edits))
        if op == 0:
            edits[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            del edits[i:i + rng.randint(1, 16)]
        elif op == 2:
            edits[i:i] = rng.randbytes(rng.randint(1, 8))
        else:
            edits[i] = rng.choice([0, 0xFF, 0x7F, 0x80, 1])
    assert_same_status(bytes(edits))


@profile()
@given(generated_cases())
def test_generated_cases_round_trip_through_both_codecs(data: bytes) -> None:
    case = dec.decode(data)
    assert enc.encode(case) == data
    assert case_native.decode(data).status == 0
    assert case_native.encode_mapped() == data
    assert dec.decode(enc.encode(case)) == case


@pytest.mark.parametrize("seed", range(20))
def test_deep_generated_cases_round_trip(seed: int) -> None:
    data = case_native.generate(seed=seed, min_frames=1000, max_frames=4000)
    assert enc.encode(dec.decode(data)) == data


def test_python_encoding_of_hand_built_case_decodes_in_c_and_back() -> None:
    data = small_case_bytes()
    assert case_native.decode(data).status == 0
    assert case_native.encode_mapped() == data


# ---- section 9 (queue program, docs/case-format.md §7) ---------------------------------------

def _queue_ops(case: C.Case) -> tuple[QueueOp, ...]:
    """One op of every opcode, POKE on the case's stack, a SAFEPOINT with an inner op."""
    pc, sp, fp = case.context.pc, case.context.sp, case.context.fp
    return (QueueOp(Opcode.REGISTER, n=4, options=1),
            QueueOp(Opcode.HANDLER, queue=0, which=1, mode=2, options=3),
            QueueOp(Opcode.ENQUEUE, queue=0, pc=pc, sp=sp, fp=fp, arg=7),
            QueueOp(Opcode.COMPRESS, queue=0, pc=pc, sp=sp, fp=fp),
            QueueOp(Opcode.SET_ARG, queue=0, n=-1, arg=2**64 - 1),
            QueueOp(Opcode.POKE, pc=case.stack_hi - 8, arg=0x1234),
            QueueOp(Opcode.SAFEPOINT, pc=pc, sp=sp, fp=fp, inner_at=0, inner_count=1),
            QueueOp(Opcode.SIZE_INFO, queue=0),
            QueueOp(Opcode.RESIZE, queue=0, n=-3),
            QueueOp(Opcode.DEREGISTER, queue=0),
            QueueOp(Opcode.THREAD_EXIT))


def queue_case_bytes() -> bytes:
    data = small_case_bytes()
    return enc.insert_section(data, queue_section(_queue_ops(dec.decode(data))))


def test_queue_case_round_trips_through_both_codecs() -> None:
    data = queue_case_bytes()
    case = dec.decode(data)
    assert case.queue == _queue_ops(case)
    assert enc.encode(case) == data
    assert case_native.decode(data).status == 0
    assert case_native.encode_mapped() == data


def test_every_prefix_of_a_queue_case() -> None:
    data = queue_case_bytes()
    for n in range(len(small_case_bytes()), len(data) + 1):
        assert_same_status(data[:n])


def test_every_byte_of_a_queue_section_changed() -> None:
    data = queue_case_bytes()
    for i in range(len(small_case_bytes()), len(data)):
        for value in {0x00, 0xFF, data[i] ^ 0x01, data[i] ^ 0x80}:
            assert_same_status(data[:i] + bytes([value]) + data[i + 1:])


@pytest.mark.parametrize("address", [2**64 - 8, 2**64 - 16, 0, 8])
def test_poke_addresses_far_off_the_stack_fail_in_both(address: int) -> None:
    """C once checked `address + 8 > stack_hi`, which wraps near 2^64 and let such a POKE
    through to the executor."""
    data = small_case_bytes() + queue_section([QueueOp(Opcode.POKE, pc=address, arg=0)])
    assert dec.decode_status(data)[0] == CaseStatus.BAD_FIELD
    assert_same_status(data)


def test_queue_section_without_a_stack_section() -> None:
    """Sections 1..4 then 9: every POKE is off the (empty) stack, other ops decode."""
    sections = [(t, 0, p) for t, p in enc.encode_sections(dec.decode(small_case_bytes()))
                if t < Section.STACK]
    for ops in ([QueueOp(Opcode.POKE, pc=vm.STACK_TOP - 8, arg=1)],
                [QueueOp(Opcode.REGISTER, n=1), QueueOp(Opcode.THREAD_EXIT)]):
        assert_same_status(enc.assemble([*sections, (9, 0, encode_program(ops))]))


@profile()
@given(st.binary(max_size=96))
def test_arbitrary_queue_payloads(payload: bytes) -> None:
    for flags in (0, C.SECTION_OPTIONAL):
        assert_same_status(small_case_bytes() + struct.pack("<HHI", 9, flags, len(payload))
                           + payload)


@profile()
@given(st.binary(max_size=64))
def test_arbitrary_bytes_after_a_queue_op_count(tail: bytes) -> None:
    payload = struct.pack("<I", 3) + tail
    assert_same_status(small_case_bytes() + struct.pack("<HHI", 9, 0, len(payload)) + payload)


def _code_case_bytes() -> bytes:
    """The small case with a CODE_BYTES section of two patches (touching, kept apart)."""
    case = dec.decode(small_case_bytes())
    patches = (C.CodePatch(0x40, b"\xc3"), C.CodePatch(0x41, b"\x90\x55"))
    return enc.encode(C.Case(case.classes, case.methods, case.blobs, case.thread, case.stack,
                           case.context, case.walk, code=patches))


def test_code_bytes_decode_alike_in_every_prefix_and_byte_change() -> None:
    data = _code_case_bytes()
    for n in range(len(data) + 1):
        assert_same_status(data[:n])
    start = len(small_case_bytes())
    for i in range(start, len(data)):
        for value in {0x00, 0xFF, data[i] ^ 0x01, data[i] ^ 0x80}:
            assert_same_status(data[:i] + bytes([value]) + data[i + 1:])


def test_code_bytes_are_mapped_and_encoded_back_by_c() -> None:
    data = _code_case_bytes()
    native = case_native.decode(data)
    assert native.status == 0
    assert case_native.encode_mapped() == data
    assert case_native.code_bytes(vm.CODE_HEAP + 0x3F, 5) == b"\xcc\xc3\x90\x55\xcc"
    case_native.decode(small_case_bytes())          # the next case has the fill back
    assert case_native.code_bytes(vm.CODE_HEAP + 0x40, 2) == b"\xcc\xcc"
