"""The decoder of the case format (docs/case-format.md §2, version 1), bytes to a Case.

Format version 1 as docs/case-format.md §2 defines it (normative). The decoder is an
independent second implementation of the C one (native/src/case/case_decode.c): for any bytes both
return the same status, and on an error the same section and byte offset, so a disagreement
is a bug in one of them. Errors raise `CaseDecodeError` (walkfuzz.targets.minivm.case.status, with
the sections and statuses), a `walkfuzz.core.errors.CaseFormatError` whose message names the source
(a file) and the problem.

Where the first failing rule is found (the offset reported):
  - header: truncated at 0, bad magic at 0, version and header flags at 8 (after the header);
  - a section header that does not fit: at the field that runs out, reported as section 0;
  - payload truncated, section flags, order, unknown type: just after the section header;
  - inside a payload: a read past its end at the start of that read (a blob, a descriptor,
    its scopes and a truth frame are each read as one record); a bad value just after
    the fields it is checked with (a blob's fixed fields, a descriptor's three fields, all
    its scopes, a class or method record, the THREAD or WALK payload, a truth frame); a bad
    stack length at the start of the STACK payload (with RUNS: after its image size; a bad
    chunk after its fields; chunks that do not fill the image at the payload's end); bytes
    left over at the end of the content;
  - a missing section: at the end of the input, reported as that section's type.

"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import ClassVar

from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.expected import Expected, decode_expected
from walkfuzz.targets.minivm.case.format import (
    HEADER_SIZE,
    MAGIC,
    MAX_CODE_PATCHES,
    SECTION_OPTIONAL,
    TRUTH_FRAME_SIZE,
    VERSION,
    Blob,
    Case,
    ClassDef,
    CodePatch,
    Context,
    Frame,
    MethodDef,
    PcDesc,
    Scope,
    Thread,
    Truth,
    Walk,
)
from walkfuzz.targets.minivm.case.queue_program import QueueOp, decode_program
from walkfuzz.targets.minivm.case.stack_runs import (
    SECTION_RUNS,
    StackRun,
    check_image_size,
    decode_runs,
)
from walkfuzz.targets.minivm.case.status import CaseDecodeError, CaseStatus, Section

REQUIRED_SECTIONS = tuple(range(Section.CLASSES, Section.WALK + 1))
_BLOB_KINDS = frozenset(int(k) for k in vm.BlobKind)
_THREAD_STATES = frozenset(int(s) for s in vm.ThreadState)
_WALK_ENTRIES = frozenset(int(e) for e in vm.WalkEntry)
_FRAME_TYPES = frozenset(int(t) for t in vm.FrameType)
_THREAD_FLAG_BITS = int(vm.ThreadFlag.SUSPENDED | vm.ThreadFlag.CURRENT)

# ---- decoding ------------------------------------------------------------------------------


class _Reader:
    """Little-endian reads over `data[pos:end]`; a read past `end` is `short_status`."""

    def __init__(self, data: bytes, source: str) -> None:
        self.data = data
        self.source = source
        self.pos = 0
        self.end = len(data)
        self.section = 0
        self.short_status = CaseStatus.TRUNCATED

    def fail(self, status: CaseStatus, what: str) -> CaseDecodeError:
        return CaseDecodeError(self.source, status, self.section, self.pos, what)

    def take(self, n: int, what: str) -> bytes:
        left = self.end - self.pos
        if left < n:
            raise self.fail(self.short_status, f"{what} needs {n} bytes, {left} left")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def uint(self, n: int, what: str) -> int:
        return int.from_bytes(self.take(n, what), "little")

    def u8(self, what: str) -> int:
        return self.uint(1, what)

    def u16(self, what: str) -> int:
        return self.uint(2, what)

    def u32(self, what: str) -> int:
        return self.uint(4, what)

    def s32(self, what: str) -> int:
        return int.from_bytes(self.take(4, what), "little", signed=True)

    def u64(self, what: str) -> int:
        return self.uint(8, what)

    def string(self, what: str) -> bytes:
        length = self.u16(f"{what} length")
        if length > vm.MAX_NAME:
            raise self.fail(CaseStatus.LIMIT, f"{what} length {length} > {vm.MAX_NAME}")
        if self.end - self.pos < length:
            raise self.fail(self.short_status,
                            f"{what} needs {length} bytes, {self.end - self.pos} left")
        text = self.data[self.pos:self.pos + length]
        if b"\0" in text:
            raise self.fail(CaseStatus.BAD_STRING, f"{what} has a NUL byte at index "
                                                   f"{text.index(0)}")
        self.pos += length
        return text


class _Decoder:
    """One decode: the sections seen so far and the string pool they used."""

    def __init__(self, data: bytes, source: str) -> None:
        self.r = _Reader(data, source)
        self.classes: tuple[ClassDef, ...] = ()
        self.methods: tuple[MethodDef, ...] = ()
        self.blobs: tuple[Blob, ...] = ()
        self.desc_total = 0
        self.pool_used = 0
        self.thread: Thread | None = None
        self.stack: bytes | None = None
        self.stack_run: StackRun | None = None
        self.flags = 0  # of the section being decoded
        self.context: Context | None = None
        self.walk: Walk | None = None
        self.truth: Truth | None = None
        self.queue: tuple[QueueOp, ...] | None = None
        self.code: tuple[CodePatch, ...] = ()
        self.expected: Expected | None = None

    def bad(self, what: str) -> CaseDecodeError:
        return self.r.fail(CaseStatus.BAD_FIELD, what)

    def pool(self, *strings: bytes) -> bool:
        """Place strings in the 1 MiB pool (each with a NUL); False once one does not fit."""
        fits = True
        for s in strings:
            if self.pool_used + len(s) + 1 > vm.STRING_POOL:
                fits = False
            else:
                self.pool_used += len(s) + 1
        return fits

    # -- header and section scan --

    def header(self) -> None:
        r = self.r
        if len(r.data) < HEADER_SIZE:
            raise r.fail(CaseStatus.TRUNCATED,
                         f"{len(r.data)} bytes, a header needs {HEADER_SIZE}")
        magic = r.take(4, "magic")
        if magic != MAGIC:
            r.pos = 0
            raise r.fail(CaseStatus.MAGIC, f"magic {magic.hex()} is not {MAGIC.hex()} (WFCS)")
        version = r.u16("version")
        flags = r.u16("header flags")
        if version != VERSION:
            raise r.fail(CaseStatus.VERSION, f"version {version}, this decoder reads {VERSION}")
        if flags != 0:
            raise self.bad(f"header flags {flags:#x} (must be 0)")

    def sections(self) -> set[int]:
        r = self.r
        seen: set[int] = set()
        last = 0
        while r.pos < r.end:
            r.section = 0
            stype = r.u16("section type")
            flags = r.u16("section flags")
            length = r.u32("section length")
            r.section = stype
            if r.end - r.pos < length:
                raise r.fail(CaseStatus.TRUNCATED,
                             f"payload length {length}, {r.end - r.pos} bytes left")
            allowed = SECTION_OPTIONAL | (SECTION_RUNS if stype == Section.STACK else 0)
            if flags & ~allowed:
                raise self.bad(f"section flags {flags:#x}")
            self.flags = flags
            if stype <= last:
                raise r.fail(CaseStatus.SECTION_ORDER, f"type {stype} after type {last}")
            last = stype
            decoder = self.DECODERS.get(stype)
            if decoder is None:
                if not flags & SECTION_OPTIONAL:
                    raise r.fail(CaseStatus.UNKNOWN_SECTION,
                                 f"unknown type {stype} without the OPTIONAL flag")
                r.pos += length
                continue
            self.payload(decoder, length)
            seen.add(stype)
        return seen

    def payload(self, decoder: Callable[[_Decoder], None], length: int) -> None:
        r = self.r
        input_end = r.end
        r.end = r.pos + length
        r.short_status = CaseStatus.SECTION_LENGTH
        decoder(self)
        if r.pos != r.end:
            raise r.fail(CaseStatus.SECTION_LENGTH, f"{r.end - r.pos} bytes left over")
        r.end = input_end
        r.short_status = CaseStatus.TRUNCATED

    # -- sections --

    def decode_classes(self) -> None:
        r = self.r
        count = r.u32("class count")
        if count > vm.MAX_CLASSES:
            raise r.fail(CaseStatus.LIMIT, f"class count {count} > {vm.MAX_CLASSES}")
        classes = []
        for i in range(count):
            modifiers = r.u32("class modifiers")
            name = r.string("class name")
            generic = r.string("class generic name")
            if not self.pool(name, generic):
                raise r.fail(CaseStatus.LIMIT, f"class {i}: string bytes above 1 MiB in total")
            classes.append(ClassDef(modifiers, name, generic))
        self.classes = tuple(classes)

    def decode_methods(self) -> None:
        r = self.r
        count = r.u32("method count")
        if count > vm.MAX_METHODS:
            raise r.fail(CaseStatus.LIMIT, f"method count {count} > {vm.MAX_METHODS}")
        if count == 0:
            raise self.bad("method count 0 (at least one method)")
        methods = []
        for i in range(count):
            class_index = r.u32("method class index")
            modifiers = r.u32("method modifiers")
            code_size = r.u16("method code size")
            name = r.string("method name")
            signature = r.string("method signature")
            generic = r.string("method generic signature")
            if class_index >= len(self.classes):
                raise self.bad(f"method {i}: class index {class_index} >= "
                               f"{len(self.classes)} classes")
            if code_size == 0:
                raise self.bad(f"method {i}: code size 0")
            if not self.pool(name, signature, generic):
                raise r.fail(CaseStatus.LIMIT, f"method {i}: string bytes above 1 MiB in total")
            methods.append(MethodDef(class_index, modifiers, code_size, name, signature, generic))
        self.methods = tuple(methods)

    def decode_code(self) -> None:
        r = self.r
        count = r.u32("blob count")
        if count > vm.MAX_BLOBS:
            raise r.fail(CaseStatus.LIMIT, f"blob count {count} > {vm.MAX_BLOBS}")
        blobs: list[Blob] = []
        prev_end = 0
        for i in range(count):
            blob = self.blob(i, prev_end)
            blobs.append(blob)
            prev_end = blob.start + blob.size
        self.blobs = tuple(blobs)

    def blob(self, i: int, prev_end: int) -> Blob:
        kind, level, reserved, start, size, frame_size, complete, method, desc_count = (
            struct.unpack("<BBHIIIIII", self.r.take(28, "blob")))
        self.check_blob(i, kind, level, reserved, start, size, frame_size, complete, method,
                        desc_count, prev_end)
        descs: list[PcDesc] = []
        for _ in range(desc_count):
            descs.append(self.desc(i, size, descs[-1].pc_end if descs else 0))
        return Blob(kind, level, start, size, frame_size, complete, method, tuple(descs))

    def check_blob(self, i: int, kind: int, level: int, reserved: int, start: int, size: int,
                   frame_size: int, complete: int, method: int, desc_count: int,
                   prev_end: int) -> None:
        """The fixed fields of blob i, in the order of the format's table."""
        if kind not in _BLOB_KINDS:
            raise self.bad(f"blob {i}: kind {kind}")
        fixed = kind in vm.FIXED_FRAME_BLOBS
        if (not 1 <= level <= 4) if kind == vm.BlobKind.COMPILED else level != 0:
            raise self.bad(f"blob {i}: comp level {level} for kind {vm.BlobKind(kind).name}")
        if reserved != 0:
            raise self.bad(f"blob {i}: reserved {reserved}")
        if start < prev_end:
            raise self.bad(f"blob {i}: start {start:#x} before the previous end {prev_end:#x}")
        if size == 0 or start + size > vm.CODE_HEAP_SIZE:
            raise self.bad(f"blob {i}: size {size:#x} at {start:#x} leaves the code heap")
        if (frame_size % 8 != 0 or not vm.MIN_FRAME_SIZE <= frame_size <= vm.MAX_FRAME_SIZE
                if fixed else frame_size != 0):
            raise self.bad(f"blob {i}: frame size {frame_size}")
        if complete > size if kind != vm.BlobKind.ENTRY else complete != 0:
            raise self.bad(f"blob {i}: frame complete {complete}")
        if (method >= len(self.methods) if kind in vm.METHOD_BLOBS
                else method != vm.NO_METHOD):
            raise self.bad(f"blob {i}: method index {method:#x}")
        if kind != vm.BlobKind.COMPILED and desc_count != 0:
            raise self.bad(f"blob {i}: {desc_count} pc descriptors on a non-compiled blob")
        if self.desc_total + desc_count > vm.MAX_PCDESCS:
            raise self.r.fail(CaseStatus.LIMIT,
                              f"blob {i}: pc descriptors above {vm.MAX_PCDESCS} in total")

    def desc(self, blob: int, size: int, prev_end: int) -> PcDesc:
        r = self.r
        begin, end, scope_count = struct.unpack("<IIB", r.take(9, "pc descriptor"))
        if not (begin < end <= size and begin >= prev_end):
            raise self.bad(f"blob {blob}: pc descriptor [{begin:#x}, {end:#x}) out of order "
                           f"or outside the blob")
        if scope_count == 0:
            raise self.bad(f"blob {blob}: pc descriptor with 0 scopes")
        if scope_count > vm.MAX_SCOPES:
            raise r.fail(CaseStatus.LIMIT, f"blob {blob}: {scope_count} scopes > {vm.MAX_SCOPES}")
        # the scopes are one record: a bad scope is reported after all of them
        record = r.take(6 * scope_count, "pc descriptor scopes")
        self.desc_total += 1
        scopes = []
        for method, bci in struct.iter_unpack("<IH", record):
            if method >= len(self.methods):
                raise self.bad(f"blob {blob}: scope method {method} >= {len(self.methods)}")
            if bci >= self.methods[method].code_size:
                raise self.bad(f"blob {blob}: scope bci {bci} >= code size "
                               f"{self.methods[method].code_size}")
            scopes.append(Scope(method, bci))
        return PcDesc(begin, end, tuple(scopes))

    def decode_thread(self) -> None:
        r = self.r
        state = r.u8("thread state")
        flags = r.u8("thread flags")
        reserved16 = r.u16("thread reserved")
        reserved32 = r.u32("thread reserved")
        anchor = (r.u64("anchor sp"), r.u64("anchor fp"), r.u64("anchor pc"))
        if state not in _THREAD_STATES:
            raise self.bad(f"thread state {state}")
        if flags & ~_THREAD_FLAG_BITS:
            raise self.bad(f"thread flags {flags:#x}")
        if reserved16 or reserved32:
            raise self.bad("thread reserved bytes not 0")
        self.thread = Thread(state, flags, *anchor)

    def decode_stack(self) -> None:
        r = self.r
        if self.flags & SECTION_RUNS:
            self.stack, self.stack_run = decode_runs(r)
            return
        size = r.end - r.pos
        check_image_size(r, size)
        self.stack = r.take(size, "stack image")

    def decode_context(self) -> None:
        r = self.r
        self.context = Context(r.u64("context pc"), r.u64("context sp"), r.u64("context fp"))

    def decode_walk(self) -> None:
        r = self.r
        options = r.u32("walk options")
        entry = r.u8("walk entry")
        reserved = [r.u8("walk reserved") for _ in range(3)]
        if entry not in _WALK_ENTRIES:
            raise self.bad(f"walk entry {entry}")
        if any(reserved):
            raise self.bad("walk reserved bytes not 0")
        self.walk = Walk(options, entry)

    def decode_truth(self) -> None:
        r = self.r
        run_result = r.s32("truth run result")
        end_code = r.s32("truth end code")
        count = r.u32("truth count")
        if count > vm.MAX_TRUTH:
            raise r.fail(CaseStatus.LIMIT, f"truth count {count} > {vm.MAX_TRUTH}")
        self.truth = Truth(run_result, end_code, tuple(self.truth_frame(i) for i in range(count)))

    def truth_frame(self, i: int) -> Frame:
        ftype, level, reserved, bci, method, pc, sp, fp = struct.unpack(
            "<BbHiIQQQ", self.r.take(TRUTH_FRAME_SIZE, "truth frame"))
        if (ftype not in _FRAME_TYPES or reserved != 0
                or (method != vm.NO_METHOD and method >= len(self.methods))):
            raise self.bad(f"truth frame {i}: type {ftype}, reserved {reserved}, "
                           f"method {method:#x}")
        handle = 0 if method == vm.NO_METHOD else vm.method_handle(method)
        return Frame(ftype, level, bci, handle, pc, sp, fp)

    def decode_queue(self) -> None:
        # POKE addresses are checked against section 5's stack (none seen: an empty one)
        lo, hi = (vm.STACK_TOP - len(self.stack), vm.STACK_TOP) if self.stack else (0, 0)
        self.queue = decode_program(self.r, lo, hi)

    def decode_code_bytes(self) -> None:
        r = self.r
        count = r.u32("code patch count")
        if count > MAX_CODE_PATCHES:
            raise r.fail(CaseStatus.LIMIT, f"code patch count {count} > {MAX_CODE_PATCHES}")
        patches: list[CodePatch] = []
        prev_end = 0
        for i in range(count):
            offset, length = struct.unpack("<II", r.take(8, "code patch"))
            if length == 0 or offset < prev_end or offset + length > vm.CODE_HEAP_SIZE:
                raise self.bad(f"code patch {i}: [{offset:#x}, +{length:#x}) empty, out of "
                               f"order or outside the heap")
            patches.append(CodePatch(offset, r.take(length, "code patch bytes")))
            prev_end = offset + length
        self.code = tuple(patches)

    def decode_expected(self) -> None:
        self.expected = decode_expected(self.r, tuple(m.code_size for m in self.methods),
                                        len(self.queue or ()))

    DECODERS: ClassVar[dict[int, Callable[[_Decoder], None]]] = {
        Section.CLASSES: decode_classes,
        Section.METHODS: decode_methods,
        Section.CODE: decode_code,
        Section.THREAD: decode_thread,
        Section.STACK: decode_stack,
        Section.CONTEXT: decode_context,
        Section.WALK: decode_walk,
        Section.TRUTH: decode_truth,
        Section.QUEUE: decode_queue,
        Section.CODE_BYTES: decode_code_bytes,
        Section.EXPECTED: decode_expected,
    }

    def case(self) -> Case:
        self.header()
        seen = self.sections()
        for stype in REQUIRED_SECTIONS:
            if stype not in seen:
                self.r.section = stype
                raise self.r.fail(CaseStatus.MISSING_SECTION,
                                  f"required section {Section(stype).name} missing")
        assert self.thread and self.stack and self.context and self.walk
        return Case(self.classes, self.methods, self.blobs, self.thread, self.stack,
                    self.context, self.walk, self.truth, self.queue, self.code, self.expected,
                    self.stack_run)


def decode(data: bytes, source: str = "<bytes>") -> Case:
    """The case in `data`; raises CaseDecodeError (naming `source`) at the first bad rule."""
    return _Decoder(bytes(data), source).case()


def decode_status(data: bytes) -> tuple[CaseStatus, int, int]:
    """(status, section, offset) of decoding `data`: (OK, 0, 0) when it decodes."""
    try:
        decode(data)
    except CaseDecodeError as err:
        return err.status, err.section, err.offset
    return CaseStatus.OK, 0, 0
