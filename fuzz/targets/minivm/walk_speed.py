"""How fast walkers walk (`walkfuzz bench`, bench/bench_walker.py): ns per frame on deep
synthetic stacks, next to a bare frame-pointer chain over the same memory (the floor).

Each stack is generated and mapped, then walked once by every walker under the guard and
checked against its true trace: a walker that walks it wrongly is reported, not timed (a fast
wrong walk says nothing). The walks are timed in C (native/testing/run_walker_bench.c) as a profiler
makes them: RunWithIterator, then a NextFrame loop through the walker table. The floor and the
walkers take turns for `rounds` rounds, and for at least `seconds`, so all of them see the same
machine, and a figure is the fastest batch of all rounds: on a shared machine a batch only ever
gets slower. Slower by much, and for seconds at a time: on this 2-core VM a neighbour on the
host (steal time) took the reference walker from 9.7 to 16 ns per physical frame for spells of
1-2 s, while the floor, a chain of dependent loads, moved from 3.5 to 3.8 ns only. A round
takes about 15 ms, so the rounds are spread over `seconds` to meet a quiet spell.

The floor walks one link per *physical* frame the walker decodes (the executable spec's steps:
Java frames, plus the entry and stub frames a Java-only walk steps through), laid over the
stack words the walker reads to find each sender. A walk's time is given per physical frame
(like for like with the floor) and per frame returned (inlined scopes included).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from walkfuzz.core import native
from walkfuzz.targets.minivm import spec
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import native as case_native
from walkfuzz.targets.minivm.vm_model import FrameKind

UNIFORM_BYTES = 200_000  # generator input for a uniform stack: enough for 1000 frames
REPS, BATCHES = 50, 20   # walks per timed batch, batches per round


@dataclass(frozen=True)
class Stack:
    """A deep synthetic stack: generated from a seed or from one byte repeated."""

    name: str
    what: str
    seed: int | None = None
    byte: int | None = None
    kind: FrameKind | None = None  # a uniform stack: every Java frame of this kind ...
    scopes: int = 1                # ... reporting this many frames (inlined scopes)


STACKS = {s.name: s for s in (
    Stack("mixed", "1000 Java frames of every kind (the bench's stack)", seed=7),
    Stack("interpreted", "1000 interpreted frames", byte=0xAA, kind=FrameKind.INTERPRETED),
    Stack("compiled", "1000 compiled frames, no inlining", byte=0x00, kind=FrameKind.COMPILED),
    Stack("inlined", "1000 compiled frames, 4 scopes each", byte=0x33, kind=FrameKind.COMPILED,
          scopes=4),
)}


@dataclass(frozen=True)
class WalkerTiming:
    name: str
    returned: int              # frames one walk returns
    ns_per_walk: float | None  # None: not timed, see `wrong`
    wrong: str | None = None   # how its walk of the stack differed from the truth


@dataclass(frozen=True)
class StackTiming:
    stack: Stack
    physical: int     # physical frames a walk decodes
    floor_ns: float   # ns per link of the fp chain
    walkers: tuple[WalkerTiming, ...]
    rounds: int       # rounds taken: each figure is the fastest batch of all of them


def generate(stack: Stack) -> list[int]:
    """Generate and map `stack`; the sp of each physical frame a walk decodes, top first.
    Raises RuntimeError if a uniform stack came out with other frames (a generator change)."""
    source = None if stack.byte is None else bytes([stack.byte]) * UNIFORM_BYTES
    lib = native.load().lib
    data = case_native.generate(data=source, seed=stack.seed, state=lib.WF_THREAD_IN_JAVA,
                                options=0, entry=0, consistent=1, min_frames=1000,
                                max_frames=1000)
    steps = [s for s in spec.walk(dec.decode(data, f"{stack.name} stack")).steps
             if s.code is None]
    if stack.kind is not None:
        java = Counter((s.kind, s.reported) for s in steps if s.reported > 0)
        if set(java) != {(stack.kind, stack.scopes)}:
            raise RuntimeError(f"the {stack.name!r} stack is no longer {stack.what}: {java}")
    return [s.frame.sp for s in steps]


def measure(stack: Stack, walkers: dict[str, Any], rounds: int,
            seconds: float = 0.0) -> StackTiming:
    """Time every walker of `walkers` (name -> walker table) on `stack`: `rounds` rounds, more
    until `seconds` have passed (module docstring)."""
    ffi, lib = native.load_testing()
    sps = generate(stack)
    mapped = case_native.mapped_case()
    wrong = {name: _wrong_walk(w) for name, w in walkers.items()}
    timed = {name: w for name, w in walkers.items() if wrong[name] is None}
    chain = ffi.new("uint64_t[]", sps)
    links, frames, physical = (ffi.new("uint32_t *") for _ in range(3))
    returned = dict.fromkeys(walkers, 0)
    best = dict.fromkeys(timed, float("inf"))
    floor = float("inf")
    done, deadline = 0, time.monotonic() + seconds
    while done < rounds or time.monotonic() < deadline:
        done += 1
        floor = min(floor, lib.wf_bench_fp_chain_ns(chain, len(sps), REPS, BATCHES, links))
        for name, w in timed.items():
            best[name] = min(best[name],
                             lib.wf_bench_walk_ns(w, mapped, REPS, BATCHES, frames, physical))
            returned[name] = frames[0]
    if links[0] != len(sps):
        raise RuntimeError(f"the fp chain walked {links[0]} links of {len(sps)} frames")
    return StackTiming(stack, len(sps), floor / len(sps), tuple(
        WalkerTiming(name, returned[name], best.get(name), wrong[name]) for name in walkers),
        done)


def _wrong_walk(walker: Any) -> str | None:
    """How a guarded walk of the mapped stack by `walker` differs from the truth, or None."""
    run = case_native.run_mapped(walker)
    if run.finding == "none":
        return None
    return f"{run.finding} (check {run.check})"
