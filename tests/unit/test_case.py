"""The case format in Python (docs/case-format.md §2): round trips and every decoder error,
with the status, section and offset the rules give."""

from __future__ import annotations

import dataclasses
import struct

import pytest
from hypothesis import given

from walkfuzz.core.errors import CaseFormatError
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import encode as enc
from walkfuzz.targets.minivm.case import format as C
from walkfuzz.targets.minivm.case.builder import PC_C, CaseBuilder
from walkfuzz.targets.minivm.case.queue_program import Opcode, QueueOp, queue_section
from walkfuzz.targets.minivm.case.stack_runs import StackRun
from walkfuzz.targets.minivm.case.status import CaseDecodeError, CaseStatus, Section
from walkfuzz.targets.minivm.case.strategies import profile, repeated_stacks, valid_cases


def small_case() -> C.Case:
    b = CaseBuilder(stack_words=4)
    fp = b.c_frame(b.hi - 16, ret=0, caller_fp=0)
    return b.case(context=(PC_C, b.hi - 32, fp))


def sections(case: C.Case | None = None) -> list[tuple[int, int, bytes]]:
    return [(t, 0, p) for t, p in enc.encode_sections(case or small_case())]


def payload_offset(secs: list[tuple[int, int, bytes]], index: int) -> int:
    """Offset of section `index`'s payload in assemble(secs)."""
    return C.HEADER_SIZE + sum(8 + len(p) for _, _, p in secs[:index]) + 8


def replace(secs: list[tuple[int, int, bytes]], stype: int, payload: bytes,
            flags: int = 0) -> list[tuple[int, int, bytes]]:
    return [(t, flags, payload) if t == stype else (t, f, p) for t, f, p in secs]


def status_of(data: bytes) -> tuple[CaseStatus, int, int]:
    return dec.decode_status(data)


# ---- round trips -----------------------------------------------------------------------------

@profile()
@given(valid_cases())
def test_decode_of_encode_is_the_case(case: C.Case) -> None:
    assert dec.decode(enc.encode(case)) == case


@profile()
@given(valid_cases())
def test_encode_of_decode_is_the_bytes(case: C.Case) -> None:
    data = enc.encode(case)
    assert enc.encode(dec.decode(data)) == data


@profile()
@given(repeated_stacks())
def test_a_repeated_stack_round_trips_as_its_repeat(stack_and_run: tuple[bytes, StackRun]) -> None:
    stack, run = stack_and_run
    data = enc.encode(dataclasses.replace(small_case(), stack=stack, stack_run=run))
    back = dec.decode(data)
    assert (back.stack, back.stack_run) == (stack, run)
    assert enc.encode(back) == data


def test_optional_unknown_section_is_skipped_and_not_reencoded() -> None:
    secs = sections()
    extra = (0x8000, C.SECTION_OPTIONAL, b"experiment")
    data = enc.assemble([*secs, extra])
    assert dec.decode(data) == small_case()
    assert enc.encode(dec.decode(data)) == enc.assemble(secs)


# ---- header errors ---------------------------------------------------------------------------

def test_empty_input_is_truncated() -> None:
    assert status_of(b"") == (CaseStatus.TRUNCATED, 0, 0)


def test_short_header_is_truncated() -> None:
    assert status_of(b"WFCS\x01\x00\x00") == (CaseStatus.TRUNCATED, 0, 0)


def test_bad_magic_reported_at_offset_0() -> None:
    assert status_of(enc.assemble(sections(), magic=b"WFCZ")) == (CaseStatus.MAGIC, 0, 0)


def test_wrong_version_reported_after_the_header() -> None:
    assert status_of(enc.assemble(sections(), version=2)) == (CaseStatus.VERSION, 0, 8)


def test_header_flags_must_be_zero() -> None:
    assert status_of(enc.assemble(sections(), header_flags=1)) == (CaseStatus.BAD_FIELD, 0, 8)


def test_error_message_names_the_file_and_the_problem() -> None:
    with pytest.raises(CaseFormatError) as info:
        dec.decode(enc.assemble(sections(), version=7), source="corpus/abc.bin")
    message = str(info.value)
    assert message.startswith("corpus/abc.bin: bad-version")
    assert "version 7" in message and "byte 8" in message


# ---- section scan ----------------------------------------------------------------------------

