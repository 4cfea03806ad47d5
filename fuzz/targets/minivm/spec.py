"""The executable spec of the walker: docs/case-format.md §4, line by line, over a decoded Case.

This is the oracle the C walkers are compared with. It is written for clarity, not speed, and
shares nothing with the C reference walker: memory is the case's stack image (a bytes
object), the code heap is the case's blob list, and each rule of §4 is one small function
whose comments quote the rule. Every way a walk ends records why (`Step.reason`), so replay
can say where a walk stopped and why.

API shape (mirrors asgst.h): `run_with_iterator` / `run_with_iterator_from_frame` call a
handler with a `SpecIterator` whose `next_frame()` returns (code, frame or None); `walk(case)`
does what the case's WALK section asks and records the result as the harness does (§5).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.format import Blob, Case, Frame, PcDesc
from walkfuzz.targets.minivm.vm_model import (
    FrameKind,
    FrameType,
    Option,
    ThreadFlag,
    ThreadState,
    WalkCode,
)

MAX_RECORDED_FRAMES = 65536  # §5: the harness records at most this many frames


@dataclass(frozen=True)
class Physical:
    """A physical frame (sp, fp, pc)."""

    sp: int
    fp: int
    pc: int


@dataclass(frozen=True)
class Step:
    """What the walk did with one physical frame: its kind (None if it did not decode), how
    many frames it reported, and the code that ended the walk there (None: it went on)."""

    frame: Physical
    kind: FrameKind | None
    reported: int
    code: int | None
    reason: str


@dataclass(frozen=True)
class WalkResult:
    """What the harness records of one walk (§5), plus the spec's explanation."""

    run_result: int
    frames: tuple[Frame, ...]
    end_code: int
    steps: tuple[Step, ...] = ()
    reason: str = ""  # why it ended (or why Run* refused)


class _Stop(Exception):
    """A rule of §4 ended the walk with `code`; `reason` says which and why."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


# ---- memory and code of the case (§1, §3) ----------------------------------------------------


class _Memory:
    """The thread's stack and code heap as a walker of the case sees them."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.stack_lo = case.stack_lo
        self.stack_hi = case.stack_hi

    def word_ok(self, addr: int) -> bool:
        """A checked read may read addr: an aligned word inside [stack_lo, stack_hi)."""
        return addr % 8 == 0 and self.stack_lo <= addr and addr + 8 <= self.stack_hi

    def word(self, addr: int) -> int:
        """[addr]; the rules only read here after checks that keep addr inside the stack."""
        if not self.word_ok(addr):
            raise AssertionError(f"spec read outside the stack at {addr:#x}")
        offset = addr - self.stack_lo
        return int.from_bytes(self.case.stack[offset:offset + 8], "little")

    def blob_at(self, pc: int) -> Blob | None:
        """§3: the blob with start <= pc < end, if any."""
        for blob in self.case.blobs:
            if blob.address <= pc < blob.end:
                return blob
        return None


def _in_native_text(pc: int) -> bool:
    return vm.NATIVE_TEXT <= pc < vm.NATIVE_TEXT + vm.NATIVE_TEXT_SIZE


def _in_code_heap(pc: int) -> bool:
    return vm.CODE_HEAP <= pc < vm.CODE_HEAP + vm.CODE_HEAP_SIZE


def _desc_at(blob: Blob, pc: int) -> PcDesc | None:
    """§4.3: a descriptor contains pc when blob.start + pc_begin <= pc < blob.start + pc_end."""
    for desc in blob.descs:
        if blob.address + desc.pc_begin <= pc < blob.address + desc.pc_end:
            return desc
    return None


_JAVA, _INLINED, _NATIVE, _NON_JAVA = (int(FrameType.JAVA), int(FrameType.JAVA_INLINED),
                                      int(FrameType.JAVA_NATIVE), int(FrameType.NON_JAVA))
_FIXED_FRAME_KINDS = (FrameKind.COMPILED, FrameKind.NATIVE, FrameKind.STUB)
# Kinds whose blob's frame_complete counts: a return address never lies before it, and a first
# frame there (or at a `ret`) is unbuilt (§4.3).
_BUILT_KINDS = (*_FIXED_FRAME_KINDS, FrameKind.INTERPRETED)
RET = 0xC3  # x86-64 `ret`: the frame is already popped, [sp] is the return address
_JAVA_KINDS = (FrameKind.INTERPRETED, FrameKind.COMPILED, FrameKind.NATIVE)


