"""The HotSpot target's inputs, perturbation records: what the HotSpot agent does to pc, sp and
fp of a copied ucontext before it calls AsyncGetCallTrace. The agent's C codec
(native/agents/hotspot/wf_hs_record.c) is the other half; both read every version, and
tests/native/test_hotspot_record_c.py checks that they agree.

Version 1 (27 bytes, no version byte; its first byte, pc's op, is below 0x80):

    offset  0      1..8       9     10..17     18    19..26
           +------+----------+-----+----------+-----+----------+
           |op pc | value pc |op sp| value sp |op fp| value fp |      little-endian
           +------+----------+-----+----------+-----+----------+

Version 2 (31 bytes): a version byte, then each register's op, base and value.

    offset  0     1   2    3..10   11  12   13..20  21  22   23..30
           +----+---+----+-------+---+----+-------+---+----+-------+
           |0x82|op |base| value |op |base| value |op |base| value |
           +----+---+----+-------+---+----+-------+---+----+-------+
                 '------ pc ----' '------ sp ----' '------ fp ----'

op: keep, add, xor, set. The operand is `base + value` (mod 2**64), where base is an address
the agent finds in any JVM at the moment of the call (BASES); version 1 has only `abs` (0),
and decodes its op byte modulo 4, as it always did. A first byte of 0x80 or more names a
version (0x80 | n); one this code does not know is a RecordError.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from walkfuzz.core.errors import UserError

HARNESS = "perturb"  # the one harness: its inputs are records, the name its findings carry
V1_SIZE = 27
V2_SIZE = 31
V2_TAG = 0x82
VERSION_FLAG = 0x80
OPS = ("keep", "add", "xor", "set")
KEEP, ADD, XOR, SET = range(4)
REGS = ("pc", "sp", "fp")
# The order is the wire value (wf_hs.h, wf_hs_base). Each is an address of the sampled JVM:
BASES = (
    "abs",             # 0: none, the value is absolute
    "stack_hi",        # the sampled thread's stack top (highest address, exclusive)
    "stack_lo",        # the sampled thread's stack end (lowest address)
    "sp",              # the interrupted sp itself
    "code",            # the start of the code cache (lowest anonymous executable mapping)
    "libjvm",          # libjvm.so's load base
    "heap",            # the start of the Java heap (largest anonymous read-write mapping)
    "other_stack_hi",  # the stack top of the next live workload thread after the sampled one
)
ABS = 0
MASK64 = (1 << 64) - 1


class RecordError(UserError):
    """Bytes that are not a perturbation record this walkfuzz can read."""


@dataclass(frozen=True)
class RegOp:
    """What happens to one register: `op` with operand base + value."""

    op: int = KEEP
    base: int = ABS
    value: int = 0

    def describe(self, name: str) -> str:
        if self.op == KEEP:
            return f"{name} keep"
        if self.base == ABS:
            return f"{name} {OPS[self.op]} {self.value:#x}"
        signed = self.value - (1 << 64) if self.value >> 63 else self.value
        sign = "-" if signed < 0 else "+"
        return f"{name} {OPS[self.op]} {BASES[self.base]}{sign}{abs(signed):#x}"


@dataclass(frozen=True)
class Record:
    """One perturbation record: pc, sp, fp in that order."""

    regs: tuple[RegOp, RegOp, RegOp]
    version: int = 2

    def describe(self) -> str:
        """'pc keep, sp add 0x40, fp set stack_hi-0x7'."""
        return ", ".join(r.describe(name) for r, name in zip(self.regs, REGS, strict=True))

    @property
    def relative(self) -> bool:
        """Whether any register is set relative to a base (layout-independent)."""
        return any(r.base != ABS for r in self.regs if r.op != KEEP)

    @property
    def pc_kept(self) -> bool:
        return self.regs[0].op == KEEP

    def encode(self) -> bytes:
        """The bytes of this record in its own version (version 1 only holds `abs` bases)."""
        if self.version == 1:
            if self.relative:
                raise RecordError(f"record {self.describe()!r} has a base: version 1 has none")
            return b"".join(bytes([r.op]) + r.value.to_bytes(8, "little") for r in self.regs)
        return bytes([V2_TAG]) + b"".join(
            bytes([r.op, r.base]) + r.value.to_bytes(8, "little") for r in self.regs)

    def apply(self, regs: tuple[int, int, int],
              bases: Mapping[str, int | None]) -> tuple[int, int, int] | None:
        """pc, sp, fp after the record, or None when a base it needs is unknown (0 or absent;
        the agent then skips the call). `bases` maps BASES names to addresses; `sp` is regs[1]."""
        known = {**bases, "sp": regs[1]}
        out = []
        for value, r in zip(regs, self.regs, strict=True):
            base = 0 if r.base == ABS else known.get(BASES[r.base]) or 0
            if r.op != KEEP and r.base != ABS and base == 0:
                return None  # 0 is "not known" for every base, as in the agent
            operand = (base + r.value) & MASK64
            out.append(value if r.op == KEEP else
                       (value + operand) & MASK64 if r.op == ADD else
                       value ^ operand if r.op == XOR else operand)
        return out[0], out[1], out[2]


def record_size(first_byte: int) -> int:
    """Size of the record that starts with this byte; RecordError for an unknown version."""
    if first_byte < VERSION_FLAG:
        return V1_SIZE
    if first_byte == V2_TAG:
        return V2_SIZE
    raise RecordError(f"unknown perturbation record version {first_byte & 0x7f} "
                      f"(first byte {first_byte:#04x}); this walkfuzz reads versions 1 and 2")


def _decode_v2(b: bytes) -> Record:
    regs = []
    for r, name in enumerate(REGS):
        op, base = b[1 + r * 10], b[2 + r * 10]
        if op >= len(OPS):
            raise RecordError(f"{name} op {op} is not one of 0..3 ({', '.join(OPS)})")
        if base >= len(BASES):
            raise RecordError(f"{name} base {base} is not one of 0..{len(BASES) - 1} "
                              f"({', '.join(BASES)})")
        regs.append(RegOp(op, base, int.from_bytes(b[3 + r * 10:11 + r * 10], "little")))
    return Record((regs[0], regs[1], regs[2]), version=2)


def _decode_v1(b: bytes) -> Record:
    regs = [RegOp(b[r * 9] % len(OPS), ABS, int.from_bytes(b[r * 9 + 1:r * 9 + 9], "little"))
            for r in range(len(REGS))]
    return Record((regs[0], regs[1], regs[2]), version=1)


def decode(data: bytes) -> Record:
    """The record at the start of `data`; RecordError when there is none or it is unreadable."""
    if not data:
        raise RecordError("no perturbation record: the input is empty")
    size = record_size(data[0])
    if len(data) < size:
        raise RecordError(f"perturbation record cut short: {len(data)} of {size} bytes")
    return _decode_v1(data[:size]) if size == V1_SIZE else _decode_v2(data[:size])


def records(data: bytes) -> Iterator[tuple[Record, bytes]]:
    """Each whole record of a concatenation, with its bytes; a cut-off tail is ignored (as the
    agent always did)."""
    at = 0
    while at < len(data):
        size = record_size(data[at])
        if len(data) - at < size:
            return
        yield decode(data[at:at + size]), data[at:at + size]
        at += size
