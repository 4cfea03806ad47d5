"""The native target's inputs: a perturb record (59 bytes: a generated chain, how its context
is captured, up to four perturbations of it) and a stack snapshot (walkfuzz.targets.native.snapshot
.format), told apart by their bytes (`harness_of`, `is_snapshot_file`), each described for
people (`describe`).

The perturb record is decoded here for replay output and finding details; the C side
(native/agents/native/wf_uw_input.c) is what runs, and this mirrors its layout (documented in
wf_unwind.h) so that a stored input reads as JSON. Any bytes decode. `unperturbed` writes the
record of a chain walked unperturbed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from walkfuzz.targets.native.snapshot import format as fmt
from walkfuzz.targets.native.snapshot.format import is_snapshot as is_snapshot
from walkfuzz.targets.native.snapshot.format import is_snapshot_file as is_snapshot_file

INPUT_SIZE = 59
MAX_DEPTH = 16
CHAIN_FUNCTIONS = 16
MAX_PERTURB = 4
OFF_COUNT = 18
OFF_PERTURB = 19
PERTURB_SIZE = 10

# By wf_uw_kind.
KIND_NAMES = (
    "none", "add-small", "add-grid", "bitflip", "zero", "random", "noncanonical", "page-edge",
    "stack-edge", "other-stack", "heap", "code", "trampoline", "swap", "stack-value",
    "stack-pointer", "mid-function",
)
# By register selector % 16 (REG_CHOICES in wf_uw_perturb.c).
REGISTER_NAMES = (
    "rip", "rsp", "rbp", "rip", "rsp", "rbp", "rip", "rsp",
    "rbp", "rbx", "r12", "r13", "r14", "r15", "rax", "rdi",
)
# Kinds that set registers of their own choosing rather than the selected one.
FIXED_REGISTERS = {"trampoline": "rip+rsp", "mid-function": "rip+rsp"}


@dataclass(frozen=True)
class Perturbation:
    register: str
    kind: str
    operand: int

    def describe(self) -> str:
        return f"{self.register}:{self.kind}:{self.operand:#x}"


@dataclass(frozen=True)
class PerturbCase:
    """A perturb record, decoded."""

    capture: str  # "unw_getcontext" or "getcontext"
    signal_frame_flag: bool
    path: tuple[int, ...]  # chain function indices, outermost first
    perturbations: tuple[Perturbation, ...]  # the applied ones (kind "none" dropped)

    @property
    def unperturbed(self) -> bool:
        return not self.perturbations

    def to_json(self) -> dict[str, object]:
        return {
            "capture": self.capture,
            "signal_frame_flag": self.signal_frame_flag,
            "path": list(self.path),
            "perturbations": [p.describe() for p in self.perturbations],
        }


def decode(data: bytes) -> PerturbCase:
    raw = data[:INPUT_SIZE].ljust(INPUT_SIZE, b"\0")
    depth = 1 + raw[1] % MAX_DEPTH
    count = raw[OFF_COUNT] % (MAX_PERTURB + 1)
    applied = []
    for i in range(count):
        chunk = raw[OFF_PERTURB + PERTURB_SIZE * i : OFF_PERTURB + PERTURB_SIZE * (i + 1)]
        kind = KIND_NAMES[chunk[1] % len(KIND_NAMES)]
        if kind == "none":
            continue
        register = FIXED_REGISTERS.get(kind, REGISTER_NAMES[chunk[0] % len(REGISTER_NAMES)])
        applied.append(Perturbation(register, kind, int.from_bytes(chunk[2:10], "little")))
    return PerturbCase(
        capture="getcontext" if raw[0] & 1 else "unw_getcontext",
        signal_frame_flag=not raw[0] & 2,
        path=tuple(b % CHAIN_FUNCTIONS for b in raw[2 : 2 + depth]),
        perturbations=tuple(applied),
    )


def unperturbed(path: list[int] | tuple[int, ...], flags: int = 0) -> bytes:
    """The input that walks the chain `path` (chain function indexes, outermost first)
    unperturbed, captured and initialised as `flags` say: what the oracle checks exactly."""
    if not 1 <= len(path) <= MAX_DEPTH:
        raise ValueError(f"a chain has 1 to {MAX_DEPTH} functions, not {len(path)}: {path}")
    data = bytearray(INPUT_SIZE)
    data[0], data[1] = flags, len(path) - 1
    data[2 : 2 + len(path)] = bytes(path)
    return bytes(data)


# The harness of each input format: what made it, and what replays it.
PERTURB = "perturb"  # a perturbed context of a generated chain, walked live
SNAPSHOT = "snapshot"  # a stack snapshot, walked in remote-memory mode


def harness_of(data: bytes) -> str:
    """The harness whose input `data` is: a snapshot is known by its magic, anything else is
    a perturb record (any bytes decode as one)."""
    return SNAPSHOT if is_snapshot(data) else PERTURB


def describe_snapshot(snapshot: fmt.Snapshot) -> dict[str, Any]:
    """What a snapshot holds, for people: where its stack is, its registers, its modules."""
    return {"stack_address": hex(snapshot.stack_addr), "stack_bytes": len(snapshot.stack),
            "pc": hex(snapshot.regs[fmt.RIP]), "sp": hex(snapshot.regs[fmt.RSP]),
            "modules": sorted({m.path for m in snapshot.mappings()}),
            "truth_ranges": len(snapshot.truth)}


def describe(data: bytes, source: str = "input") -> dict[str, Any]:
    """An input of either format as JSON (CaseFormatError for a snapshot that does not decode)."""
    if is_snapshot(data):
        return describe_snapshot(fmt.decode(data, source))
    return decode(data).to_json()
