"""Walkers with planted bugs: the reference walker's sources with one patch per bug applied
(native/testing/planted/<bug>.patch, `walkfuzz.targets.minivm.planted_sources`).

They prove that campaigns find what they should (tests/quality): each bug is of a kind a real
walker has, and each is expected to surface as one finding kind. The shipped reference walker
holds none of them: the patched copies are compiled in a folder of their own, their debug
information naming the reference files, so a finding of a planted walker is placed in
native/walkers/reference/ as a finding of a user's walker is placed in its sources.

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
from walkfuzz.targets.minivm import planted_sources

WALKER_SOURCES = planted_sources.REFERENCE_SOURCES
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
    kinds: tuple[FindingKind, ...]  # finding kinds that are this bug (the first is typical)
    harness: str  # the harness whose campaign finds it
    what: str
    seeded: bool = True  # its campaign imports corpora/<harness>/ (no seed there triggers it)
    planted: bool = True  # False: the reference walker itself, built with no patch


PLANTED_BUGS = (
    PlantedBug("missing-bounds-check", ("crash",), "layouts",
               "stack reads are not checked against the top of the stack"),
    PlantedBug("frame-size-off-by-one", ("invalid-trace",),
               "layouts", "a compiled frame's sender is looked for one word too low",
               seeded=False),
    # A missing sp check shows up as a frame whose sp does not grow (contract), a walk that goes
    # on where the reference stops (invalid-trace), or, through frames a Java-only walk passes
    # silently, a walk that never ends (hang).
    PlantedBug("fp-cycle", ("contract", "invalid-trace", "hang"), "layouts",
               "neither sp growth nor depth is checked, so an fp-chain cycle is followed forever"),
    # A slot pointing at readable memory that is no method gives a wrong trace, not a fault.
    PlantedBug("unchecked-method", ("crash", "invalid-trace"),
               "layouts", "an interpreted frame's method slot is dereferenced without "
               "validating it"),
    PlantedBug("inlined-scope-order", ("invalid-trace",),
               "layouts", "inlined scopes are reported outermost first", seeded=False),
    # Several independent conditions, each its own branch: coverage feedback reaches them one
    # at a time, blind mutation does not get them all at once (tests/quality/test_planted.py).
    PlantedBug("nested-condition", ("crash",), "layouts",
               "stepping from a tier-3 inlining frame into the interpreter late in its caller's "
               "bytecode, the caller's mdp slot is dereferenced unvalidated"),
    # Six conditions of an entry frame crossing, each its own branch (nested-condition's
    # kind of depth on another path of the iterator).
    PlantedBug("anchor-fp-slot", ("invalid-trace",), "layouts",
               "crossing an entry frame of a blocked thread's own Java-only walk, stopped late "
               "in the call stub with its whole spill area, whose saved anchor has no pc and is "
               "a native wrapper of 80 bytes or more, the anchor's fp is read from the pc slot"),
    # Five conditions of the queue code, each its own branch: the program must register a
    # second queue, hook it, and wrap its ring before a negative index goes wrong.
    PlantedBug("wrapped-negative-index", ("invalid-trace",),
               "queue", "GetQueueElement with a negative index counts back from the end of the "
               "ring of a hooked, not-first queue whose elements wrap around a ring not full"),
    # The first frame's `ret` at pc (docs/case-format.md §4.3) left unread: a popped frame is
    # walked as if built, its caller read from a dead slot. Live stress catches it too
    # (tests/stress/test_live_oracle.py).
    PlantedBug("ignores-ret", ("invalid-trace",), "layouts",
               "a first frame at its `ret` is walked as if its frame were still built"),
    # GetQueueSizeInfo's attempts then disagree with the Enqueue calls made: the contract of
    # asgst.h's queue block (check queue-bookkeeping).
    PlantedBug("queue-bookkeeping", ("contract",), "queue",
               "a full queue rejects an Enqueue before counting the attempt", seeded=False),
    # The depth limit's edge (docs/case-format.md §4.2 step b): a stack of 8193 physical
    # frames or more is walked one frame too far. Deep layouts (wf_gen.h) reach it.
    PlantedBug("depth-off-by-one", ("invalid-trace",), "layouts",
               "the depth limit lets one physical frame more through (8193 decoded)"),
    # The limit counted on one path only: a deep stack with Java -> C -> Java crossings,
    # walked Java-only, goes past the limit by one frame per entry frame walked through.
    PlantedBug("depth-reported-only", ("invalid-trace",),
               "layouts", "only frames the walk reports count towards the depth limit: "
               "frames walked through (entry, stub and C frames of a Java-only walk) do not"),
    # The iterator API and info calls as the api harness drives them (wf_api_fuzz.h).
    PlantedBug("rewind-keeps-scope", ("invalid-trace",), "api",
               "a rewind between the inlined scopes of a compiled frame keeps the scopes left, "
               "so the walk after it goes on from there instead of the first frame",
               seeded=False),
    # Found without AddressSanitizer too: the harness checks canary bytes after the buffer.
    PlantedBug("name-past-buffer", ("contract",), "api",
               "GetMethodInfo writes the name's NUL one byte past the caller's buffer when the "
               "name does not fit, and a byte into a buffer of capacity 0", seeded=False),
    # A wild pointer faults; one into mapped memory reads a record that is none.
    PlantedBug("unchecked-info-handle", ("crash", "contract"),
               "api", "GetMethodInfo and GetClassInfo take any non-NULL handle for a record "
               "without validating it", seeded=False),
    # The pool's edge, which only the queue harness's FILL reaches (a program registers at most
    # 255 queues): FILL's count is one short (check queue-bookkeeping).
    PlantedBug("pool-wraps-early", ("contract",), "queue",
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
REFERENCE = PlantedBug("reference", (), "layouts", "no bug", planted=False)


def build(bug: PlantedBug, flavour: str = "cov") -> Path:
    """Compile the walker library of `bug` (if its sources changed) and return its path."""
    return _compile(bug.name, [bug.name] if bug.planted else [], flavour)


def build_combined(bugs: Sequence[PlantedBug], flavour: str = "plain") -> Path:
    """One walker library with every bug of `bugs` planted at once."""
    if len(bugs) < 2 or not all(b.planted for b in bugs):
        raise UserError(f"a combined walker needs two planted bugs or more, not "
                        f"{[b.name for b in bugs]}")
    return _compile("+".join(b.name for b in bugs), [b.name for b in bugs], flavour)


def _file_stem(name: str) -> str:
    """`name` as a file name: a combination of many bugs is longer than a file name may be
    (255 bytes), so a long one is named by its hash."""
    if len(name) <= NAME_MAX:
        return name
    return f"combined-{hashlib.sha1(name.encode()).hexdigest()[:12]}"


def source_flags(folder: Path) -> list[str]:
    """Flags that make the debug information of sources written into `folder` name the
    reference walker's files instead."""
    return [f"-ffile-prefix-map={folder}={planted_sources.REFERENCE_SOURCES}"]


