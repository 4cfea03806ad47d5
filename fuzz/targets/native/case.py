"""A libunwind fuzz input, decoded in Python for people: replay output and finding details.

The C side (native/agents/native/wf_uw_input.c) is what runs; this mirrors its layout
(documented in wf_unwind.h) so that a stored input reads as JSON. Any bytes decode.
"""

from __future__ import annotations

from dataclasses import dataclass

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
class LibunwindCase:
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


def decode(data: bytes) -> LibunwindCase:
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
    return LibunwindCase(
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
