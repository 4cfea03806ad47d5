"""The encoder of the case format (docs/case-format.md §2, version 1): a plain serializer.

Any Case encodes (values only need to fit their field), and whether the result is valid is
the decoder's call (walkfuzz.targets.minivm.case.decode). That is how tests build invalid cases."""

from __future__ import annotations

import struct

from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.expected import encode_expected
from walkfuzz.targets.minivm.case.format import (
    HEADER_SIZE,
    MAGIC,
    SECTION_HEADER_SIZE,
    SECTION_OPTIONAL,
    VERSION,
    Blob,
    Case,
    ClassDef,
    CodePatch,
    MethodDef,
    Thread,
    Truth,
)
from walkfuzz.targets.minivm.case.queue_program import encode_program
from walkfuzz.targets.minivm.case.stack_runs import SECTION_RUNS, encode_runs, holds
from walkfuzz.targets.minivm.case.status import Section

# ---- encoding ------------------------------------------------------------------------------


def _str(s: bytes) -> bytes:
    return struct.pack("<H", len(s)) + s


def _section(stype: int, payload: bytes, flags: int = 0) -> bytes:
    return struct.pack("<HHI", stype, flags, len(payload)) + payload


def _method_index(handle: int) -> int:
    if handle == 0:
        return vm.NO_METHOD
    offset = handle - vm.METHODS
    if offset < 0 or offset % vm.METHOD_STRIDE:
        raise ValueError(f"truth frame method {handle:#x} is no method handle")
    return offset // vm.METHOD_STRIDE


def encode_classes(classes: tuple[ClassDef, ...]) -> bytes:
    out = [struct.pack("<I", len(classes))]
    for k in classes:
        out += [struct.pack("<I", k.modifiers), _str(k.name), _str(k.generic_name)]
    return b"".join(out)


def encode_methods(methods: tuple[MethodDef, ...]) -> bytes:
    out = [struct.pack("<I", len(methods))]
    for m in methods:
        out += [struct.pack("<IIH", m.class_index, m.modifiers, m.code_size), _str(m.name),
                _str(m.signature), _str(m.generic_signature)]
    return b"".join(out)


def encode_code(blobs: tuple[Blob, ...]) -> bytes:
    out = [struct.pack("<I", len(blobs))]
    for b in blobs:
        out.append(struct.pack("<BBHIIIIII", b.kind, b.comp_level, 0, b.start, b.size,
                               b.frame_size, b.frame_complete, b.method_index, len(b.descs)))
        for d in b.descs:
            out.append(struct.pack("<IIB", d.pc_begin, d.pc_end, len(d.scopes)))
            out += [struct.pack("<IH", s.method_index, s.bci) for s in d.scopes]
    return b"".join(out)


def encode_thread(t: Thread) -> bytes:
    return struct.pack("<BBHIQQQ", t.state, t.flags, 0, 0, t.anchor_sp, t.anchor_fp, t.anchor_pc)


def encode_truth(t: Truth) -> bytes:
    out = [struct.pack("<iiI", t.run_result, t.end_code, len(t.frames))]
    for f in t.frames:
        out.append(struct.pack("<BbHiIQQQ", f.type, f.comp_level, 0, f.bci,
                               _method_index(f.method), f.pc, f.sp, f.fp))
    return b"".join(out)


def encode_code_bytes(patches: tuple[CodePatch, ...]) -> bytes:
    out = [struct.pack("<I", len(patches))]
    for p in patches:
        out += [struct.pack("<II", p.offset, len(p.data)), p.data]
    return b"".join(out)


def encode_sections(case: Case) -> list[tuple[int, bytes]]:
    """(type, payload) of every section `encode` writes, in order."""
    sections = [
        (Section.CLASSES, encode_classes(case.classes)),
        (Section.METHODS, encode_methods(case.methods)),
        (Section.CODE, encode_code(case.blobs)),
        (Section.THREAD, encode_thread(case.thread)),
        (Section.STACK, encode_runs(case.stack, case.stack_run)
         if holds(case.stack, case.stack_run) and case.stack_run else case.stack),
        (Section.CONTEXT, struct.pack("<QQQ", case.context.pc, case.context.sp, case.context.fp)),
        (Section.WALK, struct.pack("<IB3x", case.walk.options, case.walk.entry)),
    ]
    if case.truth is not None:
        sections.append((Section.TRUTH, encode_truth(case.truth)))
    if case.queue is not None:
        sections.append((Section.QUEUE, encode_program(case.queue)))
    if case.code:
        sections.append((Section.CODE_BYTES, encode_code_bytes(case.code)))
    if case.expected is not None:
        sections.append((Section.EXPECTED, encode_expected(case.expected)))
    return [(int(t), p) for t, p in sections]


# Sections encode() writes with the OPTIONAL flag (a decoder that does not know them skips them).
OPTIONAL_SECTIONS = frozenset({int(Section.EXPECTED)})


def encode(case: Case) -> bytes:
    """The bytes of `case` (format version 1); deterministic."""
    header = MAGIC + struct.pack("<HH", VERSION, 0)
    return header + b"".join(_section(t, p, _flags(t, case)) for t, p in encode_sections(case))


def _flags(stype: int, case: Case) -> int:
    if stype in OPTIONAL_SECTIONS:
        return SECTION_OPTIONAL
    if stype == Section.STACK and holds(case.stack, case.stack_run):
        return SECTION_RUNS  # the payload is chunks, a run repeated
    return 0


def insert_section(data: bytes, section: bytes) -> bytes:
    """`data` (a case's bytes) with `section` (a whole section: header and payload) put
    before the first section of a greater type, so the types stay increasing."""
    stype = struct.unpack_from("<H", section)[0]
    offset = HEADER_SIZE
    while offset + SECTION_HEADER_SIZE <= len(data):
        other, _, length = struct.unpack_from("<HHI", data, offset)
        if other > stype:
            break
        offset += SECTION_HEADER_SIZE + length
    return data[:offset] + section + data[offset:]


def assemble(sections: list[tuple[int, int, bytes]], version: int = VERSION,
             header_flags: int = 0, magic: bytes = MAGIC) -> bytes:
    """Bytes from raw (type, flags, payload) sections, in the order given (for tests)."""
    header = magic + struct.pack("<HH", version, header_flags)
    return header + b"".join(_section(t, p, f) for t, f, p in sections)
