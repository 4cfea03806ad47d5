"""Hypothesis strategies and settings profiles for cases.

Walkable layouts come from the canonical C generator: Hypothesis draws bytes (`st.binary()`)
and the generator turns them into a well-formed case with its true trace, so there is one
generator, and Hypothesis shrinks the bytes. `valid_cases()` builds cases in Python for the
format's round trips only: every rule of docs/case-format.md §2 holds, the stack is noise.

Profiles: `walkfuzz-ci` (default, fast) and `walkfuzz-soak` (`make soak`, quality runs);
choose with WALKFUZZ_HYPOTHESIS=soak. Tests apply them with `@profile()`, so loading them
changes nothing for anyone else's tests.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st

from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case import native as case_native
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
from walkfuzz.targets.minivm.case.stack_runs import StackRun, relocated

settings.register_profile(
    "walkfuzz-ci", max_examples=60, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "walkfuzz-soak", max_examples=5000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

F = TypeVar("F", bound=Callable[..., Any])


def profile_name() -> str:
    return f"walkfuzz-{os.environ.get('WALKFUZZ_HYPOTHESIS', 'ci')}"


def profile(scale: float = 1.0) -> Callable[[F], F]:
    """Settings of the active walkfuzz profile, max_examples scaled (for slow tests)."""
    base = settings.get_profile(profile_name())
    return settings(base, max_examples=max(1, int(base.max_examples * scale)))


# ---- generator-driven layouts ------------------------------------------------------------------

GENERATOR_BYTES = st.binary(min_size=0, max_size=512)


@st.composite
def generated_cases(draw: st.DrawFn, /, **params: int) -> bytes:
    """Bytes of a case the C generator built from drawn bytes (params: wf_gen_params)."""
    return case_native.generate(data=draw(GENERATOR_BYTES), **params)


@st.composite
def deep_cases(draw: st.DrawFn) -> bytes:
    """Bytes of a generated case with a deep run (wf_gen.h): a walk of WF_WALK_MAX_DEPTH - 2
    physical frames or more, its stack a repeat (STACK with RUNS); generator seeds, as a
    deep layout needs bytes after the layout's own."""
    seed = draw(st.integers(0, 2**32 - 1))
    state = draw(st.sampled_from(WALKED_STATES))
    data = case_native.generate(seed=seed, deep=2, state=state, consistent=1,
                                entry=vm.WalkEntry.UCONTEXT)
    assume(case_native.walk_depth() >= vm.MAX_DEPTH - 2)  # the run fitted its layout
    return data


# Thread states whose walk reaches the frames (the others end before a deep run).
WALKED_STATES = (vm.ThreadState.IN_JAVA, vm.ThreadState.IN_NATIVE, vm.ThreadState.IN_VM,
                 vm.ThreadState.BLOCKED)


# ---- Python-built valid cases (format round trips) -------------------------------------------

_NAME = st.binary(max_size=24).map(lambda b: b.replace(b"\0", b"."))
_U32 = st.integers(0, 2**32 - 1)
_U64 = st.integers(0, 2**64 - 1)


@st.composite
def _methods(draw: st.DrawFn, class_count: int) -> tuple[MethodDef, ...]:
    n = draw(st.integers(1, 6))
    return tuple(MethodDef(draw(st.integers(0, class_count - 1)), draw(_U32),
                           draw(st.integers(1, 0xFFFF)), draw(_NAME), draw(_NAME), draw(_NAME))
                 for _ in range(n))


