"""Section 9 of a case: a program of queue operations (docs/case-format.md §7).

The decoder mirrors native/src/case/case_queue.c rule for rule (same status, same byte offset), and
reads through any reader with the `QueueReader` methods, so fuzz/targets/minivm/case/format.py's
reader can call it for a section 9 payload. `encode_program` gives the payload, `queue_section` the
whole section. """

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

from walkfuzz.targets.minivm.case.status import CaseDecodeError, CaseStatus, Section
from walkfuzz.targets.minivm.vm_model import ThreadFlag, ThreadState

MAX_OPS = 4096
MAX_REGISTRATIONS = 255
STATUS_LIMIT = CaseStatus.LIMIT
STATUS_BAD_FIELD = CaseStatus.BAD_FIELD
THREAD_FLAGS = int(ThreadFlag.SUSPENDED | ThreadFlag.CURRENT)


class Opcode(IntEnum):
    REGISTER = 1
    DEREGISTER = 2
    ENQUEUE = 3
    SET_ARG = 4
    COMPRESS = 5
    RESIZE = 6
    SIZE_INFO = 7
    HANDLER = 8
    SAFEPOINT = 9
    THREAD_EXIT = 10
    POKE = 11
    THREAD = 12   # the thread's state, flags and anchor change (a live capture's safepoint)
    FILL = 13     # register size-0 queues until refused, then deregister them
    ALIAS = 14    # a registration whose handle is another's plus a misaligned offset
    MISUSE = 15   # one call with an argument the API refuses (Misuse)


class Misuse(IntEnum):
    """MISUSE kinds (wf_queue_misuse)."""

    REGISTER_ENV = 0      # RegisterQueue(non-NULL env, ...): NULL
    REGISTER_NO_FUN = 1   # RegisterQueue(NULL, ..., NULL handler, ...): NULL
    DEREGISTER_ENV = 2    # DeregisterQueue(non-NULL env, queue): 0
    NO_ELEMENT = 3        # GetEnqueuableElement(ucontext, NULL): ASGST_WF_BAD_ARGUMENT
    NO_CONTEXT = 4        # Enqueue(queue, NULL, 0): the caller's own stack, no VM thread


def registers(op: QueueOp) -> bool:
    """Does op take the next registration index (wf_queue_op_registers)?"""
    return op.code in (Opcode.REGISTER, Opcode.ALIAS) or (
        op.code == Opcode.MISUSE and op.which in (Misuse.REGISTER_ENV, Misuse.REGISTER_NO_FUN))


@dataclass(frozen=True)
class QueueOp:
    """One op; only the operands of its opcode matter (POKE: address in pc, value in arg)."""

    code: int
    queue: int = 0
    n: int = 0            # REGISTER, RESIZE: size; SET_ARG: element index; ALIAS: offset
    options: int = 0      # REGISTER, HANDLER
    which: int = 0        # HANDLER: 0 start, 1 end; THREAD: state; MISUSE: kind
    mode: int = 0         # HANDLER: 0 remove, 1 plain, 2 offered an iterator; THREAD: flags
    pc: int = 0           # (THREAD: pc, sp, fp are the anchor's)
    sp: int = 0
    fp: int = 0
    arg: int = 0
    inner_at: int = 0     # SAFEPOINT
    inner_count: int = 0


class QueueReader(Protocol):
    """What the section decoder needs from a case reader (fuzz/targets/minivm/case/format.py's
    _Reader has it)."""

    def u8(self, what: str) -> int: ...
    def u16(self, what: str) -> int: ...
    def u32(self, what: str) -> int: ...
    def s32(self, what: str) -> int: ...
    def u64(self, what: str) -> int: ...
    def fail(self, status: CaseStatus, what: str) -> CaseDecodeError: ...


