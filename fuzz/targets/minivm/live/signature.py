"""What a failed live sample is as a finding: kind, location and shape from the live oracle's
verdict, the same whether the sample was just drained from a live run
(walkfuzz.targets.minivm.live.drain)
or its case was replayed (walkfuzz.targets.minivm.replayer: wf_live_replay), so both give one
signature.

  class (WF_LIVE_CLS_*)  -> kind invalid-trace (contract: contract), location check:live-<class>
  fault                  -> kind crash, location the faulting pc's function and source line
  hang                   -> kind hang, location the function the watchdog stopped
  (walkfuzz.core.symbolize; the source file and line also go into details["source"])
  shape                  -> wf_shape_kind of the walked frames up to the first difference
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from walkfuzz.core.symbolize import Located, locate
from walkfuzz.findings.finding import Finding, FindingKind
from walkfuzz.targets.minivm.finding import SHAPE_NAMES

TARGET = "minivm"
HARNESS = "stress"  # a case with EXPECTED: replayed against the live oracle
CLASS_NAMES = ("missing", "extra", "wrong-method", "wrong-bci", "wrong-type", "truncated",
               "cycle", "contract", "wrong-result")
FAULT, HANG = -1, -2
CONTRACT = CLASS_NAMES.index("contract")


def class_name(cls: int) -> str:
    """'fault', 'hang' or the invalid-trace class."""
    return {FAULT: "fault", HANG: "hang"}.get(cls) or CLASS_NAMES[cls]


def kind_of(cls: int) -> FindingKind:
    if cls == FAULT:
        return "crash"
    if cls == HANG:
        return "hang"
    return "contract" if cls == CONTRACT else "invalid-trace"


def located(cls: int, fault_pc: int) -> Located:
    """The location of a failed sample, with the faulting pc's source line for a fault or hang."""
    if cls in (FAULT, HANG):
        return locate(fault_pc, hang=cls == HANG)
    return Located(f"check:live-{CLASS_NAMES[cls]}")


def shape_of(codes: Iterable[int]) -> tuple[str, ...]:
    return tuple(SHAPE_NAMES.get(c, "other") for c in codes)


def live_finding(cls: int, fault_pc: int, shape: Iterable[int], data: bytes,
                 details: Mapping[str, object]) -> Finding:
    """The finding of a failed live sample (or of its case replayed)."""
    where = located(cls, fault_pc)
    if where.source is not None:
        details = {**details, "source": where.source}
    return Finding(kind=kind_of(cls), target=TARGET, harness=HARNESS, location=where.location,
                   shape=shape_of(shape), data=data, details=details)


def key_signature(cls: int, fault_pc: int, tail: int) -> Finding:
    """A data-less finding of a signature key (class, fault pc, last shape kind) as the C side
    counts them: its signature is that of every sample counted under the key."""
    return live_finding(cls, fault_pc, (tail,) if tail else (), b"", {})