@dataclass(frozen=True)
class _Decoded:
    """A decoded physical frame: its kind, its blob (None for C), the frames it reports, and
    whether it is an unbuilt first frame (§4.3: only its return address is on the stack)."""

    kind: FrameKind
    blob: Blob | None
    frames: tuple[Frame, ...]
    unbuilt: bool = False


# ---- the iterator (§4.2 - §4.5) --------------------------------------------------------------


@dataclass
class SpecIterator:
    memory: _Memory
    options: int
    start: Physical
    cur: Physical = field(init=False)
    first: bool = field(init=False)
    decoded: _Decoded | None = field(init=False)
    emitted: int = field(init=False)
    state: int = field(init=False)
    depth: int = field(init=False)
    steps: list[Step] = field(init=False)
    reason: str = field(init=False)

    def __post_init__(self) -> None:
        self.rewind()

    def rewind(self) -> None:
        """ASGST_RewindIterator: back to the start frame, as freshly created."""
        self.cur = self.start
        self.first = True
        self.decoded = None
        self.emitted = 0
        self.state = 1
        self.depth = 0
        self.steps = []
        self.reason = ""

    def include_non_java(self) -> bool:
        return bool(self.options & Option.INCLUDE_NON_JAVA_FRAMES)

    def next_frame(self) -> tuple[int, Frame | None]:
        """ASGST_NextFrame: (1, frame), or (0 / error, None); the end code is sticky."""
        if self.state != 1:
            return self.state, None
        # 1. The current physical frame has scopes not yet emitted: emit the next one.
        if self.decoded is not None and self.emitted < len(self.decoded.frames):
            return self.emit()
        try:
            while True:
                # a. decoded already: step to its sender; an end or an error ends the call.
                if self.decoded is not None:
                    self.cur = self.sender(self.decoded)
                    self.first = False
                    self.decoded = None
                # b. WF_WALK_MAX_DEPTH physical frames decoded already: depth limit.
                if self.depth >= vm.MAX_DEPTH:
                    raise _Stop(WalkCode.DEPTH_LIMIT,
                                f"{vm.MAX_DEPTH} physical frames decoded already")
                # c. decode the current frame (an error ends the call); count it.
                self.decoded = self.decode(self.cur)
                self.depth += 1
                self.emitted = 0
                # d. its frames are reported: emit the first one; else continue the loop.
                reason = "reported" if self.decoded.frames else "skipped"
                if self.decoded.unbuilt:
                    reason += ", unbuilt (only its return address is on the stack)"
                self.steps.append(Step(self.cur, self.decoded.kind, len(self.decoded.frames),
                                       None, reason))
                if self.decoded.frames:
                    return self.emit()
        except _Stop as stop:
            self.state = int(stop.code)
            self.reason = stop.reason
            kind = self.decoded.kind if self.decoded is not None else None
            self.steps.append(Step(self.cur, kind, 0, stop.code, stop.reason))
            return self.state, None

    def emit(self) -> tuple[int, Frame]:
        assert self.decoded is not None
        frame = self.decoded.frames[self.emitted]
        self.emitted += 1
        return 1, frame

    # §4.3 -------------------------------------------------------------------------------------

    def decode(self, f: Physical) -> _Decoded:
        mem = self.memory
        # 1. sp: 8-aligned and stack_lo <= sp < stack_hi, else BAD_SP.
        if f.sp % 8 != 0 or not mem.stack_lo <= f.sp < mem.stack_hi:
            raise _Stop(WalkCode.BAD_SP, f"sp {f.sp:#x} is not an aligned address of the stack "
                                         f"[{mem.stack_lo:#x}, {mem.stack_hi:#x})")
        # 2. pc: classified as in §3.
        kind, blob = self.classify(f)
        # A first frame whose blob has not built its frame yet (pc before frame_complete) or
        # has popped it already (a `ret` at pc): only the return address is at sp.
        if self.first and kind in _BUILT_KINDS:
            assert blob is not None
            building = f.pc < blob.address + blob.frame_complete
            if building or self.memory.case.code_byte(f.pc) == RET:
                frames = () if kind == FrameKind.INTERPRETED else self.frames_of(kind, blob, f)
                return _Decoded(kind, blob, frames, unbuilt=True)
        # 3. per kind.
        if kind == FrameKind.INTERPRETED:
            return _Decoded(kind, blob, self.decode_interpreted(f))
        if kind == FrameKind.ENTRY:
            self.check_fp(f, 24, "entry")
        elif kind == FrameKind.C:
            self.check_fp(f, 0, "C")
        return _Decoded(kind, blob, self.frames_of(kind, blob, f))

    def classify(self, f: Physical) -> tuple[FrameKind, Blob | None]:
        if _in_native_text(f.pc):
            return FrameKind.C, None
        blob = self.memory.blob_at(f.pc) if _in_code_heap(f.pc) else None
        if blob is None:
            where = "in no blob of the code heap" if _in_code_heap(f.pc) else "not code"
            raise _Stop(WalkCode.BAD_PC, f"pc {f.pc:#x} is {where}")
        kind = vm.FRAME_KIND_OF_BLOB[vm.BlobKind(blob.kind)]
        # A non-first frame whose pc is in a blob's [start, start+frame_complete).
        if (not self.first and kind in _BUILT_KINDS
                and f.pc < blob.address + blob.frame_complete):
            raise _Stop(WalkCode.BAD_PC, f"return address {f.pc:#x} lies before the frame of "
                                         f"{kind.name} blob at {blob.address:#x} is complete "
                                         f"(+{blob.frame_complete:#x})")
        return kind, blob

    def check_fp(self, f: Physical, slots: int, what: str) -> None:
        """fp 8-aligned, sp <= fp - slots, fp + 16 <= stack_hi, else BAD_FP."""
        if f.fp % 8 != 0 or not f.sp <= f.fp - slots or not f.fp + 16 <= self.memory.stack_hi:
            raise _Stop(WalkCode.BAD_FP, f"{what} frame: fp {f.fp:#x} must be aligned, >= sp "
                                         f"{f.sp:#x} + {slots} and <= stack_hi - 16")

    def decode_interpreted(self, f: Physical) -> tuple[Frame, ...]:
        self.check_fp(f, 16, "interpreted")
        case = self.memory.case
        handle = self.memory.word(f.fp - 8)
        index = vm.method_index_of(handle, len(case.methods))
        if index is None:
            raise _Stop(WalkCode.BAD_METHOD, f"interpreted frame: [fp-8] = {handle:#x} is no "
                                             f"method handle")
        bci = self.memory.word(f.fp - 16) - vm.bytecode_base(index)
        if not 0 <= bci < case.methods[index].code_size:
            raise _Stop(WalkCode.BAD_BCP, f"interpreted frame: bci {bci} outside 0.."
                                          f"{case.methods[index].code_size - 1} of method "
                                          f"{index}")
        return (Frame(_JAVA, 0, bci, handle, f.pc, f.sp, f.fp),)

    def frames_of(self, kind: FrameKind, blob: Blob | None, f: Physical) -> tuple[Frame, ...]:
        """The frames emitted for a decoded non-interpreted frame (table of §4.3)."""
        if kind not in _JAVA_KINDS and not self.include_non_java():
            return ()
        if kind == FrameKind.COMPILED:
            assert blob is not None
            desc = _desc_at(blob, f.pc)
            if desc is None:
                method = vm.method_handle(blob.method_index)
                return (Frame(_JAVA, blob.comp_level, -1, method, f.pc, f.sp, f.fp),)
            last = len(desc.scopes) - 1
            return tuple(
                Frame(_JAVA if i == last else _INLINED, blob.comp_level,
                      s.bci, vm.method_handle(s.method_index), f.pc, f.sp, f.fp)
                for i, s in enumerate(desc.scopes))
        if kind == FrameKind.NATIVE:
            assert blob is not None
            method = vm.method_handle(blob.method_index)
            return (Frame(_NATIVE, -1, -1, method, f.pc, f.sp, f.fp),)
        return (Frame(_NON_JAVA, -1, -1, 0, f.pc, f.sp, f.fp),)

    # §4.4 -------------------------------------------------------------------------------------

    def sender(self, d: _Decoded) -> Physical:
        f, mem = self.cur, self.memory
        if d.unbuilt:  # only the return address is on the stack
            s = Physical(sp=f.sp + 8, fp=f.fp, pc=mem.word(f.sp))
        elif d.kind in (FrameKind.INTERPRETED, FrameKind.C) or (
                d.kind == FrameKind.ENTRY and self.include_non_java()):
            s = Physical(sp=f.fp + 16, fp=mem.word(f.fp), pc=mem.word(f.fp + 8))
        elif d.kind in _FIXED_FRAME_KINDS:
            assert d.blob is not None
            sp = f.sp + d.blob.frame_size
            if sp > mem.stack_hi:
                raise _Stop(WalkCode.BAD_SP, f"{d.kind.name} frame of size "
                                             f"{d.blob.frame_size} at sp {f.sp:#x} runs off "
                                             f"the stack")
            s = Physical(sp=sp, fp=mem.word(sp - 16), pc=mem.word(sp - 8))
        else:  # ENTRY, Java-only walk: jump to the saved anchor
            a = mem.word(f.fp - 8)
            if a == 0:
                raise _Stop(WalkCode.NO_FRAME, "entry frame without a saved anchor: "
                                               "no older Java frame")
            pc = mem.word(f.fp - 24)
            if pc == 0:
                if not mem.word_ok(a - 8):
                    raise _Stop(WalkCode.BAD_SP, f"entry frame's saved anchor sp {a:#x}: "
                                                 f"[sp - 8] is no aligned stack word")
                pc = mem.word(a - 8)
            s = Physical(sp=a, fp=mem.word(f.fp - 16), pc=pc)
        if s.pc == 0:
            raise _Stop(WalkCode.NO_FRAME, "return address 0: outermost frame")
        if s.sp <= f.sp:
            raise _Stop(WalkCode.BAD_SP, f"sender sp {s.sp:#x} <= sp {f.sp:#x}: sp must grow")
        return s

    def state_code(self) -> int:
        """ASGST_State: 1 while only frames were returned, then the sticky code."""
        return self.state