class PayloadReader:
    """A QueueReader over one section 9 payload; offsets count from the payload's start plus
    `base` (the payload's offset in the case, when known)."""

    def __init__(self, payload: bytes, base: int = 0, source: str = "<queue section>") -> None:
        self.data, self.pos, self.base, self.source = payload, 0, base, source

    def fail(self, status: CaseStatus, what: str) -> CaseDecodeError:
        return CaseDecodeError(self.source, status, Section.QUEUE, self.base + self.pos, what)

    def _take(self, n: int, what: str) -> int:
        if len(self.data) - self.pos < n:
            raise self.fail(CaseStatus.SECTION_LENGTH,
                            f"{what} needs {n} bytes, {len(self.data) - self.pos} left")
        value = int.from_bytes(self.data[self.pos:self.pos + n], "little")
        self.pos += n
        return value

    def u8(self, what: str) -> int:
        return self._take(1, what)

    def u16(self, what: str) -> int:
        return self._take(2, what)

    def u32(self, what: str) -> int:
        return self._take(4, what)

    def s32(self, what: str) -> int:
        v = self._take(4, what)
        return v - (1 << 32) if v >= 1 << 31 else v

    def u64(self, what: str) -> int:
        return self._take(8, what)


def _frame(r: QueueReader) -> dict[str, int]:
    return {"pc": r.u64("queue op pc"), "sp": r.u64("queue op sp"), "fp": r.u64("queue op fp")}


def _operands(r: QueueReader, code: int, index: int) -> QueueOp:
    q = Opcode
    if code == q.REGISTER:
        return QueueOp(code, n=r.s32("register size"), options=r.u32("register options"))
    if code in (q.DEREGISTER, q.SIZE_INFO):
        return QueueOp(code, queue=r.u8("queue index"))
    if code == q.ENQUEUE:
        queue = r.u8("queue index")
        frame = _frame(r)
        return QueueOp(code, queue=queue, **frame, arg=r.u64("enqueue arg"))
    if code == q.SET_ARG:
        queue = r.u8("queue index")
        n = r.s32("element index")
        return QueueOp(code, queue=queue, n=n, arg=r.u64("element arg"))
    if code == q.COMPRESS:
        queue = r.u8("queue index")
        return QueueOp(code, queue=queue, **_frame(r))
    if code == q.RESIZE:
        queue = r.u8("queue index")
        return QueueOp(code, queue=queue, n=r.s32("resize size"))
    if code == q.HANDLER:
        queue, which, mode = r.u8("queue index"), r.u8("handler which"), r.u8("handler mode")
        return QueueOp(code, queue=queue, which=which, mode=mode,
                       options=r.u32("handler options"))
    if code == q.SAFEPOINT:
        frame = _frame(r)
        inner_at = r.u16("safepoint inner_at")
        return QueueOp(code, **frame, inner_at=inner_at,
                       inner_count=r.u16("safepoint inner_count"))
    if code in (q.THREAD_EXIT, q.FILL):
        return QueueOp(code)
    if code == q.ALIAS:
        queue = r.u8("queue index")
        return QueueOp(code, queue=queue, n=r.s32("alias offset"))
    if code == q.MISUSE:
        kind = r.u8("misuse kind")
        return QueueOp(code, which=kind, queue=r.u8("queue index"))
    if code == q.POKE:
        addr = r.u64("poke address")
        return QueueOp(code, pc=addr, arg=r.u64("poke value"))
    if code == q.THREAD:
        state, flags = r.u8("thread state"), r.u8("thread flags")
        sp, fp = r.u64("thread anchor sp"), r.u64("thread anchor fp")
        return QueueOp(code, which=state, mode=flags, sp=sp, fp=fp, pc=r.u64("thread anchor pc"))
    raise r.fail(STATUS_BAD_FIELD, f"queue op {index}: opcode {code}")


def _check(r: QueueReader, op: QueueOp, i: int, count: int, inner_end: int,
           registrations: int, stack: tuple[int, int]) -> None:
    if registers(op) and registrations > MAX_REGISTRATIONS:
        raise r.fail(STATUS_LIMIT,
                           f"queue op {i}: more than {MAX_REGISTRATIONS} registrations")
    if op.code == Opcode.ALIAS and op.n % 8 == 0:
        raise r.fail(STATUS_BAD_FIELD, f"queue op {i}: alias offset {op.n}, a multiple of 8")
    if op.code == Opcode.MISUSE and op.which > max(Misuse):
        raise r.fail(STATUS_BAD_FIELD, f"queue op {i}: misuse kind {op.which}")
    if op.code == Opcode.HANDLER and (op.which > 1 or op.mode > 2):
        raise r.fail(STATUS_BAD_FIELD,
                           f"queue op {i}: handler which {op.which} mode {op.mode}")
    if op.code == Opcode.THREAD and (op.which > max(ThreadState) or op.mode & ~THREAD_FLAGS):
        raise r.fail(STATUS_BAD_FIELD,
                     f"queue op {i}: thread state {op.which} flags {op.mode:#x}")
    lo, hi = stack
    if op.code == Opcode.POKE and (op.pc % 8 or op.pc < lo or op.pc + 8 > hi):
        raise r.fail(STATUS_BAD_FIELD,
                           f"queue op {i}: poke address {op.pc:#x} off the stack")
    if op.code == Opcode.SAFEPOINT and op.inner_count > 0 and (
            inner_end != 0 or i + 1 + op.inner_count > count):
        raise r.fail(STATUS_BAD_FIELD, f"queue op {i}: safepoint inner_count "
                                             f"{op.inner_count} (nested or past the end)")


