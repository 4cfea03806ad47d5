"""The native safepoint queues and the Python model (fuzz/targets/minivm/queue/model.py) run the
same operation sequences and must log exactly the same events: op results, size info after every op,
every handler call with the frames its iterator walked, and what is left queued.

A Hypothesis state machine builds the sequences over generated cases (their true trace is the
model's stack), and the test then checks that the runs covered full queues, resizing during and
between safepoints, arg modification and compression, deregistering with elements pending,
start/end handlers with and without iterators, and elements whose frame was gone.
"""

from __future__ import annotations

from functools import cache

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.format import Case
from walkfuzz.targets.minivm.case.queue_program import Misuse, Opcode, QueueOp, registers
from walkfuzz.targets.minivm.queue.cases import base_case, physical_frames, with_program
from walkfuzz.targets.minivm.queue.model import Event, EventKind, QueueModel, TruthOracle
from walkfuzz.targets.minivm.queue.run import run_case

STATES = (vm.ThreadState.IN_JAVA, vm.ThreadState.IN_VM, vm.ThreadState.IN_NATIVE,
          vm.ThreadState.BLOCKED)
FEATURES = ("full", "resize-between", "resize-during", "arg-modified", "compressed",
            "deregister-pending", "start-iterator", "start-plain", "end-iterator", "end-plain",
            "element-walked", "gone", "enqueue-in-safepoint", "pending-at-end", "pool-filled",
            "foreign-handle", "own-context-enqueued")
seen: set[str] = set()
# THREAD replays a live capture's safepoint; the model answers from a true trace, which a
# thread change would not be any more (it refuses THREAD: queue_model.QueueModel._op).
MODELLED_OPS = [op for op in Opcode if op != Opcode.THREAD]


@cache
def _base(seed: int, state: int, options: int) -> tuple[bytes, Case]:
    """The first case from `seed` on whose true trace has frames to enqueue."""
    for s in range(seed, seed + 100):
        data, case = base_case(s, state, options, min_frames=3, max_frames=10)
        if case.truth is not None and case.truth.frames and case.truth.end_code == 0:
            return data, case
    raise AssertionError(f"no walkable case from seed {seed} in state {state}")


def _first_difference(native: list[Event], model: list[Event]) -> str:
    for i, (a, b) in enumerate(zip(native, model, strict=False)):
        if a != b:
            return f"event {i}: native {a} != model {b}"
    return f"native logged {len(native)} events, the model {len(model)}"


def _features(ops: list[QueueOp], log: list[Event]) -> set[str]:
    found = set()
    last_size: dict[int, int] = {}
    resized_between = False
    for e in log:
        if e.kind == EventKind.OP:
            op = ops[e.op]
            if op.code in (Opcode.ENQUEUE, Opcode.COMPRESS) and e.code == -6:
                found.add("full")
            if op.code == Opcode.ENQUEUE and e.code == -7:
                found.add("enqueue-in-safepoint")
            if op.code == Opcode.FILL and e.code > 0:
                found.add("pool-filled")
            if op.code == Opcode.ALIAS and any(o.queue == e.queue and o.code != Opcode.ALIAS
                                               for o in ops[e.op + 1:]):
                found.add("foreign-handle")
            if op.code == Opcode.MISUSE and op.which == Misuse.NO_CONTEXT and e.code == 1:
                found.add("own-context-enqueued")
            if op.code == Opcode.SET_ARG and e.code == 1:
                found.add("arg-modified")
            if op.code == Opcode.COMPRESS and e.code == 2:
                found.add("compressed")
            if op.code == Opcode.DEREGISTER and e.code == 1 and last_size.get(e.queue, 0) > 0:
                found.add("deregister-pending")
            if op.code == Opcode.RESIZE and e.capacity > 0 and op.n != e.capacity:
                inside = any(o.code == Opcode.SAFEPOINT and i < e.op <= i + o.inner_count
                             for i, o in enumerate(ops))
                if inside:
                    found.add("resize-during")
                else:
                    resized_between = True
            if op.code == Opcode.SAFEPOINT and e.code >= 0 and resized_between:
                found.add("resize-between")
            if e.queue >= 0:
                last_size[e.queue] = e.size
        elif e.kind in (EventKind.START, EventKind.END):
            name = "start" if e.kind == EventKind.START else "end"
            found.add(f"{name}-plain" if e.code == 2 else f"{name}-iterator")
        elif e.kind == EventKind.ELEMENT:
            found.add("gone" if e.code == -24 else "element-walked")
        elif e.kind == EventKind.PENDING:
            found.add("pending-at-end")
    return found