# ---- starting a walk (§4.1) ------------------------------------------------------------------

Handler = Callable[[SpecIterator], None]
_ANCHORED = (ThreadState.IN_VM, ThreadState.IN_NATIVE, ThreadState.BLOCKED)


class _Refused(Exception):
    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def _check_thread(case: Case, options: int) -> None:
    """§4.1 steps 2-4."""
    t = case.thread
    if t.state == ThreadState.NOT_JAVA and not options & Option.INCLUDE_NON_JAVA_FRAMES:
        raise _Refused(WalkCode.NO_THREAD, "not a Java thread and no INCLUDE_NON_JAVA_FRAMES")
    if options & Option.WALK_SAME_THREAD:
        if not t.flags & ThreadFlag.CURRENT:
            raise _Refused(WalkCode.NO_THREAD, "WALK_SAME_THREAD on a thread not CURRENT")
    elif not t.flags & ThreadFlag.SUSPENDED:
        raise _Refused(WalkCode.NO_THREAD, "walk from another thread of a thread not SUSPENDED")
    if t.state == ThreadState.EXITING:
        raise _Refused(WalkCode.THREAD_EXIT, "thread exiting")
    if t.state in (ThreadState.NEW, ThreadState.IN_TRANSITION):
        raise _Refused(WalkCode.UNSAFE_STATE, f"thread {ThreadState(t.state).name}")