def _compile(name: str, bugs: Sequence[str], flavour: str) -> Path:
    if flavour not in FLAVOUR_FLAGS:
        raise UserError(f"unknown flavour {flavour!r}; one of {sorted(FLAVOUR_FLAGS)}")
    out = BUILD_DIR / f"{_file_stem(name)}-{flavour}.so"
    patches = [planted_sources.patch_path(bug) for bug in bugs]
    inputs = [*(WALKER_SOURCES / file for file in WALKER_FILES), *INCLUDE.rglob("*.h"), *patches,
              Path(__file__), Path(planted_sources.__file__)]
    if out.exists() and out.stat().st_mtime >= max(p.stat().st_mtime for p in inputs):
        return out
    clang = shutil.which(os.environ.get("CLANG", "clang"))
    if clang is None:
        raise MissingDependencyError("clang not found on PATH (needed to build planted walkers)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")  # builds in threads
    folder = tmp.with_suffix(".src")
    try:
        sources = planted_sources.write(bugs, folder, WALKER_FILES)
        command = [clang, *CFLAGS, *FLAVOUR_FLAGS[flavour], *source_flags(folder),
                   f"-I{INCLUDE}", *map(str, sources), "-o", str(tmp)]
        result = subprocess.run(command, capture_output=True, text=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if result.returncode != 0:
        raise UserError(f"building planted walker {name!r} failed: {result.stderr.strip()}")
    tmp.replace(out)
    return out
