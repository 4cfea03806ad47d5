"""The agent's record codec (native/agents/hotspot/wf_hs_record.c, called through ctypes on the
built agent) and the Python one (walkfuzz.targets.hotspot.inputs) agree: on whether bytes are a
record and what it holds, on its version-2 bytes, and on what it does to a given context with
given bases.
No JVM is started: the agent library loads into any process (it finds libjvm with dlsym)."""

from __future__ import annotations

import ctypes
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.opt_outs import skip_if_opted_out
from walkfuzz.targets.hotspot.agent_build import build_agent
from walkfuzz.targets.hotspot.inputs import (
    BASES,
    SET,
    V1_SIZE,
    V2_SIZE,
    V2_TAG,
    Record,
    RecordError,
    RegOp,
    decode,
)
from walkfuzz.targets.hotspot.jdk import build_jdk

U64 = st.integers(0, 2**64 - 1)
REGS3 = ctypes.c_uint64 * 3


class CRecord(ctypes.Structure):  # wf_hs_record
    _fields_ = [("op", ctypes.c_uint8 * 3), ("base", ctypes.c_uint8 * 3),
                ("value", ctypes.c_uint64 * 3)]


class CBases(ctypes.Structure):  # wf_hs_bases
    _fields_ = [("at", ctypes.c_uint64 * len(BASES))]


@cache
def agent() -> ctypes.CDLL:
    skip_if_opted_out("hotspot")
    include = build_jdk().include  # a missing JDK fails here, naming what is missing
    assert include is not None
    lib = ctypes.CDLL(str(build_agent(include)))
    lib.wf_hs_record_decode.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(CRecord)]
    lib.wf_hs_record_encode.argtypes = [ctypes.POINTER(CRecord), ctypes.c_char_p]
    lib.wf_hs_record_apply_regs.argtypes = [ctypes.POINTER(CRecord), ctypes.POINTER(CBases),
                                            REGS3]
    return lib


def c_decode(raw: bytes) -> tuple[int, CRecord]:
    rec = CRecord()
    return agent().wf_hs_record_decode(raw, len(raw), ctypes.byref(rec)), rec


def c_record(rec: Record) -> CRecord:
    status, c = c_decode(Record(rec.regs).encode())
    assert status == V2_SIZE
    return c


def as_python(c: CRecord, version: int) -> Record:
    regs = [RegOp(c.op[r], c.base[r], c.value[r]) for r in range(3)]
    return Record((regs[0], regs[1], regs[2]), version=version)


# Byte strings near the record formats: version 1, version 2 (valid or not), other versions.
first_bytes = st.one_of(st.integers(0, 0x7F), st.just(V2_TAG), st.integers(0x80, 0xFF))
v2_fields = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 9), U64), min_size=3, max_size=3)


@st.composite
def record_bytes(draw: st.DrawFn) -> bytes:
    first = draw(first_bytes)
    if first == V2_TAG:
        body = b"".join(bytes([op, base]) + v.to_bytes(8, "little")
                        for op, base, v in draw(v2_fields))
    else:
        body = draw(st.binary(min_size=V1_SIZE - 1, max_size=V2_SIZE))
    return (bytes([first]) + body)[:draw(st.integers(0, V2_SIZE + 2))]


@pytest.fixture(autouse=True, scope="module")
def built_agent() -> None:
    """Build (or find) the agent before Hypothesis times any example."""
    agent()


@settings(max_examples=400, deadline=None)
@given(record_bytes())
def test_c_and_python_agree_on_decoding(raw: bytes) -> None:
    status, c = c_decode(raw)
    try:
        rec = decode(raw)
    except RecordError as e:
        expected = 0 if "cut short" in str(e) or not raw else -1 if "version" in str(e) else -2
        assert status == expected, str(e)
        return
    assert status == (V1_SIZE if rec.version == 1 else V2_SIZE)
    assert as_python(c, rec.version) == rec
    out = ctypes.create_string_buffer(V2_SIZE)
    assert agent().wf_hs_record_encode(ctypes.byref(c), out) == V2_SIZE
    assert out.raw == Record(rec.regs).encode()  # the agent writes version 2


reg_ops = st.builds(RegOp, st.integers(0, 3), st.integers(0, len(BASES) - 1), U64)
bases = st.lists(st.one_of(st.just(0), U64), min_size=len(BASES), max_size=len(BASES))


@settings(max_examples=400, deadline=None)
@given(st.tuples(reg_ops, reg_ops, reg_ops), st.tuples(U64, U64, U64), bases)
def test_c_and_python_agree_on_what_a_record_does(
        ops: tuple[RegOp, RegOp, RegOp], regs: tuple[int, int, int], at: list[int]) -> None:
    rec = Record(ops)
    c_bases = CBases()
    for i, v in enumerate(at[1:], start=1):  # at[abs] is 0 by contract
        c_bases.at[i] = v
    c_regs = REGS3(*regs)
    applied = agent().wf_hs_record_apply_regs(ctypes.byref(c_record(rec)),
                                              ctypes.byref(c_bases), c_regs)
    want = rec.apply(regs, dict(zip(BASES, at, strict=True)))
    assert applied == (want is not None)
    assert tuple(c_regs) == (want if want is not None else regs)  # untouched when skipped


def test_fp_just_below_the_stack_top_follows_the_stack_in_c() -> None:
    rec = Record((RegOp(), RegOp(), RegOp(SET, BASES.index("stack_hi"), 2**64 - 9)))
    for stack_hi in (0x7F58_9D0F_E000, 0x7F7A_9F7F_F000):
        c_bases = CBases()
        c_bases.at[BASES.index("stack_hi")] = stack_hi
        c_regs = REGS3(0x7F00_0000_1000, stack_hi - 0x800, 0x42)
        assert agent().wf_hs_record_apply_regs(ctypes.byref(c_record(rec)),
                                               ctypes.byref(c_bases), c_regs) == 1
        assert tuple(c_regs) == (0x7F00_0000_1000, stack_hi - 0x800, stack_hi - 9)