def _anchor_frame(case: Case) -> Physical:
    """§4.1 step 5 for IN_VM, IN_NATIVE, BLOCKED: the last-Java-frame anchor."""
    t = case.thread
    if t.anchor_sp == 0:
        raise _Refused(WalkCode.NO_TOP_JAVA_FRAME, "thread outside Java without an anchor")
    pc = t.anchor_pc
    if pc == 0:
        mem = _Memory(case)
        if not mem.word_ok(t.anchor_sp - 8):
            raise _Refused(WalkCode.BAD_SP, f"anchor pc 0 and [anchor sp {t.anchor_sp:#x} - 8] "
                                            f"is no aligned stack word")
        pc = mem.word(t.anchor_sp - 8)
    return Physical(t.anchor_sp, t.anchor_fp, pc)


def _trace_kind(case: Case) -> int:
    return int(vm.TraceKind.CPP if case.thread.state == ThreadState.NOT_JAVA
               else vm.TraceKind.JAVA)


def _run(case: Case, options: int, handler: Handler, start: Physical) -> int:
    handler(SpecIterator(_Memory(case), options, start))
    return _trace_kind(case)


def run_with_iterator(case: Case, context: Physical | None, options: int,
                      handler: Handler | None) -> int:
    """ASGST_RunWithIterator(ucontext or NULL, options, handler): trace kind or error."""
    return _start(case, options, handler, lambda: _ucontext_start(case, context))[0]


