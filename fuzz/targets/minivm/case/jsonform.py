"""A case as readable JSON, and back: what `walkfuzz replay` prints and what a person edits.

Addresses and words are hex strings, kinds and states are names, methods carry their names,
and the stack is a list of annotated words (what each one points at: code, a method, a
bytecode pointer, the stack itself), with runs of zero words folded into one entry. Every
field the binary format has is kept, so `case_from_json(case_to_json(c)) == c`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from walkfuzz.core.errors import CaseFormatError
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.expected import MODES, WINDOWS, Expected, ExpectedFrame, Source
from walkfuzz.targets.minivm.case.format import (
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
from walkfuzz.targets.minivm.case.queue_program import Opcode, QueueOp

JSON_FORMAT = "walkfuzz-case/1"
Json = dict[str, Any]


def hex_(value: int) -> str:
    return f"{value:#x}"


def _name(raw: bytes) -> str | Json:
    """A name as text when it is UTF-8, else {"hex": ...}."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": raw.hex()}


def _enum_name(enum: Any, value: int) -> str | int:
    try:
        return str(enum(value).name)
    except ValueError:
        return value


def _flag_names(enum: Any, value: int) -> list[str]:
    names = [str(f.name) for f in enum if value & f.value]
    rest = value & ~sum(f.value for f in enum)
    return names + ([hex_(rest)] if rest else [])


# ---- describing addresses ------------------------------------------------------------------


class Describer:
    """Says what an address or word of a case is, in a few words."""

    def __init__(self, case: Case) -> None:
        self.case = case

    def method(self, index: int) -> str:
        if not 0 <= index < len(self.case.methods):
            return f"method #{index} (none)"
        m = self.case.methods[index]
        klass = self.case.classes[m.class_index] if m.class_index < len(self.case.classes) else None
        owner = _name(klass.name) if klass is not None else "?"
        return f"{owner}.{_name(m.name)}"

    def handle(self, handle: int) -> str | None:
        index = vm.method_index_of(handle, len(self.case.methods))
        return None if index is None else f"method {index} {self.method(index)}"

    def word(self, value: int) -> str:
        """What a word would mean if a walker followed it."""
        if value == 0:
            return "zero"
        if vm.NATIVE_TEXT <= value < vm.NATIVE_TEXT + vm.NATIVE_TEXT_SIZE:
            return f"native text +{value - vm.NATIVE_TEXT:#x}"
        if vm.CODE_HEAP <= value < vm.CODE_HEAP + vm.CODE_HEAP_SIZE:
            return self.code(value)
        if self.case.stack_lo <= value <= self.case.stack_hi:
            return f"stack hi-{self.case.stack_hi - value:#x}"
        described = self.handle(value)
        if described is not None:
            return f"handle of {described}"
        offset = value - vm.BYTECODE
        if 0 <= offset < vm.BYTECODE_STRIDE * len(self.case.methods):
            index, bci = divmod(offset, vm.BYTECODE_STRIDE)
            return f"bcp of method {index} {self.method(index)} bci {bci}"
        return "data"

    def code(self, pc: int) -> str:
        for i, blob in enumerate(self.case.blobs):
            if blob.address <= pc < blob.end:
                what = _enum_name(vm.BlobKind, blob.kind)
                if blob.method_index != vm.NO_METHOD:
                    what = f"{what} {self.method(blob.method_index)}"
                return f"blob {i} {what} +{pc - blob.address:#x}"
        return "code heap, in no blob"


# ---- queue program (section 9) -------------------------------------------------------------

# the QueueOp fields each opcode's operands fill (docs/case-format.md §7.1); the rest stay 0
QUEUE_OPERANDS: dict[int, tuple[str, ...]] = {
    Opcode.REGISTER: ("n", "options"),
    Opcode.DEREGISTER: ("queue",),
    Opcode.ENQUEUE: ("queue", "pc", "sp", "fp", "arg"),
    Opcode.SET_ARG: ("queue", "n", "arg"),
    Opcode.COMPRESS: ("queue", "pc", "sp", "fp"),
    Opcode.RESIZE: ("queue", "n"),
    Opcode.SIZE_INFO: ("queue",),
    Opcode.HANDLER: ("queue", "which", "mode", "options"),
    Opcode.SAFEPOINT: ("pc", "sp", "fp", "inner_at", "inner_count"),
    Opcode.THREAD_EXIT: (),
    Opcode.POKE: ("pc", "arg"),   # address, value
    Opcode.THREAD: ("which", "mode", "sp", "fp", "pc"),   # state, flags, the anchor
    Opcode.FILL: (),
    Opcode.ALIAS: ("queue", "n"),                         # base registration, offset
    Opcode.MISUSE: ("which", "queue"),                    # kind, queue
}
_HEX_OPERANDS = frozenset({"pc", "sp", "fp", "arg"})


