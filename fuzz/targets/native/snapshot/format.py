"""The snapshot file: registers, truth ranges, module map and stack bytes (layout in
native/agents/snapshot/wf_snapshot.h and docs/native-snapshots.md). The C side parses the same
bytes; this side writes them, reads them for display and picks the module map a stack needs.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.core.errors import CaseFormatError

MAGIC = b"WFSNAP1\0"
HEADER = 168
REGS = 17
MAX_TRUTH = 20
MAX_MAP = 32768
MAX_STACK = 65536
FLAG_EXACT_PC = 1
# DWARF x86-64 order, the file's (and libunwind's UNW_X86_64_*, libdw's).
REG_NAMES = ("rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
             "r12", "r13", "r14", "r15", "rip")
RSP, RIP = 7, 16
_HEAD = struct.Struct("<8sHHIQQ")  # magic, flags, truth count, map length, stack address, 0


@dataclass(frozen=True)
class Mapping:
    """One /proc/PID/maps line of a file-backed mapping."""

    start: int
    end: int
    perms: str
    offset: int
    path: str
    device: str = "00:00"
    inode: int = 0  # libdw tells one module's mappings from the next by device and inode

    def line(self) -> str:
        return (f"{self.start:x}-{self.end:x} {self.perms} {self.offset:08x} {self.device} "
                f"{self.inode} {self.path}")


@dataclass(frozen=True)
class Snapshot:
    regs: tuple[int, ...]  # REGS values, DWARF order
    stack_addr: int
    stack: bytes
    map_text: str = ""
    truth: tuple[tuple[int, int], ...] = ()  # [start, end) per frame, innermost first
    flags: int = FLAG_EXACT_PC

    def encode(self) -> bytes:
        mapping = self.map_text.encode()
        head = _HEAD.pack(MAGIC, self.flags, len(self.truth), len(mapping), self.stack_addr, 0)
        regs = struct.pack(f"<{REGS}Q", *self.regs)
        truth = b"".join(struct.pack("<QQ", start, end) for start, end in self.truth)
        return head + regs + truth + mapping + self.stack[:MAX_STACK]

    def mappings(self) -> list[Mapping]:
        return parse_maps(self.map_text)

    def with_map(self, maps: Iterable[Mapping]) -> Snapshot:
        """The same snapshot with the map's modules that its registers and stack point into."""
        text = "".join(f"{m.line()}\n" for m in modules_needed(self, maps))
        return Snapshot(self.regs, self.stack_addr, self.stack, text, self.truth, self.flags)


def is_snapshot(data: bytes) -> bool:
    return data[: len(MAGIC)] == MAGIC


def decode(data: bytes, source: str = "snapshot") -> Snapshot:
    """The snapshot in data; CaseFormatError naming what is wrong (the C parser's checks)."""
    if len(data) < HEADER or not is_snapshot(data):
        raise CaseFormatError(source, f"not a walkfuzz snapshot ({len(data)} bytes, no "
                              f"{MAGIC[:7].decode()} magic)")
    _, flags, ntruth, map_len, stack_addr, _ = _HEAD.unpack_from(data)
    if ntruth > MAX_TRUTH or map_len > MAX_MAP:
        raise CaseFormatError(source, f"{ntruth} truth ranges (max {MAX_TRUTH}) or a map of "
                              f"{map_len} bytes (max {MAX_MAP})")
    map_at = HEADER + 16 * ntruth
    if len(data) < map_at + map_len:
        raise CaseFormatError(source, f"{len(data)} bytes end inside the module map (needs "
                              f"{map_at + map_len})")
    regs = struct.unpack_from(f"<{REGS}Q", data, 32)
    truth = tuple(struct.unpack_from("<QQ", data, HEADER + 16 * i) for i in range(ntruth))
    text = data[map_at:map_at + map_len].decode(errors="replace")
    return Snapshot(regs, stack_addr, data[map_at + map_len:][:MAX_STACK], text, truth, flags)


def parse_maps(text: str) -> list[Mapping]:
    """The file-backed lines of a /proc/PID/maps text (anonymous, [special] and malformed ones
    dropped)."""
    out = []
    for line in text.splitlines():
        fields = line.split(None, 5)
        if len(fields) < 6 or not fields[5].startswith("/"):
            continue
        start, _, end = fields[0].partition("-")
        try:
            out.append(Mapping(int(start, 16), int(end, 16), fields[1], int(fields[2], 16),
                               fields[5], fields[3], int(fields[4])))
        except ValueError:
            continue  # a line a mutation broke: the C side skips it too
    return out


def code_pointers(snapshot: Snapshot) -> set[int]:
    """The pc and every aligned stack word: where return addresses can be."""
    stack = snapshot.stack[: len(snapshot.stack) // 8 * 8]
    return {snapshot.regs[RIP], *struct.unpack(f"<{len(stack) // 8}Q", stack)}


def loaded_runs(maps: Iterable[Mapping]) -> list[list[Mapping]]:
    """The mappings grouped as the loader made them: runs of one file's mappings, each
    starting where the previous one ends. Another mapping of the same file elsewhere (a
    process that maps a library's file to read it, as this one does for snapshots) is a run of
    its own."""
    runs: list[list[Mapping]] = []
    for m in sorted(maps, key=lambda m: m.start):
        if runs and runs[-1][-1].path == m.path and runs[-1][-1].end == m.start:
            runs[-1].append(m)
        else:
            runs.append([m])
    return runs


def modules_needed(snapshot: Snapshot, maps: Iterable[Mapping]) -> list[Mapping]:
    """The loaded modules whose executable code the snapshot points into, each whole (an
    unwinder finds a module's unwind tables through its first mapping) and nothing else: libdw
    (dwfl_linux_proc_maps_report) merges consecutive lines of one file into one module based at
    the first, so a second mapping of a loaded library's file listed just before it would shift
    that module's addresses."""
    pointers = sorted(code_pointers(snapshot))
    needed = []
    for run in loaded_runs(maps):
        code = [(m.start, m.end) for m in run if "x" in m.perms]
        at = [bisect.bisect_left(pointers, start) for start, _ in code]
        if any(i < len(pointers) and pointers[i] < end for i, (_, end) in zip(at, code,
                                                                            strict=True)):
            needed.extend(run)
    return needed


def split_walked(data: bytes) -> tuple[bytes, bytes, bytes]:
    """(the fixed part before the registers, the registers and stack bytes, the fixed part
    between them): what a campaign mutates is the middle, rust-minidump's walk_stack model of
    a register context and stack bytes against fixed module addresses. data must decode."""
    decode(data)
    _, _, ntruth, map_len, _, _ = _HEAD.unpack_from(data)
    map_end = HEADER + 16 * ntruth + map_len
    regs = data[32:HEADER]
    return data[:32], regs + data[map_end:], data[HEADER:map_end]


def join_walked(head: bytes, walked: bytes, middle: bytes) -> bytes:
    """The snapshot of split_walked's parts, the registers zero-padded to their 136 bytes."""
    regs = walked[:HEADER - 32].ljust(HEADER - 32, b"\0")
    return head + regs + middle + walked[HEADER - 32:][:MAX_STACK]


def is_snapshot_file(path: Path) -> bool:
    """Whether the file at path starts with the snapshot magic (False if it cannot be read)."""
    try:
        with path.open("rb") as stream:
            return is_snapshot(stream.read(len(MAGIC)))
    except OSError:
        return False