def test_header_only_misses_the_first_section() -> None:
    assert status_of(enc.assemble([])) == (CaseStatus.MISSING_SECTION, Section.CLASSES, 8)


def test_missing_required_section_reported_at_the_end() -> None:
    secs = [s for s in sections() if s[0] != Section.THREAD]
    data = enc.assemble(secs)
    assert status_of(data) == (CaseStatus.MISSING_SECTION, Section.THREAD, len(data))


@pytest.mark.parametrize("extra, field_offset", [(b"\x01", 0), (b"\x01\x00\x00", 2),
                                                 (b"\x01\x00\x00\x00\x00", 4)])
def test_section_header_cut_short_is_truncated_at_the_field(extra: bytes,
                                                            field_offset: int) -> None:
    data = enc.assemble(sections()) + extra
    start = len(data) - len(extra)
    assert status_of(data) == (CaseStatus.TRUNCATED, 0, start + field_offset)


def test_payload_cut_short_is_truncated() -> None:
    secs = sections()
    data = enc.assemble(secs)[:-1]
    assert status_of(data) == (CaseStatus.TRUNCATED, Section.WALK, payload_offset(secs, 6))


def test_section_flags_other_than_optional_are_bad() -> None:
    secs = replace(sections(), Section.CONTEXT, enc.encode_sections(small_case())[5][1], flags=2)
    assert status_of(enc.assemble(secs)) == (CaseStatus.BAD_FIELD, Section.CONTEXT,
                                           payload_offset(secs, 5))


def test_sections_out_of_order() -> None:
    secs = sections()
    swapped = [*secs[:5], secs[6], secs[5]]
    assert status_of(enc.assemble(swapped)) == (CaseStatus.SECTION_ORDER, Section.CONTEXT,
                                              payload_offset(swapped, 6))


def test_methods_before_classes_see_no_class() -> None:
    secs = sections()
    swapped = [secs[1], secs[0], *secs[2:]]
    assert status_of(enc.assemble(swapped))[:2] == (CaseStatus.BAD_FIELD, Section.METHODS)


def test_section_twice_is_out_of_order() -> None:
    secs = sections()
    doubled = [*secs[:2], secs[1], *secs[2:]]
    assert status_of(enc.assemble(doubled))[:2] == (CaseStatus.SECTION_ORDER, Section.METHODS)


def test_unknown_section_without_optional_flag() -> None:
    secs = [*sections(), (0x7F00, 0, b"")]
    assert status_of(enc.assemble(secs)) == (CaseStatus.UNKNOWN_SECTION, 0x7F00,
                                           payload_offset(secs, 7))


# ---- section 9: the queue program (§7) -----------------------------------------------------

def _program(case: C.Case) -> tuple[QueueOp, ...]:
    return (QueueOp(Opcode.REGISTER, n=2, options=1),
            QueueOp(Opcode.ENQUEUE, queue=0, pc=1, sp=2, fp=3, arg=4),
            QueueOp(Opcode.POKE, pc=case.stack_lo, arg=5),
            QueueOp(Opcode.SAFEPOINT, pc=1, sp=2, fp=3, inner_at=0, inner_count=1),
            QueueOp(Opcode.SIZE_INFO, queue=0))


def test_queue_program_round_trips() -> None:
    case = dataclasses.replace(small_case(), queue=_program(small_case()))
    data = enc.encode(case)
    assert data == enc.encode(small_case()) + queue_section(_program(small_case()))
    assert dec.decode(data) == case
    assert dec.decode(enc.encode(small_case())).queue is None


def test_empty_queue_program_is_kept() -> None:
    case = dataclasses.replace(small_case(), queue=())
    assert dec.decode(enc.encode(case)).queue == ()


def test_queue_program_errors_report_section_9() -> None:
    secs = [*sections(), (9, 0, struct.pack("<IB", 1, 16))]      # opcode 16
    assert status_of(enc.assemble(secs)) == (CaseStatus.BAD_FIELD, 9,
                                           payload_offset(secs, 7) + 5)
    secs = [*sections(), (9, 0, struct.pack("<I", 4097))]
    assert status_of(enc.assemble(secs)) == (CaseStatus.LIMIT, 9, payload_offset(secs, 7) + 4)
    secs = [*sections(), (9, 0, struct.pack("<I", 0) + b"x")]
    assert status_of(enc.assemble(secs)) == (CaseStatus.SECTION_LENGTH, 9,
                                           payload_offset(secs, 7) + 4)


