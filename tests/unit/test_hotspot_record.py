"""The HotSpot perturbation record codec (walkfuzz.targets.hotspot.inputs): both versions decode,
version 2 round-trips, version-1 bytes mean what they always meant, relative records resolve
against the bases of the context they are applied to, and bad bytes give one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from walkfuzz import cli
from walkfuzz.targets.hotspot.hserr import FLIGHT_RECORD_AT, FLIGHT_SLOT, flight_record
from walkfuzz.targets.hotspot.inputs import (
    ADD,
    BASES,
    KEEP,
    SET,
    V1_SIZE,
    V2_SIZE,
    V2_TAG,
    XOR,
    Record,
    RecordError,
    RegOp,
    decode,
    records,
)

U64 = st.integers(0, 2**64 - 1)
reg_ops = st.builds(RegOp, st.integers(0, 3), st.integers(0, len(BASES) - 1), U64)
v2_records = st.builds(lambda a, b, c: Record((a, b, c)), reg_ops, reg_ops, reg_ops)
V1_BYTES = st.binary(min_size=V1_SIZE, max_size=V1_SIZE).filter(lambda b: b[0] < 0x80)
MINUS_10 = 2**64 - 10


def fp_below_stack_top(k: int) -> Record:
    return Record((RegOp(), RegOp(), RegOp(SET, BASES.index("stack_hi"), 2**64 - k)))


@given(v2_records)
def test_version_2_round_trips(rec: Record) -> None:
    raw = rec.encode()
    assert len(raw) == V2_SIZE and raw[0] == V2_TAG
    assert decode(raw) == rec


@given(V1_BYTES)
def test_version_1_bytes_decode_as_they_always_did(raw: bytes) -> None:
    rec = decode(raw)
    assert rec.version == 1 and not rec.relative
    for r, reg in enumerate(rec.regs):  # op byte mod 4, little-endian value, no base
        assert reg == RegOp(raw[r * 9] % 4, 0, int.from_bytes(raw[r * 9 + 1:r * 9 + 9], "little"))
    if all(raw[r * 9] < 4 for r in range(3)):
        assert rec.encode() == raw


def test_a_stored_version_1_finding_keeps_its_meaning() -> None:
    old = bytes([3]) + (0x1234).to_bytes(8, "little") + bytes(9) + bytes([2]) + \
        (1 << 12).to_bytes(8, "little")
    rec = decode(old)
    assert rec.describe() == "pc set 0x1234, sp keep, fp xor 0x1000"
    assert rec.apply((0x10, 0x20, 0x30), {}) == (0x1234, 0x20, 0x30 ^ 0x1000)


def test_relative_record_resolves_against_the_context_it_is_applied_to() -> None:
    rec = fp_below_stack_top(7)
    assert rec.describe() == "pc keep, sp keep, fp set stack_hi-0x7"
    for stack_hi in (0x7F00_0000_1000, 0x7FFF_1234_5000):  # two JVM runs, two layouts
        assert rec.apply((1, 2, 3), {"stack_hi": stack_hi}) == (1, 2, stack_hi - 7)


@pytest.mark.parametrize(("op", "expect"), [
    (KEEP, 0x3000), (ADD, 0x3000 + 0x7000 - 10), (XOR, 0x3000 ^ (0x7000 - 10)),
    (SET, 0x7000 - 10)])
def test_every_op_takes_base_plus_value_as_its_operand(op: int, expect: int) -> None:
    rec = Record((RegOp(), RegOp(), RegOp(op, BASES.index("sp"), MINUS_10)))
    assert rec.apply((0x1000, 0x7000, 0x3000), {}) == (0x1000, 0x7000, expect)


def test_a_missing_base_means_no_call() -> None:
    rec = Record((RegOp(SET, BASES.index("code"), 0x40), RegOp(), RegOp()))
    assert rec.apply((1, 2, 3), {"code": None}) is None
    assert rec.apply((1, 2, 3), {"code": 0}) is None
    kept = Record((RegOp(KEEP, BASES.index("code"), 0x40), RegOp(), RegOp()))
    assert kept.apply((1, 2, 3), {}) == (1, 2, 3)  # a kept register needs no base


def test_a_stream_mixes_versions_and_drops_a_cut_tail() -> None:
    v1 = bytes(V1_SIZE)
    v2 = fp_below_stack_top(9).encode()
    got = list(records(v1 + v2 + v1 + v2[:10]))
    assert [raw for _, raw in got] == [v1, v2, v1]
    assert [r.version for r, _ in got] == [1, 2, 1]


def test_version_1_cannot_hold_a_base() -> None:
    with pytest.raises(RecordError, match="version 1 has none"):
        Record(fp_below_stack_top(1).regs, version=1).encode()


@pytest.mark.parametrize(("raw", "message"), [
    (b"", "input is empty"),
    (bytes([0x83]) + bytes(30), r"unknown perturbation record version 3 \(first byte 0x83\)"),
    (bytes([0xFF]) + bytes(30), "unknown perturbation record version 127"),
    (bytes([V2_TAG]) + bytes(10), "cut short: 11 of 31 bytes"),
    (bytes(20), "cut short: 20 of 27 bytes"),
    (bytes([V2_TAG, 4]) + bytes(29), "pc op 4 is not one of 0..3"),
    (bytes([V2_TAG]) + bytes(10) + bytes([0, 8]) + bytes(18), "sp base 8 is not one of 0..7"),
])
def test_bad_bytes_are_one_clear_error(raw: bytes, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        decode(raw)


def test_replay_of_an_unknown_version_is_one_line_and_starts_no_jvm(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    finding = tmp_path / "crash-future"
    finding.write_bytes(bytes([0x85]) + bytes(40))
    assert cli.main(["replay", "--target", "hotspot", str(finding)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "crash-future" in err[0] and "unknown perturbation record version 5" in err[0]


@pytest.mark.parametrize("rec", [fp_below_stack_top(9).encode(), bytes([1]) + bytes(26)])
def test_the_control_runs_flight_slot_gives_back_the_record_in_flight(
        tmp_path: Path, rec: bytes) -> None:
    slot = bytearray(FLIGHT_SLOT)  # tid u32, seq u32, strategy, pad, record at +16
    slot[0:4] = (4242).to_bytes(4, "little")
    slot[8] = 7
    slot[FLIGHT_RECORD_AT:FLIGHT_RECORD_AT + len(rec)] = rec
    flight = tmp_path / "flight.bin"
    flight.write_bytes(bytes(FLIGHT_SLOT) + bytes(slot))
    assert flight_record(flight, 4242) == (7, rec)
    assert flight_record(flight, 4243) is None