def queue_op_to_json(index: int, op: QueueOp, describe: Describer) -> Json:
    out: Json = {"index": index, "op": _enum_name(Opcode, op.code)}
    for name in QUEUE_OPERANDS.get(op.code, ()):
        value = getattr(op, name)
        out[name] = hex_(value) if name in _HEX_OPERANDS else value
    if op.code in (Opcode.ENQUEUE, Opcode.COMPRESS, Opcode.SAFEPOINT):
        out["pc_is"] = describe.word(op.pc)
    return out


def _queue_op_from_json(j: _Json, o: Any, path: str) -> QueueOp:
    code = j.enum(o, "op", path, Opcode)
    if code not in QUEUE_OPERANDS:
        raise j.fail(f"{path}.op", f"{code} is not one of {list(Opcode.__members__)}")
    return QueueOp(code, **{name: j.int_(o, name, path) for name in QUEUE_OPERANDS[code]})


# ---- case -> JSON --------------------------------------------------------------------------


def frame_to_json(frame: Frame, describe: Describer) -> Json:
    return {
        "type": _enum_name(vm.FrameType, frame.type),
        "comp_level": frame.comp_level,
        "bci": frame.bci,
        "method": hex_(frame.method) if frame.method else None,
        "method_name": describe.handle(frame.method) if frame.method else None,
        "pc": hex_(frame.pc),
        "pc_is": describe.word(frame.pc),
        "sp": hex_(frame.sp),
        "fp": hex_(frame.fp),
    }


def _stack_to_json(case: Case, describe: Describer) -> list[Json]:
    marks: dict[int, list[str]] = {}
    for what, addr in (("context sp", case.context.sp), ("context fp", case.context.fp),
                       ("anchor sp", case.thread.anchor_sp),
                       ("anchor fp", case.thread.anchor_fp)):
        marks.setdefault(addr, []).append(what)
    words: list[Json] = []
    for offset in range(0, len(case.stack), 8):
        addr = case.stack_lo + offset
        value = int.from_bytes(case.stack[offset:offset + 8], "little")
        if value == 0 and addr not in marks and words and words[-1].get("zeros"):
            words[-1]["zeros"] += 1
            continue
        entry: Json = {"addr": hex_(addr), "value": hex_(value)}
        if value == 0 and addr not in marks:
            entry["zeros"] = 1
        else:
            entry["is"] = describe.word(value)
        if addr in marks:
            entry["marks"] = marks[addr]
        words.append(entry)
    return words


def case_to_json(case: Case) -> Json:
    describe = Describer(case)
    return {
        "format": JSON_FORMAT,
        "classes": [
            {"index": i, "handle": hex_(vm.class_handle(i)), "name": _name(k.name),
             "generic_name": _name(k.generic_name), "modifiers": hex_(k.modifiers)}
            for i, k in enumerate(case.classes)],
        "methods": [
            {"index": i, "handle": hex_(vm.method_handle(i)), "class": m.class_index,
             "name": _name(m.name), "signature": _name(m.signature),
             "generic_signature": _name(m.generic_signature), "modifiers": hex_(m.modifiers),
             "code_size": m.code_size, "bytecode": hex_(vm.bytecode_base(i))}
            for i, m in enumerate(case.methods)],
        "blobs": [_blob_to_json(i, b, describe) for i, b in enumerate(case.blobs)],
        "thread": {
            "state": _enum_name(vm.ThreadState, case.thread.state),
            "flags": _flag_names(vm.ThreadFlag, case.thread.flags),
            "anchor": {"sp": hex_(case.thread.anchor_sp), "fp": hex_(case.thread.anchor_fp),
                       "pc": hex_(case.thread.anchor_pc)},
            "stack_lo": hex_(case.stack_lo), "stack_hi": hex_(case.stack_hi),
        },
        "context": {"pc": hex_(case.context.pc), "pc_is": describe.word(case.context.pc),
                    "sp": hex_(case.context.sp), "fp": hex_(case.context.fp)},
        "walk": {"entry": _enum_name(vm.WalkEntry, case.walk.entry),
                 "options": _flag_names(vm.Option, case.walk.options)},
        "stack": _stack_to_json(case, describe),
        "truth": None if case.truth is None else {
            "run_result": case.truth.run_result, "end_code": case.truth.end_code,
            "frames": [frame_to_json(f, describe) for f in case.truth.frames]},
        "queue": None if case.queue is None else [
            queue_op_to_json(i, op, describe) for i, op in enumerate(case.queue)],
        "code": [{"address": hex_(vm.CODE_HEAP + p.offset), "at": describe.code(
            vm.CODE_HEAP + p.offset), "bytes": p.data.hex()} for p in case.code],
        "expected": None if case.expected is None else _expected_to_json(case.expected, describe),
    }


