"""The C case decoder on bad bytes: every input gives a defined status, never a crash; valid
cases round-trip; a case that failed to decode leaves nothing walkable mapped."""

from __future__ import annotations

import os
import struct

import pytest

from tests.native.refwalk_helpers import CASE, decode, encode, ffi, generate, lib, run

SECTION_HEADER = struct.Struct("<HHI")


def sections(data: bytes) -> list[tuple[int, int, bytes]]:
    """(type, flags, payload) of each section of a well-formed case."""
    out, pos = [], 8
    while pos < len(data):
        stype, flags, length = SECTION_HEADER.unpack_from(data, pos)
        out.append((stype, flags, data[pos + 8:pos + 8 + length]))
        pos += 8 + length
    return out


def assemble(parts: list[tuple[int, int, bytes]], header: bytes = b"WFCS\x01\x00\x00\x00") -> bytes:
    return header + b"".join(SECTION_HEADER.pack(t, f, len(p)) + p for t, f, p in parts)


@pytest.fixture(scope="module")
def valid() -> bytes:
    generate(9, max_frames=6)
    return encode()


def status_of(data: bytes) -> int:
    status, _ = decode(data)
    return status


def test_valid_case_round_trips_and_walks_the_same(valid: bytes) -> None:
    generate(9, max_frames=6)
    first = run().run_result, run().end_code, run().frames
    assert status_of(valid) == lib.WF_CASE_OK
    assert encode() == valid
    r = run()
    assert (r.run_result, r.end_code, r.frames) == first
    assert r.oracle == lib.WF_ORACLE_TRUTH and r.finding == lib.WF_FINDING_NONE


@pytest.mark.parametrize(("data", "status"), [
    (b"", lib.WF_CASE_ERR_TRUNCATED),
    (b"WFCS\x01", lib.WF_CASE_ERR_TRUNCATED),
    (b"XFCS\x01\x00\x00\x00", lib.WF_CASE_ERR_MAGIC),
    (b"WFCS\x02\x00\x00\x00", lib.WF_CASE_ERR_VERSION),
    (b"WFCS\x01\x00\x01\x00", lib.WF_CASE_ERR_BAD_FIELD),
    (b"WFCS\x01\x00\x00\x00", lib.WF_CASE_ERR_MISSING_SECTION),
    (b"WFCS\x01\x00\x00\x00\x01\x00", lib.WF_CASE_ERR_TRUNCATED),
    (b"WFCS\x01\x00\x00\x00\x01\x00\x00\x00\x09\x00\x00\x00", lib.WF_CASE_ERR_TRUNCATED),
])
def test_bad_headers(data: bytes, status: int) -> None:
    assert status_of(data) == status


def test_every_prefix_is_an_error_naming_its_offset(valid: bytes) -> None:
    boundaries, pos, complete = {8}, 8, -1
    for stype, _, payload in sections(valid):
        pos += 8 + len(payload)
        boundaries.add(pos)
        if stype == lib.WF_SECTION_WALK:
            complete = pos  # every required section is there; TRUTH is optional
    for cut in range(len(valid)):
        status, err = decode(valid[:cut])
        want = lib.WF_CASE_ERR_MISSING_SECTION if cut in boundaries else lib.WF_CASE_ERR_TRUNCATED
        if cut == complete:
            assert status == lib.WF_CASE_OK
            continue
        assert status == want, f"prefix {cut}: {ffi.string(err.message)!r}"
        assert err.offset <= cut
        assert ffi.string(err.message)


def test_section_rules(valid: bytes) -> None:
    parts = sections(valid)
    swapped = [*parts[:5], parts[6], parts[5], *parts[7:]]  # WALK before CONTEXT
    assert status_of(assemble(swapped)) == lib.WF_CASE_ERR_SECTION_ORDER
    assert status_of(assemble([*parts, (0x8001, 0, b"x")])) == lib.WF_CASE_ERR_UNKNOWN_SECTION
    assert status_of(assemble([*parts, (0x8001, 1, b"x")])) == lib.WF_CASE_OK
    assert status_of(assemble([*parts, (0x8001, 2, b"x")])) == lib.WF_CASE_ERR_BAD_FIELD
    longer = [(t, f, p + b"\0" if t == lib.WF_SECTION_CONTEXT else p) for t, f, p in parts]
    assert status_of(assemble(longer)) == lib.WF_CASE_ERR_SECTION_LENGTH
    without_walk = [s for s in parts if s[0] != lib.WF_SECTION_WALK]
    status, err = decode(assemble(without_walk))
    assert (status, err.section) == (lib.WF_CASE_ERR_MISSING_SECTION, lib.WF_SECTION_WALK)


def test_field_rules(valid: bytes) -> None:
    parts = dict((t, p) for t, _, p in sections(valid))

    def with_section(stype: int, payload: bytes) -> bytes:
        return assemble([(t, 0, payload if t == stype else p) for t, p in parts.items()])

    classes = struct.pack("<IIH", 1, 0, 3) + b"a\0b" + b"\0\0"
    assert status_of(with_section(lib.WF_SECTION_CLASSES, classes)) == lib.WF_CASE_ERR_BAD_STRING
    too_many = struct.pack("<I", lib.WF_VM_MAX_CLASSES + 1)
    assert status_of(with_section(lib.WF_SECTION_CLASSES, too_many)) == lib.WF_CASE_ERR_LIMIT
    thread = bytearray(parts[lib.WF_SECTION_THREAD])
    thread[0] = 99
    bad_state = with_section(lib.WF_SECTION_THREAD, bytes(thread))
    assert status_of(bad_state) == lib.WF_CASE_ERR_BAD_FIELD
    stack = parts[lib.WF_SECTION_STACK][:-4]
    assert status_of(with_section(lib.WF_SECTION_STACK, stack)) == lib.WF_CASE_ERR_BAD_FIELD
    code = bytearray(parts[lib.WF_SECTION_CODE])
    code[4] = 9  # first blob's kind
    assert status_of(with_section(lib.WF_SECTION_CODE, bytes(code))) == lib.WF_CASE_ERR_BAD_FIELD


def test_failed_decode_leaves_nothing_to_walk(valid: bytes) -> None:
    assert status_of(valid[:-1]) != lib.WF_CASE_OK
    assert CASE.has_truth == 0
    r = run()
    assert (r.run_result, r.finding) == (lib.ASGST_NO_THREAD, lib.WF_FINDING_NONE)


def test_garbage_and_flipped_bytes_give_defined_statuses(valid: bytes) -> None:
    defined = {getattr(lib, n) for n in dir(lib) if n.startswith("WF_CASE_ERR_")} | {0}
    rng = __import__("random").Random(5)
    for i in range(20000):
        if i % 2:
            data = os.urandom(rng.randrange(0, 200))
        else:
            flipped = bytearray(valid)
            for _ in range(rng.randrange(1, 4)):
                flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
            data = bytes(flipped)
        status = status_of(data)
        assert status in defined
        if status == lib.WF_CASE_OK:
            assert run().finding in (lib.WF_FINDING_NONE, lib.WF_FINDING_INVALID_TRACE)
