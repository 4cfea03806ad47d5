"""Classes of findings on a walker's scale: what kind of mistake a finding is.

A fault is classified by its address (`si_addr`) against the memory the walker could read:

    near-null-read       address below NEAR_NULL_LIMIT (a NULL or a small offset from it)
    guard-page-overrun   address within one page outside a mapped region's edge (read past
                         the top of the stack, the end of a table, ...)
    misaligned-access    an address that is not 8-aligned (walkers read words), elsewhere
    wild-read            anything else: a pointer from nowhere; also non-canonical addresses,
                         which the kernel reports with si_code SI_KERNEL and address 0

For the simulated VM the mapped regions are the fixed ones of docs/case-format.md §1, so
the guard-page test is exact; for other targets they come from /proc/self/maps of the
process that replayed the input. A walk that does not end (watchdog, or the harness's frame
limit reached) is `hang-or-cycle`. An invalid trace is classified by comparing the walker's
frames with the oracle's (`invalid_trace_class`); a contract finding by the check it broke.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PAGE = 4096
NEAR_NULL_LIMIT = 0x10000  # the kernel's mmap_min_addr: nothing is ever mapped below
SI_KERNEL = 0x80  # si_code of a general-protection fault (non-canonical address)
WORD = 8
JAVA_INLINED = 2  # ASGST_FRAME_JAVA_INLINED (asgst.h): an inlined scope shares its frame

FAULT_CLASSES = ("near-null-read", "guard-page-overrun", "misaligned-access", "wild-read")
HANG_CLASS = "hang-or-cycle"
INVALID_CLASSES = ("missing", "extra", "wrong-method", "wrong-bci", "wrong-type",
                   "truncated", "cycle", "wrong-frame", "wrong-result")
# Contract checks whose failure means the walk never ended on its own.
NON_TERMINATING_CHECKS = frozenset({"frame-limit"})
FRAME_LIMIT = 65536  # WF_RUN_MAX_FRAMES: frames a harness records before it stops a walk


@dataclass(frozen=True)
class Region:
    """A readable address range [start, end)."""

    name: str
    start: int
    end: int


def region(name: str, start: int, size: int) -> Region:
    """The region of `size` bytes from `start`."""
    return Region(name, start, start + size)


def _page_up(value: int) -> int:
    return (value + PAGE - 1) // PAGE * PAGE


def edge_overrun(addr: int, regions: Sequence[Region]) -> str | None:
    """'past the end of stack' / 'before the start of methods' when addr lies in the page
    just outside a region's edge, else None."""
    for region in regions:
        end = _page_up(region.end)
        if end <= addr < end + PAGE:
            return f"past the end of {region.name}"
        if region.start - PAGE <= addr < region.start:
            return f"before the start of {region.name}"
    return None


def fault_class(addr: int, si_code: int, regions: Sequence[Region]) -> tuple[str, str]:
    """(class, why) of a guarded fault at `addr` (see the module docstring for the order)."""
    if si_code == SI_KERNEL:
        return "wild-read", "general-protection fault (non-canonical address)"
    if addr < NEAR_NULL_LIMIT:
        return "near-null-read", f"address {addr:#x} is within {NEAR_NULL_LIMIT:#x} of NULL"
    edge = edge_overrun(addr, regions)
    if edge is not None:
        return "guard-page-overrun", f"address {addr:#x} is {edge}"
    if addr % WORD:
        return "misaligned-access", f"address {addr:#x} is not {WORD}-aligned"
    return "wild-read", f"address {addr:#x} is in no region and near none"


def process_regions() -> tuple[Region, ...]:
    """Readable mappings of this process, from /proc/self/maps."""
    regions = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) < 2 or not fields[1].startswith("r"):
                continue
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            name = fields[5] if len(fields) > 5 else "anonymous"
            regions.append(Region(name.rsplit("/", 1)[-1], lo, hi))
    return tuple(regions)


# ---- invalid traces ---------------------------------------------------------------------------

# A frame as the classifier compares it: (type, comp_level, bci, method, pc, sp, fp).
FrameTuple = tuple[int, int, int, int, int, int, int]


def _has_cycle(frames: Sequence[FrameTuple]) -> bool:
    """The same physical frame (pc, sp, fp) reported twice by non-inlined frames."""
    seen: set[tuple[int, int, int]] = set()
    for f in frames:
        if f[0] == JAVA_INLINED:
            continue
        key = (f[4], f[5], f[6])
        if key in seen:
            return True
        seen.add(key)
    return False


def invalid_trace_class(got: Sequence[FrameTuple], want: Sequence[FrameTuple],
                        got_end: int, want_end: int) -> tuple[str, str]:
    """(class, why) of a walker trace `got` that differs from the oracle's `want`.

    Frames are compared from the top; at the first difference d:
      cycle         the walker reported one physical frame twice
      truncated     got is a proper prefix of want (the walk stopped early)
      wrong-result  every frame agrees but the end code or Run* result does not
    got[d] at the sp of want[d] is the right physical frame decoded wrongly (sp alone tells
    frames apart: it grows from frame to frame, and only inlined scopes share one):
      wrong-method / wrong-bci / wrong-type (type or comp level)   a field differs
      wrong-frame   same sp, method, bci and type, but another pc or fp
    got[d] elsewhere is a wrong step:
      extra         want is a proper prefix of got, or want[d] comes later in got
      missing       got[d] comes later in want (frames were skipped)
      wrong-sender  the walker stepped to a place where no true frame is
    """
    if _has_cycle(got):
        return "cycle", "a physical frame is reported twice"
    d = next((i for i, (g, w) in enumerate(zip(got, want, strict=False)) if g != w),
             min(len(got), len(want)))
    if d == len(got) == len(want):
        return "wrong-result", f"frames agree; end code {got_end} where {want_end} is expected"
    if d == len(got):
        return "truncated", f"the walk stops after {d} of {len(want)} frames ({got_end})"
    if d < len(want) and got[d][5] == want[d][5]:
        return _wrong_decode(d, got[d], want[d])
    if d == len(want) or want[d] in got[d + 1:]:
        return "extra", f"frame {d} is not in the true trace"
    if got[d] in want[d + 1:]:
        return "missing", f"frames from {d} are skipped"
    return "wrong-sender", f"frame {d}: sp {got[d][5]:#x} where the true one is at {want[d][5]:#x}"


def _wrong_decode(d: int, g: FrameTuple, w: FrameTuple) -> tuple[str, str]:
    if g[3] != w[3]:
        return "wrong-method", f"frame {d}: method {g[3]:#x} where {w[3]:#x} is expected"
    if g[2] != w[2]:
        return "wrong-bci", f"frame {d}: bci {g[2]} where {w[2]} is expected"
    if g[:2] != w[:2]:
        return "wrong-type", f"frame {d}: type/comp level {g[:2]} where {w[:2]} is expected"
    return "wrong-frame", f"frame {d}: pc/fp differ from the true frame"


def contract_class(check: str, frames: int) -> str:
    """A contract finding's class: the walk that never ended (the frame limit was reached,
    whichever check the harness then reported), or the broken check."""
    if check in NON_TERMINATING_CHECKS or frames >= FRAME_LIMIT:
        return HANG_CLASS
    return f"contract:{check}"
