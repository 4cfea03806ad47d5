"""An executable model of the safepoint queue API (asgst.h queue block, docs/queue.md) and of
the section 9 executor (native/src/queue/queue_case_run.c): given a queue program and what the stack
looks like, it predicts the executor's log event by event.

What the stack looks like comes from a `StackOracle`. `TruthOracle` answers from a generated
case's true trace: an element walked at a safepoint must give the true frames from its top
frame on, with the interpreted top frame's bci as it was at enqueue time; an element whose
frame was popped, or whose checked callers moved on (a bcp or return address under it changed:
the frame returned and a caller ran), is gone instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Protocol

from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.format import Blob, Case, Frame
from walkfuzz.targets.minivm.case.queue_program import Misuse, Opcode, QueueOp, registers

MAX_CAPACITY = 65536        # WF_QUEUE_MAX_CAPACITY
MAX_QUEUES = 1024           # WF_QUEUE_MAX_QUEUES: live queues of the process
MAX_CHECKED_CALLERS = 4     # WF_QUEUE_MAX_CHECKED_CALLERS
NO_QUEUE = -5               # ASGST_ENQUEUE_NO_QUEUE
FULL_QUEUE = -6             # ASGST_ENQUEUE_FULL_QUEUE
OTHER_ERROR = -7            # ASGST_ENQUEUE_OTHER_ERROR
FRAME_GONE = -24            # ASGST_WF_FRAME_GONE
NO_ITERATOR = 2             # handler event code: no iterator offered
COMPRESSED = 2              # COMPRESS result: the youngest element's arg was bumped
BYTECODE_FRAMES = (vm.FrameType.JAVA, vm.FrameType.JAVA_INLINED)


class EventKind(IntEnum):
    OP = 1
    ELEMENT = 2
    START = 3
    END = 4
    PENDING = 5


@dataclass(frozen=True)
class Event:
    """One wf_queue_event; frames only for handler events."""

    kind: int
    op: int
    queue: int
    code: int
    arg: int = 0
    pc: int = 0
    sp: int = 0
    fp: int = 0
    size: int = 0
    capacity: int = 0
    attempts: int = 0
    frames: tuple[Frame, ...] = ()


@dataclass(frozen=True)
class Element:
    pc: int
    sp: int
    fp: int
    arg: int = 0
    top_bci: int | None = None   # interpreted top frame: its bci at enqueue time
    # words of the callers right under it whose return addresses do not pin them (at most
    # MAX_CHECKED_CALLERS frames, up to the first compiled one): (address, word at enqueue)
    callers: tuple[tuple[int, int], ...] = ()


class StackOracle(Protocol):
    def probe(self, pc: int, sp: int, fp: int) -> Element | int:
        """What Enqueue would store for this ucontext (arg 0), or its walk error."""

    def probe_own(self) -> Element | int:
        """The same for Enqueue without a ucontext (the calling thread's own)."""

    def walk(self, pc: int, sp: int, fp: int, options: int,
             top_bci: int | None) -> tuple[tuple[Frame, ...], int]:
        """Frames and end code of a walk starting at (pc, sp, fp) now."""

    def poke(self, address: int, value: int) -> None:
        """A stack word changes."""

    def moved(self, callers: tuple[tuple[int, int], ...]) -> bool:
        """Whether one of an element's checked callers is no longer as it was at enqueue."""


class TruthOracle:
    """Answers from a case's true trace. Contexts and safepoint frames must be physical frames
    of that trace, walks use the case's options, and POKEs may only change the bcp slot of an
    interpreted frame to a valid bcp (anything else raises ValueError: not predictable here)."""

    def __init__(self, case: Case) -> None:
        if case.truth is None or case.truth.run_result <= 0 or case.truth.end_code != 0:
            raise ValueError("TruthOracle needs a case whose true walk ends normally")
        if case.walk.entry != vm.WalkEntry.UCONTEXT:
            raise ValueError(f"TruthOracle needs a case walked from its ucontext, not entry "
                             f"{case.walk.entry}")
        self.case = case
        self.frames = case.truth.frames
        self.bcp_slots = {f.fp - 16: f for f in self.frames if _interpreted(f)}
        self.bci_now = {f.fp - 16: f.bci for f in self.frames if _interpreted(f)}
        self.poked: dict[int, int] = {}

    def _thread_error(self) -> int:
        t = self.case.thread
        flags = vm.ThreadFlag.CURRENT | vm.ThreadFlag.SUSPENDED  # Enqueue picks what it has
        if t.state == vm.ThreadState.NOT_JAVA or not t.flags & flags:
            return int(vm.WalkCode.NO_THREAD)
        if t.state == vm.ThreadState.EXITING:
            return int(vm.WalkCode.THREAD_EXIT)
        if t.state in (vm.ThreadState.NEW, vm.ThreadState.IN_TRANSITION):
            return int(vm.WalkCode.UNSAFE_STATE)
        return 0

    def _physical(self, sp: int) -> None:
        if not any(f.sp == sp for f in self.frames):
            raise ValueError(f"frame sp {sp:#x} is no frame of the true trace")

    def probe(self, pc: int, sp: int, fp: int) -> Element | int:
        error = self._thread_error()
        if error:
            return error
        if self.case.thread.state == vm.ThreadState.IN_JAVA:
            self._physical(sp)
            start = sp
        else:
            start = self.frames[0].sp   # the anchor: where the true walk starts
        for f in self.frames:
            if f.sp >= start and f.type in BYTECODE_FRAMES:
                bci = self.bci_now[f.fp - 16] if _interpreted(f) else None
                return Element(f.pc, f.sp, f.fp, top_bci=bci,
                               callers=self._callers(f, first=f.sp == start))
        return int(vm.WalkCode.NO_TOP_JAVA_FRAME)

    def probe_own(self) -> Element | int:
        """The thread's checks, then registers it has not got for a thread in Java; a thread
        that is not is walked from its anchor, whatever the context."""
        error = self._thread_error()
        if error:
            return error
        if self.case.thread.state == vm.ThreadState.IN_JAVA:
            return int(vm.WalkCode.BAD_ARGUMENT)
        return self.probe(0, 0, 0)

    def _word(self, address: int) -> int:
        """The stack word now (ref_queue.c's stack_word: 0 if unaligned or off the stack). The
        address wraps at 2**64 as the C pointer arithmetic does."""
        address %= 1 << 64
        if address % 8 or not self.case.stack_lo <= address <= self.case.stack_hi - 8:
            return 0
        if address in self.poked:
            return self.poked[address]
        offset = address - self.case.stack_lo
        return int.from_bytes(self.case.stack[offset:offset + 8], "little")

    def _blob(self, pc: int) -> Blob | None:
        return next((b for b in self.case.blobs if b.address <= pc < b.end), None)

    def _return_slot(self, top: Frame, first: bool) -> int:
        """Where the top frame keeps its return address (wf_ref_return_slot)."""
        blob = self._blob(top.pc)
        if _interpreted(top) or blob is None:
            return top.fp + 8
        if first and top.pc < blob.address + blob.frame_complete:
            return top.sp            # not built yet (case-format §4.4)
        return top.sp + blob.frame_size - 8

    def _callers(self, top: Frame, first: bool) -> tuple[tuple[int, int], ...]:
        """The caller words Enqueue records (ref_queue.c record_callers): from the top frame's
        caller on, while the caller's return address does not pin it (interpreted: bcp and
        return pc; stub or native wrapper: return pc; entry: the saved anchor, on to the
        anchor frame), at most MAX_CHECKED_CALLERS frames."""
        slot = self._return_slot(top, first)
        caller = (slot + 8, top.fp if slot == top.sp else self._word(slot - 8), self._word(slot))
        out: list[tuple[int, int]] = []
        for _ in range(MAX_CHECKED_CALLERS):
            step = self._check_caller(caller, out)
            if step is None:
                break
            caller = step
        return tuple(out)

    def _check_caller(self, caller: tuple[int, int, int],
                      out: list[tuple[int, int]]) -> tuple[int, int, int] | None:
        """Append caller's checked words to out; the frame a Java-only walk reads next, or
        None where the chain ends."""
        sp, fp, pc = caller
        blob = self._blob(pc)
        kind = blob.kind if blob is not None else 0
        if kind == vm.BlobKind.INTERPRETER:
            out += [(a, self._word(a)) for a in (fp - 16, fp + 8)]
            return fp + 16, self._word(fp), self._word(fp + 8)
        if blob is not None and kind in (vm.BlobKind.STUB, vm.BlobKind.NATIVE_WRAPPER):
            slot = sp + blob.frame_size - 8
            out.append((slot, self._word(slot)))
            return slot + 8, self._word(slot - 8), self._word(slot)
        if kind != vm.BlobKind.ENTRY:
            return None
        out += [(a, self._word(a)) for a in (fp - 8, fp - 16, fp - 24)]
        sp, fp, pc = self._word(fp - 8), self._word(fp - 16), self._word(fp - 24)
        if sp == 0:
            return None
        if pc == 0:
            out.append((sp - 8, self._word(sp - 8)))
            pc = self._word(sp - 8)
        return sp, fp, pc

    def moved(self, callers: tuple[tuple[int, int], ...]) -> bool:
        return any(self._word(slot) != word for slot, word in callers)

    def walk(self, pc: int, sp: int, fp: int, options: int,
             top_bci: int | None) -> tuple[tuple[Frame, ...], int]:
        if options != self.case.walk.options:
            raise ValueError(f"walk options {options} differ from the truth's "
                             f"{self.case.walk.options}")
        self._physical(sp)
        out = []
        for f in self.frames:
            if f.sp < sp:
                continue
            if _interpreted(f):
                bci = top_bci if f.sp == sp and top_bci is not None else self.bci_now[f.fp - 16]
                f = replace(f, bci=bci)
            out.append(f)
        return tuple(out), int(vm.WalkCode.NO_FRAME)

    def poke(self, address: int, value: int) -> None:
        frame = self.bcp_slots.get(address)
        if frame is None:
            raise ValueError(f"poke at {address:#x} is not an interpreted frame's bcp slot")
        base = vm.BYTECODE + vm.BYTECODE_STRIDE * ((frame.method - vm.METHODS) // vm.METHOD_STRIDE)
        size = self.case.methods[(frame.method - vm.METHODS) // vm.METHOD_STRIDE].code_size
        if not 0 <= value - base < size:
            raise ValueError(f"poke value {value:#x} is no valid bcp of the frame at {frame.sp:#x}")
        self.bci_now[address] = value - base
        self.poked[address] = value


def _interpreted(f: Frame) -> bool:
    return f.type == vm.FrameType.JAVA and f.comp_level == 0


@dataclass
class Hook:
    mode: int                 # 1 plain, 2 offered an iterator
    options: int


@dataclass
class Queue:
    index: int
    capacity: int
    options: int
    elements: list[Element] = field(default_factory=list)
    pending: int | None = None
    attempts: int = 0
    live: bool = True
    start: Hook | None = None
    end: Hook | None = None


class QueueModel:
    """Runs a program the way queue_case_run.c does and returns the log it must produce."""

    def __init__(self, oracle: StackOracle) -> None:
        self.oracle = oracle

    def run(self, ops: tuple[QueueOp, ...] | list[QueueOp]) -> list[Event]:
        self.ops = tuple(ops)
        self.log: list[Event] = []
        self.queues: list[Queue | None] = []    # by registration index; None: register failed
        self.in_safepoint = False
        self.exited = False
        self._run(0, len(self.ops))
        for q in self.queues:
            if q is not None and q.live:
                self.log += [Event(EventKind.PENDING, len(self.ops), q.index, n, e.arg, e.pc,
                                   e.sp, e.fp) for n, e in enumerate(q.elements)]
        return self.log

    # ---- ops ---------------------------------------------------------------------------

    def _live(self, index: int) -> Queue | None:
        q = self.queues[index] if index < len(self.queues) else None
        return q if q is not None and q.live else None

    def _run(self, begin: int, end: int) -> None:
        i = begin
        while i < end:
            op = self.ops[i]
            code = self._op(i, op)
            queue = self._logged_queue(op)
            q = self._live(queue) if queue >= 0 else None
            info = (len(q.elements), q.capacity, q.attempts) if q is not None else (0, 0, 0)
            self.log.append(Event(EventKind.OP, i, queue, code, size=info[0],
                                  capacity=info[1], attempts=info[2]))
            i += 1 + (op.inner_count if op.code == Opcode.SAFEPOINT else 0)

    def _logged_queue(self, op: QueueOp) -> int:
        """The registration an op's event names (queue_case_run.c logged_queue)."""
        if registers(op):
            return len(self.queues) - 1
        if op.code == Opcode.MISUSE:
            return -1 if op.which == Misuse.NO_ELEMENT else op.queue
        if op.code in (Opcode.SAFEPOINT, Opcode.THREAD_EXIT, Opcode.POKE, Opcode.THREAD,
                       Opcode.FILL):
            return -1
        return op.queue

    def _op(self, i: int, op: QueueOp) -> int:
        c = Opcode
        if op.code == c.REGISTER:
            return self._register(op)
        if op.code in (c.FILL, c.ALIAS, c.MISUSE):
            return self._refused(op)
        if op.code == c.DEREGISTER:
            q = self._live(op.queue)
            if q is None or self.in_safepoint:
                return 0
            q.live = False
            return 1
        if op.code == c.ENQUEUE:
            return self._enqueue(op.queue, self.oracle.probe(op.pc, op.sp, op.fp), op.arg)
        if op.code == c.SET_ARG:
            return self._set_arg(op)
        if op.code == c.COMPRESS:
            return self._compress(op)
        if op.code == c.RESIZE:
            q = self._live(op.queue)
            if q is not None and 0 <= op.n <= MAX_CAPACITY:
                q.pending = op.n
            return 0
        if op.code == c.SIZE_INFO:
            q = self._live(op.queue)
            return len(q.elements) if q is not None else 0
        if op.code == c.HANDLER:
            return self._handler(op)
        if op.code == c.SAFEPOINT:
            return self._safepoint(i, op)
        if op.code == c.THREAD_EXIT:
            return self._thread_exit()
        if op.code == c.THREAD:   # the oracle's true trace is of the case's thread as decoded
            raise ValueError(f"queue op {i}: THREAD changes the thread, which the model's "
                             "true trace does not follow")
        self.oracle.poke(op.pc, op.arg)
        return 0

    def _register(self, op: QueueOp) -> int:
        ok = 0 <= op.n <= MAX_CAPACITY and not self.exited and not self.in_safepoint
        index = len(self.queues)
        self.queues.append(Queue(index, op.n, op.options) if ok else None)
        return int(ok)

    def _refused(self, op: QueueOp) -> int:
        """FILL, ALIAS and MISUSE: calls the API refuses, or undoes before the next op."""
        if op.code == Opcode.FILL:
            if self.in_safepoint or self.exited:
                return 0
            return MAX_QUEUES - sum(1 for q in self.queues if q is not None and q.live)
        if registers(op):   # ALIAS, and RegisterQueue with a bad env or no handler
            self.queues.append(None)
            return 0
        if op.which == Misuse.NO_ELEMENT:
            return int(vm.WalkCode.BAD_ARGUMENT)
        if op.which == Misuse.NO_CONTEXT:
            return self._enqueue(op.queue, self.oracle.probe_own(), 0)
        return 0            # DeregisterQueue with a bad env

    def _enqueue(self, index: int, probed: Element | int, arg: int) -> int:
        q = self._live(index)
        if q is None:
            return NO_QUEUE
        q.attempts += 1
        if self.in_safepoint:
            return OTHER_ERROR
        if len(q.elements) >= q.capacity:
            return FULL_QUEUE
        if isinstance(probed, int):
            return probed
        q.elements.append(replace(probed, arg=arg))
        return 1

    def _position(self, q: Queue | None, n: int) -> int | None:
        """GetQueueElement's index rule: 0 oldest, -1 youngest; None out of bounds."""
        if q is None:
            return None
        i = n + len(q.elements) if n < 0 else n
        return i if 0 <= i < len(q.elements) else None

    def _set_arg(self, op: QueueOp) -> int:
        q = self._live(op.queue)
        i = self._position(q, op.n)
        if q is None or i is None:
            return 0
        q.elements[i] = replace(q.elements[i], arg=op.arg)
        return 1

    def _compress(self, op: QueueOp) -> int:
        probed = self.oracle.probe(op.pc, op.sp, op.fp)
        if isinstance(probed, int):
            return probed
        q = self._live(op.queue)
        if q is not None and q.elements and (q.elements[-1].pc, q.elements[-1].sp,
                                             q.elements[-1].fp) == (probed.pc, probed.sp,
                                                                    probed.fp):
            last = q.elements[-1]
            q.elements[-1] = replace(last, arg=(last.arg + 1) % (1 << 64))
            return COMPRESSED
        return self._enqueue(op.queue, probed, 1)

    def _handler(self, op: QueueOp) -> int:
        q = self._live(op.queue)
        if q is not None:
            hook = None if op.mode == 0 else Hook(op.mode, op.options)
            if op.which == 0:
                q.start = hook
            else:
                q.end = hook
        return 0

    def _thread_exit(self) -> int:
        if self.in_safepoint:
            return -1
        self.exited = True
        live = [q for q in self.queues if q is not None and q.live]
        for q in live:
            q.live = False
        return len(live)

    # ---- the safepoint -----------------------------------------------------------------

    def _safepoint(self, i: int, op: QueueOp) -> int:
        if self.in_safepoint:
            return -1
        self.in_safepoint = True
        seen = total = 0
        for q in [q for q in self.queues if q is not None and q.live]:
            n = len(q.elements)
            if n == 0:
                continue
            self._hook(EventKind.START, i, q, q.start, op)
            for _ in range(n):
                e = q.elements[0]
                gone = e.sp < op.sp or self.oracle.moved(e.callers)
                frames, code = ((), FRAME_GONE) if gone else self.oracle.walk(
                    e.pc, e.sp, e.fp, q.options, e.top_bci)
                self.log.append(Event(EventKind.ELEMENT, i, q.index, code, e.arg, e.pc, e.sp,
                                      e.fp, frames=frames))
                if op.inner_count > 0 and seen == op.inner_at:
                    self._run(i + 1, i + 1 + op.inner_count)
                seen += 1
                q.elements.pop(0)
            self._hook(EventKind.END, i, q, q.end, op)
            total += n
        for done in self.queues:
            if done is not None and done.live:
                if done.pending is not None:
                    done.capacity, done.pending = done.pending, None
                done.attempts = 0
        self.in_safepoint = False
        return total

    def _hook(self, kind: EventKind, i: int, q: Queue, hook: Hook | None, op: QueueOp) -> None:
        if hook is None:
            return
        if hook.mode == 1:
            self.log.append(Event(kind, i, q.index, NO_ITERATOR))
            return
        frames, code = self.oracle.walk(op.pc, op.sp, op.fp, hook.options, None)
        self.log.append(Event(kind, i, q.index, code, frames=frames))