def decode_program(r: QueueReader, stack_lo: int, stack_hi: int) -> tuple[QueueOp, ...]:
    """The ops of a section 9 payload; raises r.fail(status, what) at the first bad rule.
    POKE addresses are checked against the stack [stack_lo, stack_hi) of section 5."""
    count = r.u32("queue op count")
    if count > MAX_OPS:
        raise r.fail(STATUS_LIMIT, f"queue op count {count} > {MAX_OPS}")
    ops: list[QueueOp] = []
    registrations = inner_end = 0
    for i in range(count):
        op = _operands(r, r.u8("queue opcode"), i)
        registrations += registers(op)
        _check(r, op, i, count, inner_end, registrations, (stack_lo, stack_hi))
        if inner_end and i + 1 >= inner_end:
            inner_end = 0
        if op.code == Opcode.SAFEPOINT and op.inner_count > 0:
            inner_end = i + 1 + op.inner_count
        ops.append(op)
    return tuple(ops)


def _operand_bytes(op: QueueOp) -> bytes:
    q = Opcode
    frame = struct.pack("<QQQ", op.pc, op.sp, op.fp)
    if op.code == q.REGISTER:
        return struct.pack("<iI", op.n, op.options)
    if op.code in (q.DEREGISTER, q.SIZE_INFO):
        return struct.pack("<B", op.queue)
    if op.code == q.ENQUEUE:
        return struct.pack("<B", op.queue) + frame + struct.pack("<Q", op.arg)
    if op.code == q.SET_ARG:
        return struct.pack("<BiQ", op.queue, op.n, op.arg)
    if op.code == q.COMPRESS:
        return struct.pack("<B", op.queue) + frame
    if op.code == q.RESIZE:
        return struct.pack("<Bi", op.queue, op.n)
    if op.code == q.HANDLER:
        return struct.pack("<BBBI", op.queue, op.which, op.mode, op.options)
    if op.code == q.SAFEPOINT:
        return frame + struct.pack("<HH", op.inner_at, op.inner_count)
    if op.code in (q.THREAD_EXIT, q.FILL):
        return b""
    if op.code == q.ALIAS:
        return struct.pack("<Bi", op.queue, op.n)
    if op.code == q.MISUSE:
        return struct.pack("<BB", op.which, op.queue)
    if op.code == q.POKE:
        return struct.pack("<QQ", op.pc, op.arg)
    if op.code == q.THREAD:
        return struct.pack("<BBQQQ", op.which, op.mode, op.sp, op.fp, op.pc)
    raise ValueError(f"queue op opcode {op.code} has no encoding")


def _encode_op(op: QueueOp) -> bytes:
    return struct.pack("<B", op.code) + _operand_bytes(op)


def decode_payload(payload: bytes, stack_lo: int, stack_hi: int) -> tuple[QueueOp, ...]:
    """decode_program over a whole payload; bytes left over are SECTION_LENGTH."""
    r = PayloadReader(payload)
    ops = decode_program(r, stack_lo, stack_hi)
    if r.pos != len(payload):
        raise r.fail(CaseStatus.SECTION_LENGTH, f"{len(payload) - r.pos} bytes left over")
    return ops


def encode_program(ops: tuple[QueueOp, ...] | list[QueueOp]) -> bytes:
    """The section 9 payload of `ops` (a plain serializer: validity is the decoder's call)."""
    return struct.pack("<I", len(ops)) + b"".join(_encode_op(op) for op in ops)


def queue_section(ops: tuple[QueueOp, ...] | list[QueueOp]) -> bytes:
    """The whole section 9 (header and payload), to append after a case's other sections."""
    payload = encode_program(ops)
    return struct.pack("<HHI", Section.QUEUE, 0, len(payload)) + payload