def test_poke_is_checked_against_the_stack_section() -> None:
    case = small_case()
    for address, status in ((case.stack_hi - 8, CaseStatus.OK),
                            (case.stack_hi, CaseStatus.BAD_FIELD),
                            (case.stack_lo - 8, CaseStatus.BAD_FIELD),
                            (2**64 - 8, CaseStatus.BAD_FIELD)):
        data = enc.encode(case) + queue_section([QueueOp(Opcode.POKE, pc=address)])
        assert status_of(data)[0] == status, hex(address)


def test_context_payload_too_short_fails_at_the_read() -> None:
    secs = replace(sections(), Section.CONTEXT, bytes(23))
    assert status_of(enc.assemble(secs)) == (CaseStatus.SECTION_LENGTH, Section.CONTEXT,
                                           payload_offset(secs, 5) + 16)


def test_context_payload_too_long_fails_after_the_content() -> None:
    secs = replace(sections(), Section.CONTEXT, bytes(25))
    assert status_of(enc.assemble(secs)) == (CaseStatus.SECTION_LENGTH, Section.CONTEXT,
                                           payload_offset(secs, 5) + 24)


# ---- payload rules ---------------------------------------------------------------------------

def _with(stype: int, payload: bytes) -> tuple[CaseStatus, int, int]:
    secs = replace(sections(), stype, payload)
    status, section, offset = status_of(enc.assemble(secs))
    return status, section, offset - payload_offset(secs, stype - 1)


def test_class_count_above_limit() -> None:
    assert _with(Section.CLASSES, struct.pack("<I", 257)) == (CaseStatus.LIMIT, 1, 4)


def test_string_longer_than_1024_is_a_limit() -> None:
    payload = struct.pack("<IIH", 1, 0, 1025) + b"x" * 1025 + b"\0\0"
    assert _with(Section.CLASSES, payload) == (CaseStatus.LIMIT, 1, 10)


def test_nul_in_a_string_is_bad_string() -> None:
    payload = struct.pack("<IIH", 1, 0, 3) + b"a\0b" + b"\0\0"
    assert _with(Section.CLASSES, payload) == (CaseStatus.BAD_STRING, 1, 10)


def test_zero_methods_is_bad_field() -> None:
    assert _with(Section.METHODS, struct.pack("<I", 0)) == (CaseStatus.BAD_FIELD, 2, 4)


def test_method_of_a_missing_class_is_bad_field() -> None:
    payload = struct.pack("<IIIH", 1, 2, 0, 5) + b"\0\0" * 3
    assert _with(Section.METHODS, payload) == (CaseStatus.BAD_FIELD, 2, 20)


def test_string_pool_above_one_mib_is_a_limit() -> None:
    name = b"n" * 1024
    classes = struct.pack("<I", 256) + (struct.pack("<I", 0) + enc._str(name) * 2) * 256
    methods = struct.pack("<I", 1024) + (struct.pack("<IIH", 0, 0, 1) + enc._str(name) * 3) * 1024
    secs = replace(replace(sections(), Section.CLASSES, classes), Section.METHODS, methods)
    status, section, offset = status_of(enc.assemble(secs))
    # 256 classes use 524800 pool bytes; 170 methods fit in the rest; the 171st does not.
    record = 10 + 3 * 1026
    assert (status, section) == (CaseStatus.LIMIT, Section.METHODS)
    assert offset == payload_offset(secs, 1) + 4 + 171 * record


def _blob(kind: int = vm.BlobKind.STUB, level: int = 0, reserved: int = 0, start: int = 0,
          size: int = 16, frame_size: int = 16, complete: int = 0,
          method: int = vm.NO_METHOD, descs: int = 0) -> bytes:
    return struct.pack("<BBHIIIIII", kind, level, reserved, start, size, frame_size, complete,
                       method, descs)


