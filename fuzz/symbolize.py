"""A faulting pc as a stable location: `library!function+0xoffset`.

The library comes from dladdr (which object holds the pc, at what base), the function from
llvm-symbolizer on that object's debug info (walkers are built with -g), falling back to the
nearest exported symbol. Addresses are turned into offsets so that a location is the same on
every run despite ASLR. Results are cached per pc: a campaign hits the same few pcs again and
again, and a finding's signature needs its location before it can be deduplicated.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import subprocess

SYMBOLIZERS = ("llvm-symbolizer-14", "llvm-symbolizer")


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


_libc = ctypes.CDLL(None)
_libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]


@functools.cache
def _symbolizer() -> str | None:
    return next((p for p in map(shutil.which, SYMBOLIZERS) if p), None)


@functools.cache
def _function_at(library: str, offset: int) -> str | None:
    """The function holding `offset` of `library`, from its debug info, or None."""
    tool = _symbolizer()
    if tool is None:
        return None
    try:
        out = subprocess.run([tool, "--obj", library, "--output-style=LLVM", "--functions=linkage",
                              "--inlining=false", hex(offset)], capture_output=True, text=True,
                             timeout=10).stdout.split("\n")
    except (OSError, subprocess.TimeoutExpired):
        return None
    name = out[0].strip() if out else ""
    return None if not name or name == "??" else name


@functools.cache
def symbolize(pc: int, with_offset: bool = True) -> str:
    """`lib.so!function+0x1a` (or `lib.so!function` without the offset, for hangs, whose pc is
    wherever the loop was interrupted), `lib.so+0x1234` if no function is known, `0x...` if no
    object holds pc."""
    info = _DlInfo()
    if pc == 0 or _libc.dladdr(ctypes.c_void_p(pc), ctypes.byref(info)) == 0 or not info.dli_fname:
        return hex(pc)
    library = os.fsdecode(info.dli_fname)
    base = info.dli_fbase or 0
    offset = pc - base
    name = os.path.basename(library)
    function = _function_at(library, offset)
    if function is not None:
        start = _symbol_start(library, function)
        suffix = f"+{offset - start:#x}" if with_offset and start is not None else ""
        return f"{name}!{function}{suffix}"
    if info.dli_sname:
        symbol = info.dli_sname.decode(errors="replace")
        suffix = f"+{pc - (info.dli_saddr or 0):#x}" if with_offset else ""
        return f"{name}!{symbol}{suffix}"
    return f"{name}+{offset:#x}" if with_offset else name


@functools.cache
def _symbol_start(library: str, function: str) -> int | None:
    """The function's start offset from the object's symbol table (static functions too)."""
    nm = shutil.which("nm")
    if nm is None:
        return None
    listing = subprocess.run([nm, "--defined-only", library], capture_output=True, text=True)
    for line in listing.stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[2] == function:
            return int(fields[0], 16)
    return None
