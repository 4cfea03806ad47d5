"""A stack run repeated below itself: section 5 (STACK) with the RUNS flag
(docs/case-format.md §2), how a stack past the depth limit fits in a few bytes.

The payload is u32 image size, then chunks that fill the image from stack_lo up: LITERAL (u8 0,
u32 n, n bytes) or REPEAT (u8 1, u32 n, u32 times >= 2, n bytes). The bytes of a REPEAT are the
run at its highest place; copy k (1 <= k < times) lies k*n bytes below it and is the run with
every word v, hi <= v < hi + 2n (hi: the run's address), lowered by k*n: a saved fp or anchor
into the run or the copy above moves with its frame. The C side is native/src/vm/vm_repeat.c.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Protocol

from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.status import CaseDecodeError, CaseStatus

SECTION_RUNS = 2
CHUNK_LITERAL = 0
CHUNK_REPEAT = 1


@dataclass(frozen=True)
class StackRun:
    """The repeat of a stack image: its highest place (offset from stack_lo), bytes, places."""

    offset: int
    size: int
    times: int


def relocated(run: bytes, hi: int, k: int) -> bytes:
    """Copy k of the run at address hi."""
    n = len(run)
    words = struct.unpack(f"<{n // 8}Q", run)
    return struct.pack(f"<{n // 8}Q", *(v - k * n if 0 <= v - hi < 2 * n else v for v in words))


def holds(stack: bytes, run: StackRun | None) -> bool:
    """Whether `stack` (an image at the top of the stack) holds the copies of `run`."""
    if run is None or run.times < 2 or run.size <= 0 or run.size % 8 or run.offset % 8:
        return False
    low = run.offset - (run.times - 1) * run.size
    if low < 0 or run.offset + run.size > len(stack):
        return False
    pattern = stack[run.offset:run.offset + run.size]
    hi = vm.STACK_TOP - len(stack) + run.offset
    return all(stack[run.offset - k * run.size:run.offset - (k - 1) * run.size]
               == relocated(pattern, hi, k) for k in range(1, run.times))


def encode_runs(stack: bytes, run: StackRun) -> bytes:
    """The RUNS payload of `stack` with `run` (which holds)."""
    low = run.offset - (run.times - 1) * run.size
    above = run.offset + run.size
    out = [struct.pack("<I", len(stack))]
    if low:
        out += [struct.pack("<BI", CHUNK_LITERAL, low), stack[:low]]
    out += [struct.pack("<BII", CHUNK_REPEAT, run.size, run.times), stack[run.offset:above]]
    if above < len(stack):
        out += [struct.pack("<BI", CHUNK_LITERAL, len(stack) - above), stack[above:]]
    return b"".join(out)


class Reader(Protocol):
    pos: int
    end: int

    def u8(self, what: str) -> int: ...
    def u32(self, what: str) -> int: ...
    def take(self, n: int, what: str) -> bytes: ...
    def fail(self, status: CaseStatus, what: str) -> CaseDecodeError: ...


def check_image_size(r: Reader, size: int) -> None:
    if size > vm.MAX_STACK:
        raise r.fail(CaseStatus.LIMIT, f"stack image of {size} bytes > {vm.MAX_STACK}")
    if size == 0 or size % 8:
        raise r.fail(CaseStatus.BAD_FIELD,
                     f"stack image of {size} bytes: not a positive multiple of 8")


def decode_runs(r: Reader) -> tuple[bytes, StackRun | None]:
    """The image a RUNS payload stands for, and its first repeat."""
    size = r.u32("stack image size")
    check_image_size(r, size)
    image = bytearray(size)
    at, first = 0, None
    while r.pos < r.end:
        kind = r.u8("stack chunk kind")
        if kind > CHUNK_REPEAT:
            raise r.fail(CaseStatus.BAD_FIELD, f"stack chunk {kind}")
        n = r.u32("stack chunk size")
        times = r.u32("stack chunk times") if kind == CHUNK_REPEAT else 1
        if n == 0 or n % 8 or (kind == CHUNK_REPEAT and times < 2) or n * times > size - at:
            raise r.fail(CaseStatus.BAD_FIELD, f"stack chunk of {n} bytes x {times} at {at}: "
                                               f"empty, unaligned or past {size}")
        run = r.take(n, "stack chunk bytes")
        top = at + (times - 1) * n
        hi = vm.STACK_TOP - size + top
        for k in range(times):
            image[top - k * n:top - (k - 1) * n] = relocated(run, hi, k) if k else run
        if times > 1 and first is None:
            first = StackRun(top, n, times)
        at += n * times
    if at != size:
        raise r.fail(CaseStatus.BAD_FIELD, f"stack chunks fill {at} of {size} bytes")
    return bytes(image), first

