"""The iterator API as a state machine: the operations of the `api` harness (wf_api_fuzz.h) -
NextFrame, RewindIterator anywhere, State, GetMethodInfo / GetClassInfo on seen and arbitrary
handles with every buffer capacity, RunWithIteratorFromFrame from a walked frame, a nested
RunWithIterator, Capabilities, ThreadState - driven one rule at a time on the reference walker
through cffi and checked against the Python spec (walkfuzz.targets.minivm.spec) and the
case's method and class tables.

An iterator lives on the walker's stack inside its callback, so the walker runs in a thread
of its own (`WalkerThread`) whose callbacks serve one command at a time: each rule reaches the
open iterator from outside, and a nested walk is a callback inside a callback there."""

from __future__ import annotations

import queue
import threading
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from walkfuzz.core.native import load
from walkfuzz.targets.minivm import spec
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import format as C
from walkfuzz.targets.minivm.case import native as case_native

ffi, lib = load()
REF = lib.wf_walker_reference()
MAX_DEPTH = 3        # iterators open at once, as in the harness
NAME_CAP = 72        # largest buffer capacity tried (names are shorter and longer)
CANARY = 8           # bytes after a buffer no call may write
FILL = 0xA5
REPLY_TIMEOUT = 60   # seconds; the reference answers in microseconds
SEEN: Counter[str] = Counter()  # what the examples reached, checked after the run
# No ucontext from Python: the case's walk starts from its frame, or with a NULL context
# (walked from the anchor, or refused for a thread in Java); mostly the former, which walks.
ENTRIES = (vm.WalkEntry.FROM_FRAME, vm.WalkEntry.FROM_FRAME, vm.WalkEntry.NULL_CONTEXT)


class WalkerThread:
    """The reference walker in a thread: `run` starts a Run* call whose callback serves the
    commands given to `ask` until `ask("return")`; a Run* command inside it nests."""

    def __init__(self) -> None:
        self.commands: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self.replies: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self.handler = ffi.callback("void(ASGST_Iterator *, void *)", self._serve)
        self.thread: threading.Thread | None = None

    def start(self, command: tuple[Any, ...]) -> tuple[Any, ...]:
        self.thread = threading.Thread(target=lambda: self.replies.put(self._run(command)))
        self.thread.start()
        return self.reply()

    def ask(self, *command: Any) -> tuple[Any, ...]:
        self.commands.put(command)
        return self.reply()

    def reply(self) -> tuple[Any, ...]:
        return self.replies.get(timeout=REPLY_TIMEOUT)

    def _run(self, command: tuple[Any, ...]) -> tuple[Any, ...]:
        if command[0] == "from-frame":
            _, sp, fp, pc, options = command
            rc = REF.run_with_iterator_from_frame(ffi.cast("void *", sp), ffi.cast("void *", fp),
                                                  ffi.cast("void *", pc), options, self.handler,
                                                  ffi.NULL)
        else:
            rc = REF.run_with_iterator(ffi.NULL, command[1], self.handler, ffi.NULL)
        return ("ran", rc)

    def _serve(self, it: Any, _arg: Any) -> None:
        self.replies.put(("open",))
        while True:
            command = self.commands.get()
            if command[0] == "return":
                self.replies.put(("closed",))
                return
            self.replies.put(self._do(it, command))

    def _do(self, it: Any, command: tuple[Any, ...]) -> tuple[Any, ...]:
        if command[0] == "next":
            frame = ffi.new("ASGST_Frame *")
            ffi.memmove(frame, bytes([FILL]) * ffi.sizeof("ASGST_Frame"),
                        ffi.sizeof("ASGST_Frame"))
            before = bytes(ffi.buffer(frame))
            rc = REF.next_frame(it, frame)
            untouched = bytes(ffi.buffer(frame)) == before
            return (rc, case_native.frame_of(ffi, frame) if rc == 1 else untouched)
        if command[0] == "rewind":
            REF.rewind_iterator(it)
            return ("rewound",)
        if command[0] == "state":
            return (REF.state(it),)
        return self._run(command)  # a walk inside this callback: replies "open" first


