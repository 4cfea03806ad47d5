"""A core file (the kernel's or gdb's `gcore`) as a snapshot: a thread's registers from its
NT_PRSTATUS note, the stack bytes from sp up out of the PT_LOAD segment holding sp, and the
module map from the NT_FILE note (a mapping is executable where the mapped file's own program
headers say so: a core leaves read-only code out of its segments), read with pyelftools. No
truth: a core's chain is not known; its replay is judged by repetition.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from walkfuzz.core.errors import CaseFormatError, UserError
from walkfuzz.targets.native.snapshot import format as fmt

# struct elf_prstatus on x86-64: 112 bytes of signal and process fields, then pr_reg, the 27
# words of user_regs_struct in this order.
PRSTATUS_REGS_AT = 112
USER_REGS = ("r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx",
             "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base",
             "gs_base", "ds", "es", "fs", "gs")
PF_X = 1


def _notes(elf: Any) -> list[Any]:
    return [n for seg in elf.iter_segments() if seg.header.p_type == "PT_NOTE"
            for n in seg.iter_notes()]


def _registers(desc: bytes) -> tuple[int, ...]:
    """The DWARF-ordered registers of one NT_PRSTATUS description."""
    words = struct.unpack_from(f"<{len(USER_REGS)}Q", desc, PRSTATUS_REGS_AT)
    by_name = dict(zip(USER_REGS, words, strict=True))
    return tuple(by_name[name] for name in fmt.REG_NAMES)


def _code_offsets(path: str) -> list[tuple[int, int]]:
    """[start, end) file offsets of the executable segments of the ELF file at path."""
    try:
        with open(path, "rb") as stream:
            return [(s.header.p_offset & ~0xFFF, s.header.p_offset + s.header.p_filesz)
                    for s in ELFFile(stream).iter_segments()
                    if s.header.p_type == "PT_LOAD" and s.header.p_flags & PF_X]
    except (ELFError, OSError):
        return []  # not an ELF file (a locale archive), or gone: no code there


def _identity(path: str) -> tuple[str, int]:
    """The device and inode a maps line shows for the file (NT_FILE has neither)."""
    try:
        st = os.stat(path)
    except OSError:
        return "00:00", 0
    return f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}", st.st_ino


def _map(notes: list[Any]) -> list[fmt.Mapping]:
    files = [n.n_desc for n in notes if n.n_type == "NT_FILE"]
    if not files:
        return []
    table = files[0]
    code: dict[str, list[tuple[int, int]]] = {}
    out = []
    for entry, raw in zip(table.Elf_Nt_File_Entry, table.filename, strict=True):
        name = raw.decode(errors="replace")
        offset = entry.page_offset * table.page_size
        if name not in code:
            code[name] = _code_offsets(name)
        exec_ = any(start <= offset < end for start, end in code[name])
        device, inode = _identity(name)
        out.append(fmt.Mapping(entry.vm_start, entry.vm_end, f"r{'-x' if exec_ else '--'}p",
                               offset, name, device, inode))
    return out


def _stack(elf: Any, sp: int, limit: int) -> bytes:
    for seg in elf.iter_segments():
        h = seg.header
        if h.p_type == "PT_LOAD" and h.p_vaddr <= sp < h.p_vaddr + h.p_filesz:
            at = sp - h.p_vaddr
            return bytes(seg.data()[at:at + limit])
    raise CaseFormatError("core", f"no segment of the core holds the thread's sp {sp:#x}")


def from_core(path: Path, thread: int = 0, stack_bytes: int = fmt.MAX_STACK) -> fmt.Snapshot:
    """Thread number `thread` (in note order; 0 is the one that crashed or the first) of the
    core at `path`."""
    try:
        with path.open("rb") as stream:
            elf = ELFFile(stream)
            if elf.header.e_type != "ET_CORE" or elf.header.e_machine != "EM_X86_64":
                raise CaseFormatError(str(path), f"not an x86-64 core file "
                                      f"({elf.header.e_type}, {elf.header.e_machine})")
            notes = _notes(elf)
            threads = [n.n_desc for n in notes if n.n_type == "NT_PRSTATUS"]
            if not 0 <= thread < len(threads):
                raise UserError(f"--thread {thread}: the core {path} has {len(threads)} "
                                "threads (numbered from 0)")
            regs = _registers(threads[thread])
            stack = _stack(elf, regs[fmt.RSP], stack_bytes)
            maps = _map(notes)
    except (ELFError, OSError, struct.error) as err:
        raise CaseFormatError(str(path), f"not a readable core file ({err})") from err
    return fmt.Snapshot(regs, regs[fmt.RSP], stack).with_map(maps)