queues = st.integers(0, 4)
args = st.integers(0, 2**64 - 1)


class QueueMachine(RuleBasedStateMachine):
    @initialize(seed=st.integers(1, 6), state=st.sampled_from(STATES),
                options=st.sampled_from((0, 1, 2, 3)), fill_first=st.booleans())
    def pick_case(self, seed: int, state: int, options: int, fill_first: bool) -> None:
        self.base, self.case = _base(seed, state, options)
        self.options = self.case.walk.options
        self.frames = physical_frames(self.case)
        assert self.case.truth is not None
        self.interpreted = [f for f in self.case.truth.frames
                            if f.type == vm.FrameType.JAVA and f.comp_level == 0]
        # A FILL after a THREAD_EXIT takes nothing, and the program keeps every op drawn:
        # one first takes the whole pool.
        self.ops: list[QueueOp] = [QueueOp(Opcode.FILL)] if fill_first else []

    def _frame(self, index: int) -> dict[str, int]:
        pc, sp, fp = self.frames[index % len(self.frames)]
        return {"pc": pc, "sp": sp, "fp": fp}

    def _op(self, data: st.DataObject, inner: bool) -> QueueOp:
        """One op drawn by kind (inner: may run inside a handler)."""
        code = data.draw(st.sampled_from(MODELLED_OPS))
        q = data.draw(queues)
        if code == Opcode.REGISTER:
            return QueueOp(code, n=data.draw(st.integers(-1, 4)), options=self.options)
        if code in (Opcode.ENQUEUE, Opcode.COMPRESS):
            return QueueOp(code, queue=q, **self._frame(data.draw(st.integers(0, 63))),
                           arg=data.draw(args) if code == Opcode.ENQUEUE else 0)
        if code == Opcode.SET_ARG:
            return QueueOp(code, queue=q, n=data.draw(st.integers(-4, 4)), arg=data.draw(args))
        if code == Opcode.RESIZE:
            return QueueOp(code, queue=q, n=data.draw(st.integers(-1, 5)))
        if code == Opcode.HANDLER:
            return QueueOp(code, queue=q, which=data.draw(st.integers(0, 1)),
                           mode=data.draw(st.integers(0, 2)), options=self.options)
        if code == Opcode.SAFEPOINT:
            inner_ops = [] if inner else data.draw(st.lists(st.just(0), max_size=3))
            return QueueOp(code, **self._frame(data.draw(st.integers(0, 63))),
                           inner_at=data.draw(st.integers(0, 3)), inner_count=len(inner_ops))
        if code == Opcode.THREAD_EXIT and data.draw(st.integers(0, 7)) != 0:
            return QueueOp(Opcode.SIZE_INFO, queue=q)      # exits stay rare
        if code == Opcode.POKE:
            return self._poke(data) or QueueOp(Opcode.SIZE_INFO, queue=q)
        if code == Opcode.ALIAS:
            return QueueOp(code, queue=q, n=data.draw(st.sampled_from(
                (1, 7, -3, (1 << 20) + 5, -(1 << 20) - 1))))
        if code == Opcode.MISUSE:
            return QueueOp(code, which=data.draw(st.sampled_from(list(Misuse))), queue=q)
        return QueueOp(code, queue=q)

    def _poke(self, data: st.DataObject) -> QueueOp | None:
        """An interpreted frame moves on: its bcp slot gets another valid bci."""
        if not self.interpreted:
            return None
        f = data.draw(st.sampled_from(self.interpreted))
        index = (f.method - vm.METHODS) // vm.METHOD_STRIDE
        size = self.case.methods[index].code_size
        bcp = vm.BYTECODE + vm.BYTECODE_STRIDE * index + data.draw(st.integers(0, size - 1))
        return QueueOp(Opcode.POKE, pc=f.fp - 16, arg=bcp)

    @rule(data=st.data())
    def any_op(self, data: st.DataObject) -> None:
        op = self._op(data, inner=False)
        self.ops.append(op)
        for _ in range(op.inner_count if op.code == Opcode.SAFEPOINT else 0):
            self.ops.append(self._op(data, inner=True))
        self._check()

    @rule(q=queues, index=st.integers(0, 63), arg=args, times=st.integers(1, 5))
    def burst(self, q: int, index: int, arg: int, times: int) -> None:
        """Signals in quick succession: the queue fills up."""
        self.ops += [QueueOp(Opcode.ENQUEUE, queue=q, **self._frame(index), arg=(arg + i) % 2**64)
                     for i in range(times)]
        self._check()

    @rule(size=st.integers(0, 3), mode=st.integers(1, 2))
    def register_with_handlers(self, size: int, mode: int) -> None:
        q = sum(registers(op) for op in self.ops)
        self.ops += [QueueOp(Opcode.REGISTER, n=size, options=self.options),
                     QueueOp(Opcode.HANDLER, queue=q, which=0, mode=mode, options=self.options),
                     QueueOp(Opcode.HANDLER, queue=q, which=1, mode=3 - mode,
                             options=self.options)]
        self._check()

    @rule(size=st.integers(0, 2))
    def enqueue_without_context(self, size: int) -> None:
        """Enqueue(queue, NULL): a thread not in Java is walked from its anchor."""
        q = sum(registers(op) for op in self.ops)
        self.ops += [QueueOp(Opcode.REGISTER, n=size, options=self.options),
                     QueueOp(Opcode.MISUSE, which=Misuse.NO_CONTEXT, queue=q)]
        self._check()

    @rule(q=queues, index=st.integers(0, 63))
    def compress_repeat(self, q: int, index: int) -> None:
        """The compression pattern: the same top frame twice in a row bumps the arg."""
        frame = self._frame(index)
        self.ops += [QueueOp(Opcode.ENQUEUE, queue=q, **frame, arg=1),
                     QueueOp(Opcode.COMPRESS, queue=q, **frame)]
        self._check()

    @rule(q=queues, index=st.integers(0, 63), size=st.integers(0, 4), arg=args)
    def safepoint_with_signals(self, q: int, index: int, size: int, arg: int) -> None:
        """A signal and a resize while the handler of the first element runs."""
        frame = self._frame(index)
        self.ops += [QueueOp(Opcode.ENQUEUE, queue=q, **frame, arg=arg),
                     QueueOp(Opcode.SAFEPOINT, **self._frame(0), inner_at=0, inner_count=3),
                     QueueOp(Opcode.ENQUEUE, queue=q, **frame, arg=arg),
                     QueueOp(Opcode.RESIZE, queue=q, n=size),
                     QueueOp(Opcode.SET_ARG, queue=q, n=0, arg=arg)]
        self._check()

    @rule(q=queues, size=st.integers(0, 5))
    def resize_between_safepoints(self, q: int, size: int) -> None:
        self.ops += [QueueOp(Opcode.RESIZE, queue=q, n=size),
                     QueueOp(Opcode.SAFEPOINT, **self._frame(0)),
                     QueueOp(Opcode.SIZE_INFO, queue=q)]
        self._check()

    @rule(q=queues, index=st.integers(0, 63), arg=args)
    def deregister_pending(self, q: int, index: int, arg: int) -> None:
        self.ops += [QueueOp(Opcode.ENQUEUE, queue=q, **self._frame(index), arg=arg),
                     QueueOp(Opcode.DEREGISTER, queue=q)]
        self._check()

    @rule(q=queues, index=st.integers(0, 63), arg=args)
    def poll_in_a_caller(self, q: int, index: int, arg: int) -> None:
        """The thread returned before its poll: the safepoint is in the outermost frame."""
        self.ops += [QueueOp(Opcode.ENQUEUE, queue=q, **self._frame(index), arg=arg),
                     QueueOp(Opcode.SAFEPOINT, **self._frame(len(self.frames) - 1))]
        self._check()

    def _check(self) -> None:
        native = run_case(with_program(self.base, self.ops))
        model = QueueModel(TruthOracle(self.case)).run(self.ops)
        assert native.status == 0
        assert native.violations == 0, native.violation
        assert native.events == model, _first_difference(native.events, model)
        seen.update(_features(self.ops, model))


def test_native_queues_match_the_model() -> None:
    run_state_machine_as_test(QueueMachine, settings=settings(
        max_examples=60, stateful_step_count=30, deadline=None, derandomize=True,
        database=None, suppress_health_check=[HealthCheck.too_slow]))
    missing = [f for f in FEATURES if f not in seen]
    assert not missing, f"the state machine never reached: {missing}"
