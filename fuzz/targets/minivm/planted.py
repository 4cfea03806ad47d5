"""Walkers with planted bugs: the reference walker's sources compiled with -DWF_PLANT_<BUG>.

They prove that campaigns find what they should (tests/quality): each bug is of a kind a real
walker has, and each is expected to surface as one finding kind. The hooks are `#ifdef
WF_PLANT_*` blocks in native/walkers/reference/, each marked `planted bug`;
without the macro the reference walker is unchanged.

Each walker is built twice: instrumented for libFuzzer (-fsanitize=fuzzer-no-link, the library
only loads once libFuzzer is in the process, as in a harness) and plain (no coverage feedback),
so that a test can show what coverage feedback buys. `build_combined` plants several bugs in
one library (bugs on disjoint paths: triage must then tell them apart by more than the walker).

A bug's campaign (tests/quality/test_planted.py) starts from the shipped seeds of its harness
when none of them triggers it (`seeded`), else from no seeds: a seed that already holds the
bug would make the campaign prove nothing about the search.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.core.errors import MissingDependencyError, UserError
from walkfuzz.core.paths import ROOT
from walkfuzz.findings.finding import FindingKind

WALKER_SOURCES = ROOT / "native" / "walkers" / "reference"
INCLUDE = ROOT / "native" / "include"
BUILD_DIR = ROOT / "build" / "planted"
CFLAGS = ["-shared", "-fPIC", "-O1", "-g", "-std=gnu11", "-Wall", "-Wextra", "-Werror",
          "-Wno-unused-parameter", "-DWF_REF_EXPORT"]
FLAVOUR_FLAGS = {"cov": ["-fsanitize=fuzzer-no-link"], "plain": []}
# The iterator, info and queue calls the harnesses exercise; a walker library reads the VM at
# WF_VM_ROOT and binds to nothing in the core.
WALKER_FILES = ("ref_walker.c", "ref_info.c", "ref_queue.c")
NAME_MAX = 160  # longest bug name (or combination) used as a file name as it is


@dataclass(frozen=True)
class PlantedBug:
    name: str
    macro: str
    kinds: tuple[FindingKind, ...]  # finding kinds that are this bug (the first is typical)
    harness: str  # the harness whose campaign finds it
    what: str
    seeded: bool = True  # its campaign imports corpora/<harness>/ (no seed there triggers it)


PLANTED_BUGS = (
    PlantedBug("missing-bounds-check", "WF_PLANT_MISSING_BOUNDS_CHECK", ("crash",), "layouts",
               "stack reads are not checked against the top of the stack"),
    PlantedBug("frame-size-off-by-one", "WF_PLANT_FRAME_SIZE_OFF_BY_ONE", ("invalid-trace",),
               "layouts", "a compiled frame's sender is looked for one word too low",
               seeded=False),
    # A missing sp check shows up as a frame whose sp does not grow (contract), a walk that goes
    # on where the reference stops (invalid-trace), or, through frames a Java-only walk passes
    # silently, a walk that never ends (hang).
    PlantedBug("fp-cycle", "WF_PLANT_FP_CYCLE", ("contract", "invalid-trace", "hang"), "layouts",
               "neither sp growth nor depth is checked, so an fp-chain cycle is followed forever"),
    # A slot pointing at readable memory that is no method gives a wrong trace, not a fault.
    PlantedBug("unchecked-method", "WF_PLANT_UNCHECKED_METHOD", ("crash", "invalid-trace"),
               "layouts", "an interpreted frame's method slot is dereferenced without "
               "validating it"),
    PlantedBug("inlined-scope-order", "WF_PLANT_INLINED_SCOPE_ORDER", ("invalid-trace",),
               "layouts", "inlined scopes are reported outermost first", seeded=False),
    # Several independent conditions, each its own branch: coverage feedback reaches them one
    # at a time, blind mutation does not get them all at once (tests/quality/test_planted.py).
    PlantedBug("nested-condition", "WF_PLANT_NESTED_CONDITION", ("crash",), "layouts",
               "stepping from a tier-3 inlining frame into the interpreter late in its caller's "
               "bytecode, the caller's mdp slot is dereferenced unvalidated"),
    # Six conditions of an entry frame crossing, each its own branch (nested-condition's
    # kind of depth on another path of the iterator).
    PlantedBug("anchor-fp-slot", "WF_PLANT_ANCHOR_FP_SLOT", ("invalid-trace",), "layouts",
               "crossing an entry frame of a blocked thread's own Java-only walk, stopped late "
               "in the call stub with its whole spill area, whose saved anchor has no pc and is "
               "a native wrapper of 80 bytes or more, the anchor's fp is read from the pc slot"),
    # Five conditions of the queue code, each its own branch: the program must register a
    # second queue, hook it, and wrap its ring before a negative index goes wrong.
    PlantedBug("wrapped-negative-index", "WF_PLANT_WRAPPED_NEGATIVE_INDEX", ("invalid-trace",),
               "queue", "GetQueueElement with a negative index counts back from the end of the "
               "ring of a hooked, not-first queue whose elements wrap around a ring not full"),
    # The first frame's `ret` at pc (docs/case-format.md §4.3) left unread: a popped frame is
    # walked as if built, its caller read from a dead slot. Live stress catches it too
    # (tests/stress/test_live_oracle.py).
    PlantedBug("ignores-ret", "WF_PLANT_IGNORES_RET", ("invalid-trace",), "layouts",
               "a first frame at its `ret` is walked as if its frame were still built"),
    # GetQueueSizeInfo's attempts then disagree with the Enqueue calls made: the contract of
    # asgst.h's queue block (check queue-bookkeeping).
    PlantedBug("queue-bookkeeping", "WF_PLANT_QUEUE_BOOKKEEPING", ("contract",), "queue",
               "a full queue rejects an Enqueue before counting the attempt", seeded=False),
    # The depth limit's edge (docs/case-format.md §4.2 step b): a stack of 8193 physical
    # frames or more is walked one frame too far. Deep layouts (wf_gen.h) reach it.
    PlantedBug("depth-off-by-one", "WF_PLANT_DEPTH_OFF_BY_ONE", ("invalid-trace",), "layouts",
               "the depth limit lets one physical frame more through (8193 decoded)"),
    # The limit counted on one path only: a deep stack with Java -> C -> Java crossings,
    # walked Java-only, goes past the limit by one frame per entry frame walked through.
    PlantedBug("depth-reported-only", "WF_PLANT_DEPTH_REPORTED_ONLY", ("invalid-trace",),
               "layouts", "only frames the walk reports count towards the depth limit: "
               "frames walked through (entry, stub and C frames of a Java-only walk) do not"),
    # The iterator API and info calls as the api harness drives them (wf_api_fuzz.h).
    PlantedBug("rewind-keeps-scope", "WF_PLANT_REWIND_KEEPS_SCOPE", ("invalid-trace",), "api",
               "a rewind between the inlined scopes of a compiled frame keeps the scopes left, "
               "so the walk after it goes on from there instead of the first frame",
               seeded=False),
    # Found without AddressSanitizer too: the harness checks canary bytes after the buffer.
    PlantedBug("name-past-buffer", "WF_PLANT_NAME_PAST_BUFFER", ("contract",), "api",
               "GetMethodInfo writes the name's NUL one byte past the caller's buffer when the "
               "name does not fit, and a byte into a buffer of capacity 0", seeded=False),
    # A wild pointer faults; one into mapped memory reads a record that is none.
    PlantedBug("unchecked-info-handle", "WF_PLANT_UNCHECKED_INFO_HANDLE", ("crash", "contract"),
               "api", "GetMethodInfo and GetClassInfo take any non-NULL handle for a record "
               "without validating it", seeded=False),
    # The pool's edge, which only the queue harness's FILL reaches (a program registers at most
    # 255 queues): FILL's count is one short (check queue-bookkeeping).
    PlantedBug("pool-wraps-early", "WF_PLANT_POOL_WRAPS_EARLY", ("contract",), "queue",
               "RegisterQueue's search for a free pool slot wraps one slot early, so the last "
               "slot is never used: 1023 live queues, not 1024", seeded=False),
)



def planted_bug(name: str) -> PlantedBug:
    for bug in PLANTED_BUGS:
        if bug.name == name:
            return bug
    known = ", ".join(b.name for b in PLANTED_BUGS)
    raise UserError(f"unknown planted bug {name!r}; known: {known}")


# The reference walker itself as a library: what a planted walker is compared with.
REFERENCE = PlantedBug("reference", "", (), "layouts", "no bug")


def build(bug: PlantedBug, flavour: str = "cov") -> Path:
    """Compile the walker library of `bug` (if its sources changed) and return its path."""
    return _compile(bug.name, [bug.macro] if bug.macro else [], flavour)


def build_combined(bugs: Sequence[PlantedBug], flavour: str = "plain") -> Path:
    """One walker library with every bug of `bugs` planted at once."""
    if len(bugs) < 2 or any(not b.macro for b in bugs):
        raise UserError(f"a combined walker needs two planted bugs or more, not "
                        f"{[b.name for b in bugs]}")
    return _compile("+".join(b.name for b in bugs), [b.macro for b in bugs], flavour)


def _file_stem(name: str) -> str:
    """`name` as a file name: a combination of many bugs is longer than a file name may be
    (255 bytes), so a long one is named by its hash."""
    if len(name) <= NAME_MAX:
        return name
    return f"combined-{hashlib.sha1(name.encode()).hexdigest()[:12]}"


def _compile(name: str, macros: Sequence[str], flavour: str) -> Path:
    if flavour not in FLAVOUR_FLAGS:
        raise UserError(f"unknown flavour {flavour!r}; one of {sorted(FLAVOUR_FLAGS)}")
    out = BUILD_DIR / f"{_file_stem(name)}-{flavour}.so"
    sources = [WALKER_SOURCES / file for file in WALKER_FILES]
    inputs = [*sources, *INCLUDE.glob("*.h"), Path(__file__)]
    if out.exists() and out.stat().st_mtime >= max(p.stat().st_mtime for p in inputs):
        return out
    clang = shutil.which(os.environ.get("CLANG", "clang"))
    if clang is None:
        raise MissingDependencyError("clang not found on PATH (needed to build planted walkers)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")  # builds in threads
    command = [clang, *CFLAGS, *FLAVOUR_FLAGS[flavour], *(f"-D{m}" for m in macros),
               f"-I{INCLUDE}", *map(str, sources), "-o", str(tmp)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise UserError(f"building planted walker {name!r} failed: {result.stderr.strip()}")
    tmp.replace(out)
    return out