def _expected_to_json(e: Expected, describe: Describer) -> Json:
    return {"mode": e.mode, "mode_is": MODES.get(e.mode), "source": e.source,
            "source_is": Source(e.source).name.lower(), "window": e.window,
            "window_is": WINDOWS[e.window], "end_code": e.end_code,
            "frames": [{"method": f.method, "method_name": describe.method(f.method),
                        "bci": f.bci, "type": _enum_name(vm.FrameType, f.type),
                        "comp_level": f.level} for f in e.frames]}


def _expected_from_json(j: _Json, e: Any) -> Expected:
    frames = tuple(
        ExpectedFrame(j.int_(f, "method", p), j.int_(f, "bci", p),
                      j.enum(f, "type", p, vm.FrameType), j.int_(f, "comp_level", p))
        for i, f in enumerate(j.list_(e, "frames", "expected")) for p in [f"expected.frames[{i}]"])
    return Expected(j.int_(e, "mode", "expected"), j.int_(e, "source", "expected"),
                    j.int_(e, "window", "expected"), j.int_(e, "end_code", "expected"), frames)


def _blob_to_json(index: int, blob: Blob, describe: Describer) -> Json:
    return {
        "index": index,
        "kind": _enum_name(vm.BlobKind, blob.kind),
        "comp_level": blob.comp_level,
        "start": hex_(blob.address),
        "end": hex_(blob.end),
        "frame_size": blob.frame_size,
        "frame_complete": blob.frame_complete,
        "method": None if blob.method_index == vm.NO_METHOD else blob.method_index,
        "method_name": (None if blob.method_index == vm.NO_METHOD
                        else describe.method(blob.method_index)),
        "descs": [
            {"pc_begin": hex_(blob.address + d.pc_begin), "pc_end": hex_(blob.address + d.pc_end),
             "scopes": [{"method": s.method_index, "method_name": describe.method(s.method_index),
                         "bci": s.bci} for s in d.scopes]}
            for d in blob.descs],
    }


# ---- JSON -> case --------------------------------------------------------------------------


