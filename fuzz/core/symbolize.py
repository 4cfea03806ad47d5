"""Symbols of ELF objects, the one module that reads them: walker libraries, the core,
libunwind, libjvm.

    locate(pc)                      a pc of this process: its location and source line
    locate_in_object(path, offset)  the same for an offset in any ELF object
    object_location(path, offset)   just the location text
    exported_functions(path)        the functions an object's dynamic symbol table defines

A location names code, never the file it was loaded from nor an address, so that a byte-identical
copy of a walker under another name, or its other build flavour, gives the same signature:

    fault   `function@file.c:LINE`  the innermost (inlined) function holding the pc and the
                                    source line of the faulting instruction, from debug info
            `function@file.c`       debug info that names no line for it (an instruction the
                                    compiler merged from several lines)
            `function+0x1a`         no debug info: the symbol and the offset into it
    hang    `function`              the symbol holding the pc, no line: the watchdog stops the
                                    loop wherever it happens to be

Why a source line and not function+offset: the plain and the cov build of one walker are the
same source compiled twice, and the coverage instrumentation moves every offset (the same fault
was ASGST_NextFrame+0x812 in one and +0xe89 in the other); the line of the faulting load is the
same in both. The innermost function, not the exported one, is named because inlining decisions
differ between builds while the line holding the load does not. The file is the base name: a
checkout in another folder is the same code. Without debug info the offset is all that tells two
faults in one function apart, so those locations differ between builds (build-walker always
passes -g).

The frames come from llvm-symbolizer (Debian package llvm): debug info, else the symbol table,
else the dynamic symbol table (a stripped library); llvm-nm lists dynamic symbols. Results are
cached: a campaign hits the same few pcs again and again, and a finding's signature needs its
location before it can be deduplicated.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.core.errors import MissingDependencyError, UserError

SYMBOLIZERS = ("llvm-symbolizer-14", "llvm-symbolizer")
NMS = ("llvm-nm-14", "llvm-nm")
TOOL_TIMEOUT_S = 60  # libjvm's symbol table takes a tenth of a second; a loaded machine more
FUNCTION_TYPES = frozenset("TtWwi")  # llvm-nm's letters of a defined function
UNKNOWN = "unknown"  # the hang location of a pc in no known function


class ElfError(UserError):
    """A file that is not a readable ELF object; the message names it and the tool's reason."""


@dataclass(frozen=True)
class Frame:
    """One function holding an address, inlined or not: its (linkage) name, the source file
    and line of the address in it, and the line the function starts at (0: not known)."""

    function: str
    file: str = ""
    line: int = 0
    start_line: int = 0


@dataclass(frozen=True)
class Place:
    """An offset of an ELF object: the functions holding it, innermost (inlined) first, the last
    the symbol itself, and the symbol's start offset (None if not known)."""

    offset: int
    frames: tuple[Frame, ...] = ()
    start: int | None = None

    @property
    def fault_location(self) -> str:
        """`function@file.c:LINE`, `function@file.c`, `function+0x1a` or `+0xoffset`."""
        if not self.frames:
            return f"+{self.offset:#x}"
        inner = self.frames[0]
        if inner.file:
            name = os.path.basename(inner.file)
            return f"{inner.function}@{name}:{inner.line}" if inner.line else \
                f"{inner.function}@{name}"
        if self.start is None:
            return inner.function
        return f"{inner.function}+{self.offset - self.start:#x}"

    @property
    def hang_location(self) -> str:
        """The symbol holding the offset, without offset or line."""
        return self.frames[-1].function if self.frames else UNKNOWN

    def source(self, hang: bool = False) -> str | None:
        """`/path/of/file.c:LINE` from debug info, None without: for a fault the innermost
        function's line (its first line when the address has none), for a hang the first line
        of the symbol's function."""
        if not self.frames:
            return None
        frame = self.frames[-1] if hang else self.frames[0]
        line = frame.start_line if hang else frame.line or frame.start_line
        return f"{frame.file}:{line}" if frame.file and line else None