@pytest.mark.parametrize("fields", [
    {"kind": 0}, {"kind": 6}, {"level": 1}, {"kind": vm.BlobKind.COMPILED, "method": 0},
    {"kind": vm.BlobKind.COMPILED, "level": 5, "method": 0}, {"reserved": 1}, {"size": 0},
    {"start": 0xFFFF0, "size": 0x11}, {"frame_size": 12}, {"frame_size": 8},
    {"frame_size": 16392}, {"complete": 17}, {"method": 0},
    {"kind": vm.BlobKind.INTERPRETER, "frame_size": 0, "complete": 17},
    {"kind": vm.BlobKind.ENTRY, "frame_size": 0, "complete": 1},
    {"kind": vm.BlobKind.ENTRY, "frame_size": 16},
    {"kind": vm.BlobKind.NATIVE_WRAPPER, "method": 3}, {"descs": 1},
])
def test_bad_blob_field(fields: dict[str, int]) -> None:
    payload = struct.pack("<I", 1) + _blob(**fields)
    assert _with(Section.CODE, payload) == (CaseStatus.BAD_FIELD, 3, 32)


def test_overlapping_blobs_are_bad_field() -> None:
    payload = struct.pack("<I", 2) + _blob(size=32) + _blob(start=31)
    assert _with(Section.CODE, payload) == (CaseStatus.BAD_FIELD, 3, 60)


def test_interpreter_blob_may_have_a_frame_complete() -> None:
    payload = struct.pack("<I", 1) + _blob(vm.BlobKind.INTERPRETER, frame_size=0, complete=16)
    assert _with(Section.CODE, payload)[0] == CaseStatus.OK


# ---- section 10: code bytes -------------------------------------------------------------------

def _with_code(payload: bytes) -> tuple[CaseStatus, int, int]:
    secs = [*sections(), (Section.CODE_BYTES, 0, payload)]
    status, section, offset = status_of(enc.assemble(secs))
    return status, section, offset - payload_offset(secs, len(secs) - 1)


def _patch(offset: int, data: bytes) -> bytes:
    return struct.pack("<II", offset, len(data)) + data


def test_code_bytes_round_trip_and_read_back() -> None:
    payload = struct.pack("<I", 2) + _patch(0x10, b"\xc3") + _patch(0x11, b"\x90\x90")
    case = dec.decode(enc.assemble([*sections(), (Section.CODE_BYTES, 0, payload)]))
    assert case.code == (C.CodePatch(0x10, b"\xc3"), C.CodePatch(0x11, b"\x90\x90"))
    assert [case.code_byte(vm.CODE_HEAP + a) for a in (0xF, 0x10, 0x12, 0x13)] == [
        0xCC, 0xC3, 0x90, 0xCC]
    assert dec.decode(enc.encode(case)) == case


@pytest.mark.parametrize("payload, status, offset", [
    (struct.pack("<I", 1025), CaseStatus.LIMIT, 4),
    (struct.pack("<I", 1) + _patch(0, b""), CaseStatus.BAD_FIELD, 12),
    (struct.pack("<I", 1) + _patch(0xFFFFF, b"ab"), CaseStatus.BAD_FIELD, 12),
    (struct.pack("<I", 2) + _patch(8, b"abc") + _patch(10, b"d"), CaseStatus.BAD_FIELD, 23),
    (struct.pack("<I", 1) + struct.pack("<II", 0, 4) + b"ab", CaseStatus.SECTION_LENGTH, 12),
    (struct.pack("<I", 1) + struct.pack("<I", 0), CaseStatus.SECTION_LENGTH, 4),
])
def test_bad_code_bytes(payload: bytes, status: CaseStatus, offset: int) -> None:
    assert _with_code(payload) == (status, Section.CODE_BYTES, offset)


def _compiled_with(desc: bytes, count: int = 1) -> bytes:
    return (struct.pack("<I", 1) + _blob(vm.BlobKind.COMPILED, 2, size=64, method=0,
                                         descs=count) + desc)


@pytest.mark.parametrize("begin, end, scopes, status", [
    (4, 4, 1, CaseStatus.BAD_FIELD), (4, 65, 1, CaseStatus.BAD_FIELD),
    (4, 8, 0, CaseStatus.BAD_FIELD), (4, 8, 9, CaseStatus.LIMIT)])
def test_bad_pc_descriptor(begin: int, end: int, scopes: int, status: CaseStatus) -> None:
    desc = struct.pack("<IIB", begin, end, scopes)
    assert _with(Section.CODE, _compiled_with(desc)) == (status, 3, 41)