@st.composite
def _blob(draw: st.DrawFn, start: int, methods: tuple[MethodDef, ...]) -> Blob:
    kind = draw(st.sampled_from(list(vm.BlobKind)))
    size = draw(st.integers(1, 0x400))
    fixed = kind in vm.FIXED_FRAME_BLOBS
    method = draw(st.integers(0, len(methods) - 1)) if kind in vm.METHOD_BLOBS else vm.NO_METHOD
    descs: list[PcDesc] = []
    if kind == vm.BlobKind.COMPILED:
        cut = sorted(draw(st.sets(st.integers(0, size), max_size=6)))
        for begin, end in zip(cut[0::2], cut[1::2], strict=False):
            scopes = tuple(Scope(m, draw(st.integers(0, methods[m].code_size - 1)))
                           for m in draw(st.lists(st.integers(0, len(methods) - 1),
                                                  min_size=1, max_size=vm.MAX_SCOPES)))
            descs.append(PcDesc(begin, end, scopes))
    return Blob(int(kind), draw(st.integers(1, 4)) if kind == vm.BlobKind.COMPILED else 0,
                start, size, draw(st.integers(2, 64)) * 8 if fixed else 0,
                draw(st.integers(0, size)) if kind != vm.BlobKind.ENTRY else 0, method,
                tuple(descs))


@st.composite
def _code_patches(draw: st.DrawFn) -> tuple[CodePatch, ...]:
    """Sorted, disjoint patches (touching ones included) inside the code heap."""
    patches: list[CodePatch] = []
    at = 0
    for _ in range(draw(st.integers(0, 3))):
        at += draw(st.integers(0, 0x2000))
        data = draw(st.binary(min_size=1, max_size=16))
        if at + len(data) > vm.CODE_HEAP_SIZE:
            break
        patches.append(CodePatch(at, data))
        at += len(data)
    return tuple(patches)


@st.composite
def repeated_stacks(draw: st.DrawFn) -> tuple[bytes, StackRun]:
    """A stack image holding a run repeated below itself (STACK with RUNS), words of the run
    pointing into it or the copy above (they move with each copy) among others."""
    below, words, times, above = (draw(st.integers(0, 3)), draw(st.integers(1, 4)),
                                  draw(st.integers(2, 6)), draw(st.integers(0, 3)))
    size = 8 * (below + words * times + above)
    offset = 8 * (below + words * (times - 1))
    hi = vm.STACK_TOP - size + offset
    pattern = struct.pack(f"<{words}Q", *(draw(_U64 | st.integers(hi - 8, hi + 16 * words))
                                           for _ in range(words)))
    image = bytearray(draw(st.binary(min_size=size, max_size=size)))
    for k in range(times):
        image[offset - k * len(pattern):offset - (k - 1) * len(pattern)] = (
            relocated(pattern, hi, k) if k else pattern)
    return bytes(image), StackRun(offset, len(pattern), times)


@st.composite
def valid_cases(draw: st.DrawFn) -> Case:
    """A case every rule of the format accepts (not necessarily a walkable layout)."""
    classes = tuple(ClassDef(draw(_U32), draw(_NAME), draw(_NAME))
                    for _ in range(draw(st.integers(1, 4))))
    methods = draw(_methods(len(classes)))
    blobs: list[Blob] = []
    start = 0
    for _ in range(draw(st.integers(0, 5))):
        start += draw(st.integers(0, 0x100))
        blob = draw(_blob(start, methods))
        blobs.append(blob)
        start = blob.start + blob.size
    thread = Thread(draw(st.sampled_from(list(vm.ThreadState))), draw(st.integers(0, 3)),
                    draw(_U64), draw(_U64), draw(_U64))
    stack, run = draw(st.binary(min_size=1, max_size=64).map(lambda b: (b * 8, None))
                      | repeated_stacks())
    truth = draw(st.none() | st.builds(
        Truth, st.integers(-2**31, 2**31 - 1), st.integers(-2**31, 2**31 - 1),
        st.lists(st.builds(Frame, st.sampled_from([int(t) for t in vm.FrameType]),
                           st.integers(-128, 127), st.integers(-2**31, 2**31 - 1),
                           st.sampled_from([0] + [vm.method_handle(i)
                                                  for i in range(len(methods))]),
                           _U64, _U64, _U64), max_size=5).map(tuple)))
    return Case(classes, methods, tuple(blobs), thread, stack,
                Context(draw(_U64), draw(_U64), draw(_U64)),
                Walk(draw(_U32), draw(st.sampled_from([int(e) for e in vm.WalkEntry]))), truth,
                code=draw(_code_patches()), stack_run=run)