@dataclass(frozen=True)
class Located:
    """Where a pc is: its location text (part of a signature) and its source line, if known."""

    location: str
    source: str | None = None


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


_libc = ctypes.CDLL(None)
_libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]


@functools.cache
def _tool(names: tuple[str, ...]) -> str:
    found = next((p for p in map(shutil.which, names) if p), None)
    if found is None:
        raise MissingDependencyError(f"{names[-1]} not found on PATH (Debian package llvm; "
                                     "`make setup` installs it)")
    return found


def _frame(doc: dict[str, object]) -> Frame:
    def number(key: str) -> int:
        value = doc.get(key)
        return value if isinstance(value, int) else 0

    return Frame(str(doc.get("FunctionName") or ""), str(doc.get("FileName") or ""),
                 number("Line"), number("StartLine"))


@functools.cache
def _place(path: str, offset: int) -> Place | None:
    """What llvm-symbolizer says of `offset` in `path`; None when it cannot say (timeout)."""
    argv = [_tool(SYMBOLIZERS), "--obj", path, "--output-style=JSON", "--functions=linkage",
            "--inlining=true", hex(offset)]
    try:
        out = subprocess.run(argv, capture_output=True, text=True,
                             timeout=TOOL_TIMEOUT_S).stdout
        docs = json.loads(out or "[]")
    except (subprocess.TimeoutExpired, ValueError):
        return None
    symbols = docs[0].get("Symbol", []) if docs and isinstance(docs[0], dict) else []
    frames = tuple(f for f in map(_frame, symbols) if f.function and f.function != "??")
    if not frames:
        return Place(offset)
    start_text = str(symbols[-1].get("StartAddress") or "")
    start = int(start_text, 16) if start_text.startswith("0x") else None
    return Place(offset, frames, start)


def place_in_object(path: Path, offset: int) -> Place:
    """The functions holding `offset` of the object at `path` (none when no symbol does)."""
    return _place(str(path), offset) or Place(offset)


def object_location(path: Path, offset: int) -> str:
    """The fault location of `offset` in `path` (see the module docstring)."""
    return place_in_object(path, offset).fault_location


def locate_in_object(path: Path, offset: int, hang: bool = False) -> Located:
    """Location and source line of `offset` in `path`, as a fault or (hang) a hang."""
    place = place_in_object(path, offset)
    return Located(place.hang_location if hang else place.fault_location, place.source(hang))


def locate(pc: int, hang: bool = False) -> Located:
    """Location and source line of a pc of this process, as a fault or (hang) a hang; a pc no
    loaded object holds is `0x...` (walkfuzz.findings.finding normalizes the address away)."""
    info = _DlInfo()
    if pc == 0 or _libc.dladdr(ctypes.c_void_p(pc), ctypes.byref(info)) == 0 or not info.dli_fname:
        return Located(hex(pc))
    base = info.dli_fbase or 0
    place = _place(os.fsdecode(info.dli_fname), pc - base)
    if place is None and info.dli_sname:  # llvm-symbolizer failed: dladdr's nearest symbol
        symbol = Frame(info.dli_sname.decode(errors="replace"))
        place = Place(pc - base, (symbol,), (info.dli_saddr or base) - base)
    place = place or Place(pc - base)
    return Located(place.hang_location if hang else place.fault_location, place.source(hang))


def exported_functions(path: Path) -> set[str]:
    """Names of the functions `path` defines in its dynamic symbol table (version stripped)."""
    argv = [_tool(NMS), "--dynamic", "--defined-only", str(path)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ElfError(f"{path}: llvm-nm ran past {TOOL_TIMEOUT_S} s") from None
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ElfError(f"{path} is not a readable ELF object: {reason}")
    fields = (line.split() for line in done.stdout.splitlines())
    return {f[2].split("@")[0] for f in fields if len(f) == 3 and f[1] in FUNCTION_TYPES}