def run_with_iterator_from_frame(case: Case, start: Physical, options: int,
                                 handler: Handler | None) -> int:
    """ASGST_RunWithIteratorFromFrame(sp, fp, pc, options, handler)."""
    return _start(case, options, handler, lambda: start)[0]


def _ucontext_start(case: Case, context: Physical | None) -> Physical:
    if case.thread.state in _ANCHORED:
        return _anchor_frame(case)  # ucontext ignored; C frames above the anchor not reported
    if context is None:
        raise _Refused(WalkCode.BAD_ARGUMENT, "NULL ucontext for a thread whose registers "
                                              "are needed")
    return context


def _start(case: Case, options: int, handler: Handler | None,
           start: Callable[[], Physical]) -> tuple[int, str]:
    """§4.1 in order; (result, reason it was refused or "")."""
    if handler is None:
        return int(WalkCode.BAD_ARGUMENT), "NULL handler"
    try:
        _check_thread(case, options)
        frame = start()
    except _Refused as refused:
        return int(refused.code), refused.reason
    return _run(case, options, handler, frame), ""


class _Recorder:
    """The harness's handler: NextFrame until it returns <= 0, then ASGST_State (§5)."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.end_code = WalkCode.NO_FRAME.value
        self.steps: tuple[Step, ...] = ()
        self.reason = ""

    def __call__(self, it: SpecIterator) -> None:
        while True:
            code, frame = it.next_frame()
            if code != 1 or frame is None:
                break
            self.frames.append(frame)
            if len(self.frames) > MAX_RECORDED_FRAMES:
                raise AssertionError("the spec walked more frames than a harness records")
        if it.state_code() != code:
            raise AssertionError(f"State {it.state_code()} != end code {code}")
        self.end_code, self.steps, self.reason = code, tuple(it.steps), it.reason


def walk(case: Case, start: Physical | None = None, entry: int | None = None,
         options: int | None = None) -> WalkResult:
    """Walk the case as its WALK section (or the arguments) ask and record it (§5).

    When Run* refuses (result <= 0) there are no frames and end_code equals the result.
    """
    ctx = case.context
    frame = start if start is not None else Physical(ctx.sp, ctx.fp, ctx.pc)
    entry = case.walk.entry if entry is None else entry
    options = case.walk.options if options is None else options
    recorder = _Recorder()
    if entry == vm.WalkEntry.FROM_FRAME:
        result, why = _start(case, options, recorder, lambda: frame)
    else:
        context = None if entry == vm.WalkEntry.NULL_CONTEXT else frame
        result, why = _start(case, options, recorder, lambda: _ucontext_start(case, context))
    if result <= 0:
        return WalkResult(result, (), result, (), why)
    return WalkResult(result, tuple(recorder.frames), recorder.end_code, recorder.steps,
                      recorder.reason)


# ---- §4.5: thread state bits -----------------------------------------------------------------

_JVMTI_BITS = {
    ThreadState.NEW: 0x0,
    ThreadState.IN_JAVA: 0x5,
    ThreadState.IN_VM: 0x5,
    ThreadState.IN_TRANSITION: 0x5,
    ThreadState.IN_NATIVE: 0x400005,
    ThreadState.BLOCKED: 0x401,
    ThreadState.EXITING: 0x2,
}
JVMTI_SUSPENDED = 0x100000


def thread_state_bits(case: Case) -> int:
    """ASGST_ThreadState() of the case's thread."""
    t = case.thread
    if t.state == ThreadState.NOT_JAVA:
        return -1
    bits = _JVMTI_BITS[ThreadState(t.state)]
    return bits | JVMTI_SUSPENDED if t.flags & ThreadFlag.SUSPENDED else bits
