"""`walkfuzz minimize`: the smallest case file that still shows the same finding.

The predicate is "replays (bytes harness, same walker) to the same signature"; a live stress
capture (harness `stress`, a case with EXPECTED) replays against the live oracle instead, and
keeps its EXPECTED section while everything else shrinks — and, so that the expected trace
stays the truth of what is left, the reference walker must still walk it as expected. Steps:

 1. Materialize: an input of a generator harness (registers, layouts) becomes the case file of
    what it ran as (the generated, mutated layout the hot path mapped), so that every later
    step edits a case, not generator choices. If the case does not reproduce the signature
    (it should; the hot path maps exactly what it encodes), the original bytes are shrunk.
 2. Structure-aware passes over the decoded case, repeated until none makes progress:
    drop the truth, drop queue operations, drop blobs, pc descriptors and inline scopes, drop
    trailing methods and classes (indices of the rest stay valid), empty every name, cut the
    stack image from its low end, zero stack words, zero registers and anchor fields.
 3. Bytes: delta debugging (ddmin: remove chunks of halving size) on the encoded case.
Every candidate is replayed; only candidates that keep the signature are kept. A budget in
seconds bounds the whole run; the best case so far is the result, and never anything larger
than the input: when no case got below the input's size (a generated case is usually larger
than its generator bytes), the input's bytes, shrunk by ddmin if the budget allows, are.
"""

from __future__ import annotations

import dataclasses
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from walkfuzz.core.errors import UserError
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import encode as enc
from walkfuzz.targets.minivm.case import format as C
from walkfuzz.targets.minivm.case.status import CaseDecodeError
from walkfuzz.targets.minivm.inputs import GENERATOR_HARNESSES, LIVE_HARNESS
from walkfuzz.targets.minivm.replayer import MinivmReplayer
from walkfuzz.targets.protocol import MINIMIZE_BUDGET_S

DEFAULT_BUDGET = MINIMIZE_BUDGET_S
MINIMIZE_HANG_NS = 20_000_000  # a minimizing replay of a hang needs no more than this
ZERO_WORDS_MAX = 512  # zeroing words keeps the size; only worth its replays on small stacks
QUEUE_SECTION = 9
T = TypeVar("T")


class MinimizeError(UserError):
    """The input does not reproduce a finding, so there is nothing to keep while shrinking."""


@dataclass
class Result:
    data: bytes
    harness: str
    signature: str
    original_size: int
    materialized_size: int
    tests: int
    seconds: float
    passes: list[str]


class Oracle:
    """Replays candidates and says whether they keep the signature; counts and times them."""

    def __init__(self, replayer: MinivmReplayer, walker: str, signature: str,
                 deadline: float, case_harness: str = "bytes") -> None:
        self.replayer, self.walker, self.signature = replayer, walker, signature
        self.deadline = deadline
        self.case_harness = case_harness  # how a candidate case file replays
        # A live capture's EXPECTED is only the truth of a case the reference still walks so.
        self.reference_clean = case_harness == LIVE_HARNESS and walker != "reference"
        self.tests = 0

    def expired(self) -> bool:
        return time.monotonic() > self.deadline

    def keeps(self, data: bytes, harness: str | None = None) -> bool:
        self.tests += 1
        try:
            harness = harness or self.case_harness
            replay = self.replayer.run_as(data, harness, self.walker, "<candidate>")
            if replay.finding is None or replay.finding.signature != self.signature:
                return False
            return not (self.reference_clean and harness == LIVE_HARNESS and
                        self.replayer.run_as(data, harness, "reference", "<candidate>").finding)
        except UserError:
            return False


# ---- sections of a case file -------------------------------------------------------------------


def split_queue(data: bytes) -> tuple[bytes, bytes]:
    """(the case without its queue section, the queue section's whole bytes or b'')."""
    offset, kept = C.HEADER_SIZE, [data[:C.HEADER_SIZE]]
    queue = b""
    while offset + C.SECTION_HEADER_SIZE <= len(data):
        stype, _, length = struct.unpack_from("<HHI", data, offset)
        end = offset + C.SECTION_HEADER_SIZE + length
        if stype == QUEUE_SECTION:
            queue = data[offset:end]
        else:
            kept.append(data[offset:end])
        offset = end
    return b"".join(kept), queue


def decode_without_queue(without_queue: bytes, whole: bytes) -> C.Case | None:
    """The case without its queue section (None: no case). An EXPECTED section about the queue
    program does not decode without it: then the whole case, its queue dropped."""
    for data in (without_queue, whole):
        try:
            return dataclasses.replace(dec.decode(data), queue=None)
        except CaseDecodeError:
            continue
    return None


