"""Symbols of ELF objects, the one module that reads them: walker libraries, the core,
libunwind, libjvm.

    symbolize(pc)                   a pc of this process: `lib.so!function+0x1a`
    object_location(path, offset)   an offset in any ELF object: `function+0x1a`
    exported_functions(path)        the functions an object's dynamic symbol table defines

The function holding an address and its start come from llvm-symbolizer (Debian package llvm):
from the object's debug info, else its symbol table, else its dynamic symbol table (a stripped
library), demangled. llvm-nm lists dynamic symbols. Addresses are turned into offsets so that a
location is the same on every run despite ASLR. Results are cached: a campaign hits the same few
pcs again and again, and a finding's signature needs its location before it can be deduplicated.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.core.errors import MissingDependencyError, UserError

SYMBOLIZERS = ("llvm-symbolizer-14", "llvm-symbolizer")
NMS = ("llvm-nm-14", "llvm-nm")
TOOL_TIMEOUT_S = 60  # libjvm's symbol table takes a tenth of a second; a loaded machine more
START_LINE = "Function start address:"  # llvm-symbolizer --verbose
FUNCTION_TYPES = frozenset("TtWwi")  # llvm-nm's letters of a defined function


class ElfError(UserError):
    """A file that is not a readable ELF object; the message names it and the tool's reason."""


@dataclass(frozen=True)
class Function:
    """A function of an object: its demangled name and start offset (None if not known)."""

    name: str
    start: int | None


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


@functools.cache
def function_at(path: str, offset: int) -> Function | None:
    """The function holding `offset` of the object at `path`, or None when none does."""
    argv = [_tool(SYMBOLIZERS), "--obj", path, "--output-style=LLVM", "--functions=linkage",
            "--inlining=false", "--verbose", hex(offset)]
    try:
        lines = subprocess.run(argv, capture_output=True, text=True,
                               timeout=TOOL_TIMEOUT_S).stdout.splitlines()
    except subprocess.TimeoutExpired:
        return None
    name = lines[0].strip() if lines else ""
    if not name or name == "??":
        return None
    starts = [line.split(":", 1)[1] for line in lines if line.strip().startswith(START_LINE)]
    return Function(name, int(starts[0], 16) if starts else None)


def object_location(path: Path, offset: int) -> str:
    """`function+0xoff` of the function holding `offset` in `path`, `+0xoffset` if none does."""
    function = function_at(str(path), offset)
    if function is None:
        return f"+{offset:#x}"
    if function.start is None:
        return function.name
    return f"{function.name}+{offset - function.start:#x}"


@functools.cache
def symbolize(pc: int, with_offset: bool = True) -> str:
    """`lib.so!function+0x1a` (or `lib.so!function` without the offset, for hangs, whose pc is
    wherever the loop was interrupted), `lib.so+0x1234` if no function is known, `0x...` if no
    object holds pc."""
    info = _DlInfo()
    if pc == 0 or _libc.dladdr(ctypes.c_void_p(pc), ctypes.byref(info)) == 0 or not info.dli_fname:
        return hex(pc)
    library = os.fsdecode(info.dli_fname)
    offset = pc - (info.dli_fbase or 0)
    name = os.path.basename(library)
    function = function_at(library, offset)
    if function is not None:
        start = function.start if with_offset else None
        return f"{name}!{function.name}" + (f"+{offset - start:#x}" if start is not None else "")
    if info.dli_sname:
        symbol = info.dli_sname.decode(errors="replace")
        suffix = f"+{pc - (info.dli_saddr or 0):#x}" if with_offset else ""
        return f"{name}!{symbol}{suffix}"
    return f"{name}+{offset:#x}" if with_offset else name


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
