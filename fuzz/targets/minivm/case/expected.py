"""Section 11 of a case, EXPECTED: the live oracle's expected trace of a live stress sample
(docs/case-format.md §2 "11 EXPECTED"). The decoder mirrors native/src/case/case_expected.c rule
for rule (same status, same byte offset); it reads through fuzz/targets/minivm/case/format.py's
reader.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.status import CaseDecodeError, CaseStatus, Section

MAX_EXPECTED = 6656  # WF_CASE_MAX_EXPECTED = WF_LIVE_SHADOW_MAX: every live trace fits
FRAME_SIZE = 12
MAX_WINDOW = 4
MODES = {1: "signal", 2: "thread", 3: "queue"}
WINDOWS = ("none", "call", "prologue", "epilogue", "bci")
_TYPES = (int(vm.FrameType.JAVA), int(vm.FrameType.JAVA_INLINED), int(vm.FrameType.JAVA_NATIVE))


class Source(IntEnum):
    """Which walk of the case EXPECTED is for."""

    WALK = 1      # the walk of CONTEXT per WALK (signal and thread mode)
    ENQUEUE = 2   # the first ENQUEUE of section 9: its result as an empty walk (queue mode)
    ELEMENT = 3   # the first element handler's walk of section 9 (queue mode)


@dataclass(frozen=True)
class ExpectedFrame:
    method: int   # method index
    bci: int
    type: int     # ASGST frame type
    level: int    # comp level


@dataclass(frozen=True)
class Expected:
    mode: int             # 1 signal, 2 thread, 3 queue: the live run's sampler
    source: int           # Source
    window: int           # transition window of the sampled pc (0 none .. 4 bci)
    end_code: int         # the end the walk should have
    frames: tuple[ExpectedFrame, ...]   # innermost first


class ExpectedReader(Protocol):
    def u8(self, what: str) -> int: ...
    def u32(self, what: str) -> int: ...
    def s32(self, what: str) -> int: ...
    def take(self, n: int, what: str) -> bytes: ...
    def fail(self, status: CaseStatus, what: str) -> CaseDecodeError: ...


def _frame(r: ExpectedReader, i: int, code_sizes: tuple[int, ...]) -> ExpectedFrame:
    method, bci, ftype, level, reserved = struct.unpack("<IiBbH", r.take(FRAME_SIZE,
                                                                        "expected frame"))
    bad = CaseStatus.BAD_FIELD
    if method >= len(code_sizes):
        raise r.fail(bad, f"expected frame {i}: method {method} >= {len(code_sizes)} methods")
    if ftype not in _TYPES:
        raise r.fail(bad, f"expected frame {i}: type {ftype}")
    if bci < -1 or bci >= code_sizes[method]:
        raise r.fail(bad, f"expected frame {i}: bci {bci} outside -1..{code_sizes[method] - 1}")
    if not -1 <= level <= 4:
        raise r.fail(bad, f"expected frame {i}: comp level {level}")
    if reserved:
        raise r.fail(bad, f"expected frame {i}: reserved {reserved}")
    return ExpectedFrame(method, bci, ftype, level)


def decode_expected(r: ExpectedReader, code_sizes: tuple[int, ...], queue_ops: int) -> Expected:
    """Section 11's payload; code_sizes of the case's methods, queue_ops the op count of its
    section 9 (both precede). Raises r.fail(status, what) at the first bad rule."""
    mode, source, window = r.u8("expected mode"), r.u8("expected source"), r.u8("expected window")
    reserved = r.u8("expected reserved")
    end_code, count = r.s32("expected end code"), r.u32("expected count")
    bad = CaseStatus.BAD_FIELD
    if mode not in MODES:
        raise r.fail(bad, f"expected mode {mode}")
    if source not in tuple(Source):
        raise r.fail(bad, f"expected source {source}")
    if window > MAX_WINDOW:
        raise r.fail(bad, f"expected window {window}")
    if reserved:
        raise r.fail(bad, f"expected reserved {reserved}")
    if end_code > 0:
        raise r.fail(bad, f"expected end code {end_code}")
    if source != Source.WALK and queue_ops == 0:
        raise r.fail(bad, f"expected source {source} without a queue program")
    if count > MAX_EXPECTED:
        raise r.fail(CaseStatus.LIMIT, f"expected count {count} > {MAX_EXPECTED}")
    frames = tuple(_frame(r, i, code_sizes) for i in range(count))
    return Expected(mode, source, window, end_code, frames)


def encode_expected(e: Expected) -> bytes:
    """The section 11 payload (written with the OPTIONAL flag: a decoder that does not know it
    can still walk the case)."""
    head = struct.pack("<BBBBiI", e.mode, e.source, e.window, 0, e.end_code, len(e.frames))
    return head + b"".join(struct.pack("<IiBbH", f.method, f.bci, f.type, f.level, 0)
                           for f in e.frames)


def has_expected(data: bytes) -> bool:
    """Whether the case file `data` has a section 11 (read from the section headers only)."""
    offset = 8  # the header
    while offset + 8 <= len(data):
        stype, _, length = struct.unpack_from("<HHI", data, offset)
        if stype == Section.EXPECTED:
            return True
        offset += 8 + length
    return False