def queue_ops(queue: bytes, case: C.Case) -> tuple[Any, ...] | None:
    if not queue:
        return None
    from walkfuzz.targets.minivm.case.queue_program import decode_payload

    try:
        ops: tuple[Any, ...] = decode_payload(queue[C.SECTION_HEADER_SIZE:], case.stack_lo,
                                              case.stack_hi)
    except UserError:
        return None
    return ops


def encode_queue(ops: Sequence[Any]) -> bytes:
    from walkfuzz.targets.minivm.case.queue_program import queue_section

    return queue_section(list(ops))


# ---- generic shrinking ---------------------------------------------------------------------------


def ddmin(items: list[T], keeps: Callable[[list[T]], bool], expired: Callable[[], bool]) -> list[T]:
    """Delta debugging: remove chunks of halving size while `keeps` holds for the rest."""
    chunk = max(1, len(items) // 2)
    while chunk >= 1 and items and not expired():
        i, progressed = 0, False
        while i < len(items) and not expired():
            candidate = items[:i] + items[i + chunk:]
            if keeps(candidate):
                items, progressed = candidate, True
            else:
                i += chunk
        if chunk == 1 and not progressed:
            break
        chunk = max(1, chunk // 2) if not progressed or chunk > 1 else 1
    return items


class CaseShrinker:
    """Structure-aware passes over (case, queue ops) under an Oracle."""

    def __init__(self, oracle: Oracle, case: C.Case, ops: tuple[Any, ...] | None,
                 queue: bytes) -> None:
        self.oracle, self.case, self.ops, self.raw_queue = oracle, case, ops, queue
        self.passes: list[str] = []

    def encode(self, case: C.Case, ops: Sequence[Any] | None = None) -> bytes:
        ops = self.ops if ops is None else ops
        queue = encode_queue(ops) if ops is not None else self.raw_queue
        return enc.insert_section(enc.encode(case), queue) if queue else enc.encode(case)

    def size(self) -> int:
        return len(self.encode(self.case))

    def attempt(self, name: str, case: C.Case, ops: Sequence[Any] | None = None) -> bool:
        if self.oracle.expired() or (len(self.encode(case, ops)) >= self.size() and ops is None):
            return False
        if self.oracle.keeps(self.encode(case, ops)):
            self.case = case
            if ops is not None:
                self.ops = tuple(ops)
            if name not in self.passes:
                self.passes.append(name)
            return True
        return False

    def replace(self, **changes: Any) -> C.Case:
        return dataclasses.replace(self.case, **changes)

    def shrink_list(self, name: str, field: str) -> None:
        def keeps(items: list[Any]) -> bool:
            return self.attempt(name, self.replace(**{field: tuple(items)}))

        ddmin(list(getattr(self.case, field)), keeps, self.oracle.expired)

    def run(self) -> None:
        while not self.oracle.expired():
            before = self.size()
            self.one_round()
            if self.size() >= before:
                break

    def one_round(self) -> None:
        if self.case.truth is not None:
            self.attempt("drop-truth", self.replace(truth=None))
        if self.ops:
            ddmin(list(self.ops), lambda ops: self.attempt("drop-queue-ops", self.case, ops),
                  self.oracle.expired)
        self.cut_stack_top()
        self.cut_stack()
        self.shrink_list("drop-blobs", "blobs")
        self.shrink_list("drop-code-bytes", "code")
        self.shrink_descs()
        self.drop_unreferenced("drop-methods", "methods", self.without_methods)
        self.drop_unreferenced("drop-classes", "classes", self.without_classes)
        self.empty_names()
        self.zero_registers()
        self.zero_stack_words()

    def shrink_descs(self) -> None:
        for i in range(len(self.case.blobs)):
            if i >= len(self.case.blobs) or not self.case.blobs[i].descs:
                continue

            def keeps(descs: list[C.PcDesc], i: int = i) -> bool:
                blobs = list(self.case.blobs)
                blobs[i] = dataclasses.replace(blobs[i], descs=tuple(descs))
                return self.attempt("drop-pc-descs", self.replace(blobs=tuple(blobs)))

            ddmin(list(self.case.blobs[i].descs), keeps, self.oracle.expired)

    def drop_unreferenced(self, name: str, field: str,
                          without: Callable[[C.Case, list[int]], C.Case | None]) -> None:
        """ddmin over which entries of a table stay; the rest are dropped and every index and
        handle that refers to the table is renumbered (always from the case at the start of
        the pass, which the kept indices refer to)."""
        base = self.case

        def keeps(kept: list[int]) -> bool:
            candidate = without(base, kept)
            return candidate is not None and self.attempt(name, candidate)

        ddmin(list(range(len(getattr(self.case, field)))), keeps, self.oracle.expired)

    @staticmethod
    def without_methods(case: C.Case, kept: list[int]) -> C.Case | None:
        """The case with only methods `kept` (renumbered in order), or None if a blob or scope
        refers to a dropped one. Stack words holding a method handle or a bcp move along."""
        new = {old: i for i, old in enumerate(kept)}

        def index(old: int) -> int | None:
            return old if old == vm.NO_METHOD else new.get(old)

        blobs = []
        for b in case.blobs:
            descs = []
            for d in b.descs:
                scopes = [C.Scope(index(s.method_index), s.bci) for s in d.scopes]  # type: ignore[arg-type]
                if any(s.method_index is None for s in scopes):
                    return None
                descs.append(dataclasses.replace(d, scopes=tuple(scopes)))
            method = index(b.method_index)
            if method is None:
                return None
            blobs.append(dataclasses.replace(b, method_index=method, descs=tuple(descs)))

        def move(v: int) -> int:
            old = vm.method_index_of(v, len(case.methods))
            if old is not None:
                return vm.method_handle(new[old]) if old in new else v
            offset = v - vm.BYTECODE
            old = offset // vm.BYTECODE_STRIDE if offset >= 0 else -1
            if 0 <= old < len(case.methods) and old in new:
                return vm.bytecode_base(new[old]) + offset % vm.BYTECODE_STRIDE
            return v

        words = [move(int.from_bytes(case.stack[i:i + 8], "little"))
                 for i in range(0, len(case.stack), 8)]
        truth = case.truth and dataclasses.replace(case.truth, frames=tuple(
            dataclasses.replace(f, method=move(f.method)) for f in case.truth.frames))
        return dataclasses.replace(
            case, methods=tuple(case.methods[i] for i in kept), blobs=tuple(blobs),
            stack=b"".join(w.to_bytes(8, "little") for w in words), truth=truth)

    @staticmethod
    def without_classes(case: C.Case, kept: list[int]) -> C.Case | None:
        """The case with only classes `kept`, or None if a method's class is dropped."""
        new = {old: i for i, old in enumerate(kept)}
        if any(m.class_index not in new for m in case.methods):
            return None
        methods = tuple(dataclasses.replace(m, class_index=new[m.class_index])
                        for m in case.methods)
        return dataclasses.replace(case, classes=tuple(case.classes[i] for i in kept),
                                   methods=methods)

    def empty_names(self) -> None:
        classes = tuple(dataclasses.replace(c, name=b"C", generic_name=b"")
                        for c in self.case.classes)
        methods = tuple(dataclasses.replace(m, name=b"m", signature=b"()V", generic_signature=b"")
                        for m in self.case.methods)
        self.attempt("empty-names", self.replace(classes=classes, methods=methods))

    def cut_stack(self) -> None:
        """Drop words from the low end of the image (its high addresses stay where they are):
        binary search for the most words that can go."""
        stack = self.case.stack
        lo, hi = 0, len(stack) // 8 - 1  # lo words can go (known); more than hi cannot
        while lo < hi and not self.oracle.expired():
            mid = (lo + hi + 1) // 2
            if self.attempt("cut-stack", self.replace(stack=stack[8 * mid:])):
                lo = mid
            else:
                hi = mid - 1

    def relocated(self, cut: int) -> C.Case:
        """The case with the top `cut` bytes of its stack image gone and everything that
        pointed into the stack (stack words, context, anchor, truth) moved up by `cut`, so
        the frames below keep their layout at new addresses."""
        case, lo, hi = self.case, self.case.stack_lo, self.case.stack_hi

        def move(v: int) -> int:
            return v + cut if lo <= v <= hi else v

        words = [int.from_bytes(case.stack[i:i + 8], "little")
                 for i in range(0, len(case.stack) - cut, 8)]
        stack = b"".join((move(w) % 2**64).to_bytes(8, "little") for w in words)
        context = C.Context(case.context.pc, move(case.context.sp), move(case.context.fp))
        t = case.thread
        thread = dataclasses.replace(t, anchor_sp=move(t.anchor_sp), anchor_fp=move(t.anchor_fp))
        truth = case.truth and dataclasses.replace(case.truth, frames=tuple(
            dataclasses.replace(f, sp=move(f.sp), fp=move(f.fp)) for f in case.truth.frames))
        return dataclasses.replace(case, stack=stack, context=context, thread=thread,
                                   truth=truth)

    def cut_stack_top(self) -> None:
        """Drop words from the high end (the oldest frames), relocating pointers: binary
        search for the most words that can go."""
        lo, hi = 0, len(self.case.stack) // 8 - 1
        while lo < hi and not self.oracle.expired():
            mid = (lo + hi + 1) // 2
            if self.oracle.keeps(self.encode(self.relocated_from(mid))):
                lo = mid
            else:
                hi = mid - 1
        if lo and not self.oracle.expired():
            self.attempt("cut-stack-top", self.relocated_from(lo))

    def relocated_from(self, words: int) -> C.Case:
        return self.relocated(8 * words)

    def zero_stack_words(self) -> None:
        stack = self.case.stack
        if len(stack) > 8 * ZERO_WORDS_MAX:
            return
        nonzero = [i for i in range(0, len(stack), 8) if any(stack[i:i + 8])]

        def keeps(kept: list[int]) -> bool:
            image = bytearray(len(self.case.stack))
            for i in kept:
                image[i:i + 8] = self.case.stack[i:i + 8]
            image_bytes = bytes(image)
            if image_bytes == self.case.stack:
                return True
            return self.zero_attempt(image_bytes)

        ddmin(nonzero, keeps, self.oracle.expired)

    def zero_attempt(self, image: bytes) -> bool:
        if self.oracle.expired():
            return False
        candidate = self.replace(stack=image)
        if self.oracle.keeps(self.encode(candidate)):
            self.case = candidate
            if "zero-stack-words" not in self.passes:
                self.passes.append("zero-stack-words")
            return True
        return False

    def zero_registers(self) -> None:
        for field in ("fp", "pc", "sp"):
            if getattr(self.case.context, field):
                context = dataclasses.replace(self.case.context, **{field: 0})
                self.simplify("zero-registers", self.replace(context=context))
        for field in ("anchor_pc", "anchor_fp", "anchor_sp"):
            if getattr(self.case.thread, field):
                thread = dataclasses.replace(self.case.thread, **{field: 0})
                self.simplify("zero-anchor", self.replace(thread=thread))

    def simplify(self, name: str, case: C.Case) -> None:
        """Same size, simpler values: accepted when the signature stays."""
        if not self.oracle.expired() and self.oracle.keeps(self.encode(case)):
            self.case = case
            if name not in self.passes:
                self.passes.append(name)


def shrink_bytes(oracle: Oracle, data: bytes, harness: str) -> bytes:
    kept = ddmin(list(data), lambda b: oracle.keeps(bytes(b), harness), oracle.expired)
    return bytes(kept)


def minimize(data: bytes, harness: str, walker: str, budget: float = DEFAULT_BUDGET,
             replayer: MinivmReplayer | None = None, source: str = "<input>") -> Result:
    """The smallest reproducer found within `budget` seconds (see the module docstring)."""
    started = time.monotonic()
    replayer = replayer or MinivmReplayer(MINIMIZE_HANG_NS)
    first = replayer.run_as(data, harness, walker, source)
    if first.finding is None:
        raise MinimizeError(f"{source}: replays without a finding on walker {walker!r} "
                            f"(harness {harness}); nothing to minimize")
    signature = first.finding.signature
    case_harness = LIVE_HARNESS if harness == LIVE_HARNESS else "bytes"
    oracle = Oracle(replayer, walker, signature, started + budget, case_harness)
    case_bytes = replayer.materialize(data, harness, walker, source)
    passes: list[str] = []
    if harness in GENERATOR_HARNESSES and not oracle.keeps(case_bytes):
        best, best_harness = shrink_bytes(oracle, data, harness), harness
        passes.append("ddmin-generator-bytes")
    else:
        best, best_harness = case_bytes, case_harness
        if harness in GENERATOR_HARNESSES:
            passes.append("materialize")
        without_queue, queue = split_queue(case_bytes)
        case = decode_without_queue(without_queue, case_bytes)
        if case is not None:
            shrinker = CaseShrinker(oracle, case, queue_ops(queue, case), queue)
            shrinker.run()
            candidate = shrinker.encode(shrinker.case)
            if len(candidate) < len(best) and oracle.keeps(candidate):
                best = candidate
            passes += shrinker.passes
        smaller = shrink_bytes(oracle, best, case_harness)
        if len(smaller) < len(best):
            best = smaller
            passes.append("ddmin-bytes")
    if len(best) > len(data):
        # A generated case is often far larger than the generator bytes that made it; when
        # shrinking did not get below the input, the input's own bytes are the smaller result.
        best, best_harness = shrink_bytes(oracle, data, harness), harness
        passes.append("ddmin-input-bytes" if len(best) < len(data) else "kept-input")
    return Result(best, best_harness, signature, len(data), len(case_bytes), oracle.tests,
                  time.monotonic() - started, passes)