def test_descriptors_out_of_order_are_bad_field() -> None:
    scope = struct.pack("<IH", 0, 0)
    desc = struct.pack("<IIB", 8, 16, 1) + scope + struct.pack("<IIB", 12, 20, 1) + scope
    assert _with(Section.CODE, _compiled_with(desc, 2)) == (CaseStatus.BAD_FIELD, 3, 56)


@pytest.mark.parametrize("method, bci", [(3, 0), (2, 10)])
def test_bad_scope(method: int, bci: int) -> None:
    desc = struct.pack("<IIB", 0, 8, 1) + struct.pack("<IH", method, bci)
    assert _with(Section.CODE, _compiled_with(desc)) == (CaseStatus.BAD_FIELD, 3, 47)


def test_too_many_descriptors_in_total_is_a_limit() -> None:
    payload = struct.pack("<I", 1) + _blob(vm.BlobKind.COMPILED, 2, size=64, method=0,
                                           descs=8193)
    assert _with(Section.CODE, payload) == (CaseStatus.LIMIT, 3, 32)


@pytest.mark.parametrize("payload", [
    struct.pack("<BBHIQQQ", 8, 0, 0, 0, 0, 0, 0), struct.pack("<BBHIQQQ", 2, 4, 0, 0, 0, 0, 0),
    struct.pack("<BBHIQQQ", 2, 1, 1, 0, 0, 0, 0), struct.pack("<BBHIQQQ", 2, 1, 0, 1, 0, 0, 0)])
def test_bad_thread(payload: bytes) -> None:
    assert _with(Section.THREAD, payload) == (CaseStatus.BAD_FIELD, 4, 32)


@pytest.mark.parametrize("size, status", [(0, CaseStatus.BAD_FIELD), (12, CaseStatus.BAD_FIELD),
                                          (vm.MAX_STACK + 8, CaseStatus.LIMIT)])
def test_bad_stack_size(size: int, status: CaseStatus) -> None:
    assert _with(Section.STACK, bytes(size)) == (status, 5, 0)


@pytest.mark.parametrize("payload", [struct.pack("<IB3x", 0, 3),
                                     struct.pack("<IBBBB", 0, 0, 0, 1, 0)])
def test_bad_walk(payload: bytes) -> None:
    assert _with(Section.WALK, payload) == (CaseStatus.BAD_FIELD, 7, 8)


def test_short_walk_fails_at_the_missing_reserved_byte() -> None:
    assert _with(Section.WALK, struct.pack("<IBB", 0, 0, 0)) == (CaseStatus.SECTION_LENGTH, 7, 6)


def _truth(count: int, frame: bytes = b"") -> tuple[CaseStatus, int, int]:
    secs = [*sections(), (Section.TRUTH, 0, struct.pack("<iiI", 1, 0, count) + frame)]
    status, section, offset = status_of(enc.assemble(secs))
    return status, section, offset - payload_offset(secs, 7)


def test_truth_count_above_limit() -> None:
    assert _truth(65537) == (CaseStatus.LIMIT, 8, 12)


@pytest.mark.parametrize("ftype, reserved, method", [(0, 0, 0), (5, 0, 0), (1, 1, 0),
                                                     (1, 0, 3)])
def test_bad_truth_frame(ftype: int, reserved: int, method: int) -> None:
    frame = struct.pack("<BbHiIQQQ", ftype, 0, reserved, 0, method, 0, 0, 0)
    assert _truth(1, frame) == (CaseStatus.BAD_FIELD, 8, 48)


def test_truth_frame_without_method_decodes_to_null_handle() -> None:
    frame = struct.pack("<BbHiIQQQ", 4, -1, 0, -1, vm.NO_METHOD, 1, 2, 3)
    secs = [*sections(), (Section.TRUTH, 0, struct.pack("<iiI", 1, 0, 1) + frame)]
    truth = dec.decode(enc.assemble(secs)).truth
    assert truth == C.Truth(1, 0, (C.Frame(4, -1, -1, 0, 1, 2, 3),))


def test_decode_error_carries_status_section_offset() -> None:
    with pytest.raises(CaseDecodeError) as info:
        dec.decode(enc.assemble(replace(sections(), Section.CONTEXT, bytes(25))), "f.bin")
    assert (info.value.status, info.value.section) == (CaseStatus.SECTION_LENGTH, 6)
    assert "section 6 (CONTEXT)" in str(info.value)
