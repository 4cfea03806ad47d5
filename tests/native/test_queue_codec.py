"""Section 9 (queue programs): the Python codec and the C decoder/encoder agree on every byte
string, and a program survives C decode -> C encode unchanged."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.encode import insert_section
from walkfuzz.targets.minivm.case.queue_program import (
    Opcode,
    QueueOp,
    decode_payload,
    encode_program,
    queue_section,
)
from walkfuzz.targets.minivm.case.status import CaseDecodeError
from walkfuzz.targets.minivm.queue.cases import base_case
from walkfuzz.targets.minivm.queue.run import decode_status, encode_mapped

BASE, CASE = base_case(7, vm.ThreadState.IN_JAVA, 0)
SECTION_HEADER = 8
# Where section 9 goes in BASE: before its section 10 (code bytes), if it has one.
QUEUE_AT = insert_section(BASE, b"\x09\0\0\0\xff\xff\xff\xff").index(b"\x09\0\0\0\xff\xff\xff\xff")

ops = st.builds(
    QueueOp, st.sampled_from(list(Opcode)), queue=st.integers(0, 255),
    n=st.integers(-2**31, 2**31 - 1), options=st.integers(0, 2**32 - 1),
    which=st.integers(0, 1), mode=st.integers(0, 2), pc=st.integers(0, 2**64 - 1),
    sp=st.integers(0, 2**64 - 1), fp=st.integers(0, 2**64 - 1), arg=st.integers(0, 2**64 - 1),
    inner_at=st.integers(0, 2**16 - 1), inner_count=st.integers(0, 2))


def _python_status(payload: bytes) -> tuple[int, int]:
    try:
        decode_payload(payload, CASE.stack_lo, CASE.stack_hi)
    except CaseDecodeError as err:
        return int(err.status), QUEUE_AT + SECTION_HEADER + err.offset
    return 0, 0


def _c_status(payload: bytes) -> tuple[int, int]:
    return decode_status(insert_section(BASE, queue_section_raw(payload)))


def queue_section_raw(payload: bytes) -> bytes:
    return (9).to_bytes(2, "little") + b"\0\0" + len(payload).to_bytes(4, "little") + payload


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(program=st.lists(ops, max_size=6), cut=st.integers(0, 400), noise=st.binary(max_size=3))
def test_python_and_c_decoders_agree(program: list[QueueOp], cut: int, noise: bytes) -> None:
    payload = (encode_program(program) + noise)[:cut]
    assert _python_status(payload) == _c_status(payload)


def test_valid_program_round_trips_through_c() -> None:
    word = CASE.stack_lo
    program = [QueueOp(Opcode.REGISTER, n=4, options=3),
               QueueOp(Opcode.HANDLER, queue=0, which=1, mode=2, options=1),
               QueueOp(Opcode.ENQUEUE, queue=0, pc=1, sp=2, fp=3, arg=2**64 - 1),
               QueueOp(Opcode.SAFEPOINT, pc=4, sp=5, fp=6, inner_at=9, inner_count=2),
               QueueOp(Opcode.SET_ARG, queue=0, n=-1, arg=7),
               QueueOp(Opcode.RESIZE, queue=0, n=-3),
               QueueOp(Opcode.COMPRESS, queue=1, pc=8, sp=9, fp=10),
               QueueOp(Opcode.POKE, pc=word, arg=11),
               QueueOp(Opcode.SIZE_INFO, queue=2), QueueOp(Opcode.DEREGISTER, queue=0),
               QueueOp(Opcode.THREAD_EXIT)]
    data = insert_section(BASE, queue_section(program))
    assert decode_status(data) == (0, 0)
    assert encode_mapped() == data
    assert decode_payload(encode_program(program), CASE.stack_lo, CASE.stack_hi) == tuple(program)