class _Json:
    """Typed reads from a JSON document; errors name the path of the bad value."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, problem: str) -> CaseFormatError:
        return CaseFormatError(self.source, f"JSON {path}: {problem}")

    def get(self, obj: Mapping[str, Any], key: str, path: str) -> Any:
        if not isinstance(obj, Mapping) or key not in obj:
            raise self.fail(f"{path}.{key}", "missing")
        return obj[key]

    def int_(self, obj: Mapping[str, Any], key: str, path: str) -> int:
        value = self.get(obj, key, path)
        if isinstance(value, bool):
            raise self.fail(f"{path}.{key}", f"{value!r} is not a number")
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return int(value, 0)
            except ValueError:
                pass
        raise self.fail(f"{path}.{key}", f"{value!r} is not a number")

    def enum(self, obj: Mapping[str, Any], key: str, path: str, enum: Any) -> int:
        value = self.get(obj, key, path)
        if isinstance(value, str) and value in enum.__members__:
            return int(enum[value])
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise self.fail(f"{path}.{key}", f"{value!r} is not one of {list(enum.__members__)}")

    def flags(self, obj: Mapping[str, Any], key: str, path: str, enum: Any) -> int:
        names = self.list_(obj, key, path)
        value = 0
        for name in names:
            if isinstance(name, str) and name in enum.__members__:
                value |= int(enum[name])
            elif isinstance(name, str) and name.startswith("0x"):
                value |= int(name, 16)
            else:
                raise self.fail(f"{path}.{key}", f"{name!r} is not one of "
                                                 f"{list(enum.__members__)}")
        return value

    def name(self, obj: Mapping[str, Any], key: str, path: str) -> bytes:
        value = self.get(obj, key, path)
        if isinstance(value, str):
            return value.encode("utf-8")
        if isinstance(value, Mapping) and isinstance(value.get("hex"), str):
            try:
                return bytes.fromhex(value["hex"])
            except ValueError:
                pass
        raise self.fail(f"{path}.{key}", f"{value!r} is neither text nor {{\"hex\": ...}}")

    def list_(self, obj: Mapping[str, Any], key: str, path: str) -> Sequence[Any]:
        value = self.get(obj, key, path)
        if not isinstance(value, list):
            raise self.fail(f"{path}.{key}", "is not a list")
        return value


def case_from_json(doc: Any, source: str = "<json>") -> Case:
    """The case a `case_to_json` document describes (descriptive keys are ignored)."""
    j = _Json(source)
    if not isinstance(doc, Mapping) or doc.get("format") != JSON_FORMAT:
        raise j.fail("format", f"not a {JSON_FORMAT} document")
    classes = tuple(
        ClassDef(j.int_(k, "modifiers", f"classes[{i}]"), j.name(k, "name", f"classes[{i}]"),
                 j.name(k, "generic_name", f"classes[{i}]"))
        for i, k in enumerate(j.list_(doc, "classes", "")))
    methods = tuple(
        MethodDef(j.int_(m, "class", p), j.int_(m, "modifiers", p), j.int_(m, "code_size", p),
                  j.name(m, "name", p), j.name(m, "signature", p),
                  j.name(m, "generic_signature", p))
        for i, m in enumerate(j.list_(doc, "methods", "")) for p in [f"methods[{i}]"])
    blobs = tuple(_blob_from_json(j, b, f"blobs[{i}]")
                  for i, b in enumerate(j.list_(doc, "blobs", "")))
    t = j.get(doc, "thread", "")
    anchor = j.get(t, "anchor", "thread")
    thread = Thread(j.enum(t, "state", "thread", vm.ThreadState),
                    j.flags(t, "flags", "thread", vm.ThreadFlag),
                    j.int_(anchor, "sp", "thread.anchor"), j.int_(anchor, "fp", "thread.anchor"),
                    j.int_(anchor, "pc", "thread.anchor"))
    c = j.get(doc, "context", "")
    context = Context(j.int_(c, "pc", "context"), j.int_(c, "sp", "context"),
                      j.int_(c, "fp", "context"))
    w = j.get(doc, "walk", "")
    walk = Walk(j.flags(w, "options", "walk", vm.Option), j.enum(w, "entry", "walk", vm.WalkEntry))
    stack = _stack_from_json(j, j.list_(doc, "stack", ""))
    truth_doc = j.get(doc, "truth", "")
    truth = None if truth_doc is None else Truth(
        j.int_(truth_doc, "run_result", "truth"), j.int_(truth_doc, "end_code", "truth"),
        tuple(_frame_from_json(j, f, f"truth.frames[{i}]")
              for i, f in enumerate(j.list_(truth_doc, "frames", "truth"))))
    queue_doc = doc.get("queue")   # absent in documents written before section 9
    queue = None if queue_doc is None else tuple(
        _queue_op_from_json(j, o, f"queue[{i}]") for i, o in enumerate(j.list_(doc, "queue", "")))
    code = tuple(_patch_from_json(j, p, f"code[{i}]")  # absent before section 10
                 for i, p in enumerate(j.list_(doc, "code", "") if "code" in doc else ()))
    expected_doc = doc.get("expected")   # absent before section 11
    expected = None if expected_doc is None else _expected_from_json(j, expected_doc)
    return Case(classes, methods, blobs, thread, stack, context, walk, truth, queue, code,
                expected)


def _patch_from_json(j: _Json, p: Any, path: str) -> CodePatch:
    text = j.get(p, "bytes", path)
    try:
        data = bytes.fromhex(text) if isinstance(text, str) else None
    except ValueError:
        data = None
    if not data:
        raise j.fail(f"{path}.bytes", f"{text!r} is not a non-empty hex string")
    return CodePatch(j.int_(p, "address", path) - vm.CODE_HEAP, data)


def _blob_from_json(j: _Json, b: Any, path: str) -> Blob:
    start = j.int_(b, "start", path)
    method = j.get(b, "method", path)
    descs = tuple(
        PcDesc(j.int_(d, "pc_begin", p) - start, j.int_(d, "pc_end", p) - start,
               tuple(Scope(j.int_(s, "method", f"{p}.scopes[{k}]"),
                           j.int_(s, "bci", f"{p}.scopes[{k}]"))
                     for k, s in enumerate(j.list_(d, "scopes", p))))
        for i, d in enumerate(j.list_(b, "descs", path)) for p in [f"{path}.descs[{i}]"])
    return Blob(j.enum(b, "kind", path, vm.BlobKind), j.int_(b, "comp_level", path),
                start - vm.CODE_HEAP, j.int_(b, "end", path) - start,
                j.int_(b, "frame_size", path), j.int_(b, "frame_complete", path),
                vm.NO_METHOD if method is None else j.int_(b, "method", path), descs)


def _stack_from_json(j: _Json, words: Sequence[Any]) -> bytes:
    out = bytearray()
    for i, w in enumerate(words):
        value = j.int_(w, "value", f"stack[{i}]")
        repeat = j.int_(w, "zeros", f"stack[{i}]") if "zeros" in w else 1
        out += value.to_bytes(8, "little") * repeat
    return bytes(out)


def _frame_from_json(j: _Json, f: Any, path: str) -> Frame:
    method = j.get(f, "method", path)
    return Frame(j.enum(f, "type", path, vm.FrameType), j.int_(f, "comp_level", path),
                 j.int_(f, "bci", path), 0 if method is None else j.int_(f, "method", path),
                 j.int_(f, "pc", path), j.int_(f, "sp", path), j.int_(f, "fp", path))