def empty_buffer(capacity: int) -> Any:
    return ffi.new("char[]", bytes([FILL]) * (capacity + CANARY))


def check_name(buffer: Any, capacity: int, length: int, want: bytes) -> None:
    """The full length back; the first capacity-1 bytes and a NUL; nothing at or past it."""
    raw = bytes(ffi.buffer(buffer, capacity + CANARY))
    assert raw[capacity:] == bytes([FILL]) * CANARY, f"written past capacity {capacity}"
    assert length == len(want)
    if capacity > 0:
        kept = want[:capacity - 1]
        assert raw[:len(kept) + 1] == kept + b"\0", (raw, want, capacity)


CAPACITIES = st.one_of(st.sampled_from(("fit", "short", "zero")), st.integers(0, NAME_CAP))


def capacity_of(choice: int | str, length: int) -> int:
    named = {"fit": length + 1, "short": length, "zero": 0}
    return min(named[choice] if isinstance(choice, str) else choice, NAME_CAP)


ARBITRARY = st.one_of(st.just(0), st.integers(vm.METHODS, vm.METHODS + 0xFFFF),
                      st.integers(vm.CLASSES, vm.CLASSES + 0xFFFF),
                      st.integers(0, 2**47 - 1).map(lambda a: a & ~7))


def generated(seed: int, entry: int, consistent: int) -> C.Case:
    return dec.decode(case_native.generate(seed=seed, entry=entry, max_frames=8,
                                           consistent=consistent))


def inlining_seeds() -> list[int]:
    """Generator seeds whose case walks through inlined scopes (about a third of them), so
    that examples stand between scopes often enough to rewind there."""
    return [seed for seed in range(1, 200)
            if any(f.type == JAVA_INLINED for f in generated(seed, vm.WalkEntry.FROM_FRAME, 1)
                   .truth.frames)]  # type: ignore[union-attr]


JAVA_INLINED = 2  # ASGST_FRAME_JAVA_INLINED
INLINING_SEEDS = inlining_seeds()


def between_scopes(it: spec.SpecIterator) -> bool:
    """The walk has given some but not all scopes of a compiled frame."""
    return it.state == 1 and it.decoded is not None and 0 < it.emitted < len(it.decoded.frames)


class ApiMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.walker = WalkerThread()
        self.levels: list[tuple[spec.SpecIterator, int]] = []  # open iterators, innermost last
        self.methods: set[int] = set()
        self.classes: set[int] = set()
        self.caps: int | None = None

    @initialize(seed=st.one_of(st.integers(1, 5000), st.sampled_from(INLINING_SEEDS)),
                entry=st.sampled_from(ENTRIES), consistent=st.booleans())
    def generate(self, seed: int, entry: int, consistent: bool) -> None:
        # a seed, not bytes: the generator's seeded stream lays out every frame kind (short
        # byte strings, which Hypothesis favours, give plain layouts without inlining)
        self.case: C.Case = generated(seed, entry, int(consistent))
        ctx = self.case.context
        if entry == vm.WalkEntry.FROM_FRAME:
            self.top_command: tuple[Any, ...] = ("from-frame", ctx.sp, ctx.fp, ctx.pc,
                                                 self.case.walk.options)
        else:
            self.top_command = ("null-context", self.case.walk.options)
        self.open_walk(self.top_command, top=True)

    # ---- walks ---------------------------------------------------------------------------

    def spec_walk(self, command: tuple[Any, ...]) -> tuple[int, spec.SpecIterator | None]:
        got: list[spec.SpecIterator] = []
        if command[0] == "from-frame":
            _, sp, fp, pc, options = command
            rc = spec.run_with_iterator_from_frame(self.case, spec.Physical(sp, fp, pc), options,
                                                   got.append)
        else:
            rc = spec.run_with_iterator(self.case, None, command[1], got.append)
        return rc, got[0] if got else None

    def open_walk(self, command: tuple[Any, ...], top: bool = False) -> None:
        want_rc, it = self.spec_walk(command)
        reply = self.walker.start(command) if top else self.walker.ask(*command)
        if it is None:
            assert reply == ("ran", want_rc), (command, reply, want_rc)
            SEEN["refused"] += 1
            return
        assert reply == ("open",), (command, reply, want_rc)
        self.levels.append((it, want_rc))
        SEEN["nested" if len(self.levels) > 1 else "walk"] += 1

    @precondition(lambda self: 0 < len(self.levels) < MAX_DEPTH)
    @rule(data=st.data())
    def from_frame(self, data: st.DataObject) -> None:
        it = self.levels[-1][0]
        frames = self.spec_walk_frames(it)
        if not frames:
            return
        f = data.draw(st.sampled_from(frames))
        options = data.draw(st.sampled_from((self.case.walk.options, 0, 1, 2, 3)))
        self.open_walk(("from-frame", f.sp, f.fp, f.pc, options))

    def spec_walk_frames(self, it: spec.SpecIterator) -> list[C.Frame]:
        """Every frame a walk of `it`'s start gives (a copy walks: `it` stays where it is)."""
        copy = spec.SpecIterator(it.memory, it.options, it.start)
        frames = []
        while (step := copy.next_frame())[0] == 1 and step[1] is not None:
            frames.append(step[1])
        return frames

    @precondition(lambda self: 0 < len(self.levels) < MAX_DEPTH)
    @rule()
    def nested(self) -> None:
        self.open_walk(self.top_command)

    @precondition(lambda self: len(self.levels) > 0)
    @rule()
    def leave(self) -> None:
        _, want_rc = self.levels.pop()
        assert self.walker.ask("return") == ("closed",)
        assert self.walker.reply() == ("ran", want_rc)
        if not self.levels and self.walker.thread is not None:
            self.walker.thread.join()

    def teardown(self) -> None:
        while self.levels:
            self.leave()

    # ---- the iterator ----------------------------------------------------------------------

    @precondition(lambda self: len(self.levels) > 0)
    @rule(times=st.integers(1, 12))
    def next_frame(self, times: int, into_scopes: bool = False) -> None:
        """NextFrame `times` times, or (into_scopes) until the walk stands between the inlined
        scopes of a compiled frame or ends."""
        it = self.levels[-1][0]
        for _ in range(times if not into_scopes else 200):
            if into_scopes and between_scopes(it):
                break
            code, frame = it.next_frame()
            got = self.walker.ask("next")
            if code == 1:
                assert got == (1, frame), it.reason
                if frame is not None and frame.method:
                    self.methods.add(frame.method)
            else:
                assert got == (code, True), (got, code, it.reason)  # sticky, frame untouched
                SEEN["past the end"] += 1

    @precondition(lambda self: len(self.levels) > 0)
    @rule(into_scopes=st.booleans())
    def rewind(self, into_scopes: bool) -> None:
        """RewindIterator where the walk is, or (into_scopes) once it stands between the
        inlined scopes of a compiled frame, where a rewind must forget the scopes left."""
        if into_scopes:
            self.next_frame(1, into_scopes=True)
        it = self.levels[-1][0]
        if between_scopes(it):
            SEEN["rewind between scopes"] += 1
        it.rewind()
        assert self.walker.ask("rewind") == ("rewound",)

    @precondition(lambda self: len(self.levels) > 0)
    @rule()
    def state(self) -> None:
        assert self.walker.ask("state") == (self.levels[-1][0].state_code(),)

    # ---- info calls and process-wide calls ---------------------------------------------------

    @rule(data=st.data(), caps=st.tuples(CAPACITIES, CAPACITIES, CAPACITIES))
    def method_info(self, data: st.DataObject, caps: tuple[int | str, ...]) -> None:
        seen = sorted(self.methods)
        handle = data.draw(st.sampled_from(seen) | ARBITRARY if seen else ARBITRARY)
        index = vm.method_index_of(handle, len(self.case.methods))
        m = None if index is None else self.case.methods[index]
        want = (b"", b"", b"") if m is None else (m.name, m.signature, m.generic_signature)
        sizes = [capacity_of(c, len(w)) for c, w in zip(caps, want, strict=True)]
        buffers = [empty_buffer(n) for n in sizes]
        info = ffi.new("ASGST_MethodInfo *", {
            "method_name": buffers[0], "method_name_length": sizes[0],
            "signature": buffers[1], "signature_length": sizes[1],
            "generic_signature": buffers[2], "generic_signature_length": sizes[2]})
        REF.get_method_info(ffi.cast("ASGST_Method", handle), info)
        lengths = (info.method_name_length, info.signature_length, info.generic_signature_length)
        for buffer, size, length, w in zip(buffers, sizes, lengths, want, strict=True):
            check_name(buffer, size, length, w)
        klass = 0 if m is None else vm.class_handle(m.class_index)
        assert (info.modifiers, int(ffi.cast("uintptr_t", info.klass))) == (
            0 if m is None else m.modifiers, klass)
        if klass:
            self.classes.add(klass)
        SEEN["method info" if m is not None else "invalid method handle"] += 1

    @rule(data=st.data(), caps=st.tuples(CAPACITIES, CAPACITIES))
    def class_info(self, data: st.DataObject, caps: tuple[int | str, ...]) -> None:
        seen = sorted(self.classes)
        handle = data.draw(st.sampled_from(seen) | ARBITRARY if seen else ARBITRARY)
        offset = handle - vm.CLASSES
        valid = offset >= 0 and offset % vm.CLASS_STRIDE == 0 and (
            offset // vm.CLASS_STRIDE < len(self.case.classes))
        k = self.case.classes[offset // vm.CLASS_STRIDE] if valid else None
        want = (b"", b"") if k is None else (k.name, k.generic_name)
        sizes = [capacity_of(c, len(w)) for c, w in zip(caps, want, strict=True)]
        buffers = [empty_buffer(n) for n in sizes]
        info = ffi.new("ASGST_ClassInfo *", {
            "class_name": buffers[0], "class_name_length": sizes[0],
            "generic_class_name": buffers[1], "generic_class_name_length": sizes[1]})
        REF.get_class_info(ffi.cast("ASGST_Class", handle), info)
        lengths = (info.class_name_length, info.generic_class_name_length)
        for buffer, size, length, w in zip(buffers, sizes, lengths, want, strict=True):
            check_name(buffer, size, length, w)
        assert info.modifiers == (0 if k is None else k.modifiers)
        SEEN["class info" if k is not None else "invalid class handle"] += 1

    @rule()
    def thread_state(self) -> None:
        assert REF.thread_state() == spec.thread_state_bits(self.case)

    @rule()
    def capabilities(self) -> None:
        caps = REF.capabilities()
        assert caps == (self.caps if self.caps is not None else caps)
        assert caps == lib.ASGST_REGISTER_QUEUE  # the core links the queue API in
        self.caps = caps


def test_the_iterator_api_behaves_as_the_spec_says() -> None:
    SEEN.clear()
    run_state_machine_as_test(ApiMachine, settings=settings(
        max_examples=80, stateful_step_count=40, deadline=None, derandomize=True,
        database=None, suppress_health_check=[HealthCheck.too_slow]))
    missing = [what for what in ("walk", "nested", "refused", "past the end",
                                 "rewind between scopes", "method info", "invalid method handle",
                                 "class info", "invalid class handle") if SEEN[what] == 0]
    assert missing == [], f"no example reached {missing}: {dict(SEEN)}"
