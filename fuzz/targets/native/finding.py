"""The one builder of the native target's findings: every walk, sample, snapshot walk, dead
process and disagreement of the native target becomes a Finding here, so that the fuzz
workers, the libFuzzer harnesses, stress, the differential oracle and every replay name the
same thing the same way.

Every finding has target `native` and names the unwinder that walked in details["unwinder"]
(the differential oracle's: the comma list of the run's). Findings of libunwind's walks stored
before all five unwinders were one target have target `libunwind` (ALIAS): they still read and
replay (`--target libunwind` is an alias of the native target).

Locations, which with the kind and shape make the signature (walkfuzz.findings.finding):
libunwind's walks keep the location they always had (`libunwind.so.8+0x1a2b`, `check:missing`);
every other unwinder's start with its name (`llvm:unw_step+0x1a`, `fp:check:missing`), so a
signature names its unwinder; a fault or a hang names the symbol holding the pc
(walkfuzz.core.symbolize: `function@file.c:LINE` with debug info, else `function+0x1a`) where
libunwind's name its module and offset; a snapshot's walk is `<unwinder>-remote:` and where it
went wrong; a process that died on an input `process-death:SIGSEGV` (`process-stall` for one
that stopped moving).

A live walk's crash or hang has no shape: the faulting pc already names the code path, and the
frame the unwinder stepped from was read from perturbed memory, whose stale contents differ
between processes. An invalid trace keeps the kinds up to the first differing frame, a pc
outside the generated code there being `foreign` (walkfuzz.targets.native.outcome). A
snapshot's walk reads only the snapshot's memory, so its crash keeps the class of the frame it
stepped from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from walkfuzz.core.symbolize import locate
from walkfuzz.findings.finding import Finding, FindingKind
from walkfuzz.targets.native import ALIAS, TARGET
from walkfuzz.targets.native.child import death_location
from walkfuzz.targets.native.differential.judge import Verdict, Walk
from walkfuzz.targets.native.differential.rows import table_rows, walk_text
from walkfuzz.targets.native.inputs import PERTURB, SNAPSHOT, decode
from walkfuzz.targets.native.outcome import Namer, WalkOutcome, expected_kinds, symbol_of
from walkfuzz.targets.native.snapshot import format as fmt
from walkfuzz.targets.native.snapshot.walk import LIBRARIES, SnapshotWalk, describe, frame_kind
from walkfuzz.targets.native.snapshot.walk import step_class as snapshot_step_class
from walkfuzz.targets.native.unwinders import DEFAULT

TARGETS = (TARGET, ALIAS)
# The harnesses of the findings that are not an input format's (inputs.PERTURB, SNAPSHOT).
STRESS = "stress"  # a live sample of the stress workload
DIFFERENTIAL = "differential"  # an input every unwinder walked, their walks compared
STRESS_DIFFERENTIAL = "stress-differential"  # a live sample walked by an unwinder and by fp


def is_native(finding: Finding) -> bool:
    """Whether `finding` is the native target's (under today's name or the old one)."""
    return finding.target in TARGETS


def qualified(unwinder: str, location: str) -> str:
    """A location as `unwinder`'s finding has it (see the module docstring)."""
    return location if unwinder == DEFAULT else f"{unwinder}:{location}"


# ---- a live walk of one input (fuzz workers, the libFuzzer harness, replays) ----------------

def walk_location(outcome: WalkOutcome, namer: Namer) -> str:
    """libunwind's: the pc's module and offset; the others': its symbol where it has one."""
    if outcome.stop in ("fault", "hang") and outcome.fault is not None:
        pc = outcome.fault.pc
        where = namer.describe(pc)
        if namer.unwinder != DEFAULT:
            symbol = symbol_of(pc, hang=outcome.stop == "hang")
            if symbol is not None and not symbol.location.startswith(("+", "0x")):
                where = symbol.location
        where = where if outcome.stop == "fault" else f"watchdog:{where}"
    elif outcome.stop == "cycle":
        where = "check:cycle"
    else:
        where = f"check:{outcome.invalid}"
    return qualified(namer.unwinder, where)


def walk_finding(outcome: WalkOutcome, data: bytes, namer: Namer,
                 harness: str = PERTURB) -> Finding:
    """The finding of a walk whose status is not OK."""
    kind = outcome.finding_kind
    if kind is None:
        raise ValueError(f"walk status {outcome.status} is not a finding")
    fault = outcome.fault
    details: dict[str, object] = {
        "unwinder": namer.unwinder,
        "library": namer.library,
        "case": decode(data).to_json(),
        "stop": outcome.stop,
        "unw_rc": outcome.unw_rc,
        "walked_from": {r: hex(v) for r, v in zip(("rip", "rsp", "rbp"), outcome.walked_from,
                                                   strict=True)},
        "frames": [namer.describe(pc) for _, pc, _ in outcome.frames],
        "frame_kinds": list(outcome.kinds(namer)),
    }
    if kind in ("crash", "hang") and outcome.stop != "cycle" and fault is not None:
        details["fault"] = fault.to_json()
        symbol = symbol_of(fault.pc, hang=outcome.stop == "hang")
        if symbol is not None:
            details["symbol"] = symbol.location
            if symbol.source:
                details["source"] = symbol.source
    if kind == "invalid-trace":
        details["invalid"] = outcome.invalid
        details["first_diff"] = outcome.first_diff
        details["expected"] = expected_kinds(namer, outcome.expected)
    return Finding(kind=kind, target=TARGET, harness=harness,
                   location=walk_location(outcome, namer),
                   shape=outcome.shape(namer), data=data, details=details)


def death_finding(unwinder: str, data: bytes, status: int, stalled: bool = False,
                  details: dict[str, object] | None = None) -> Finding:
    """The finding of an input whose process died (or stalled) on it: a crash (a hang) of
    `unwinder`, at `death_location`."""
    kind: FindingKind = "hang" if stalled else "crash"
    return Finding(kind=kind, target=TARGET, harness=PERTURB,
                   location=qualified(unwinder, death_location(status, stalled)), shape=(),
                   data=data, details=details or {})


# ---- live samples of the stress workload ----------------------------------------------------

def sample_finding(sample: dict[str, Any], unwinder: str) -> Finding:
    """The finding of one kept invalid sample (walkfuzz.targets.native.stress_run)."""
    cut = sample["first_diff"] + 1 if sample["first_diff"] >= 0 else len(sample["walked"])
    return Finding(kind="invalid-trace", target=TARGET, harness=STRESS,
                   location=qualified(unwinder, f"check:{sample['invalid']}"),
                   shape=tuple(sample["walked"][:cut]), data=b"", details=sample)


def counted_finding(count: dict[str, Any], unwinder: str, kept: int) -> Finding:
    """The finding a signature count stands for (the kind at the first difference is all of
    the shape a signature keeps); `kept` invalid samples were kept as examples."""
    return Finding(kind="invalid-trace", target=TARGET, harness=STRESS,
                   location=qualified(unwinder, f"check:{count['invalid']}"),
                   shape=(count["kind"],) if count["kind"] else (), data=b"",
                   details={"unwinder": unwinder, "invalid": count["invalid"],
                            "frame_kind": count["kind"],
                            "example": f"none kept (the first {kept} invalid samples are)"})


# ---- a snapshot walked in remote-memory mode -------------------------------------------------

def snapshot_location(walk: SnapshotWalk) -> str:
    """`<unwinder>-remote:` and where it went wrong: the signature names the unwinder, and a
    remote-memory walk's findings stay apart from the same unwinder's live ones."""
    hang = walk.stop == "hang"
    if walk.stop == "cycle":
        where = "check:cycle"
    else:
        where = locate(walk.fault.pc if walk.fault else 0, hang=hang).location
        where = f"watchdog:{where}" if hang else where
    return f"{walk.unwinder}-remote:{where}"


def snapshot_finding(walk: SnapshotWalk, data: bytes) -> Finding:
    """The finding of a snapshot walk that faulted, hung or cycled (the unwinder's own bugs:
    the snapshot's bytes are data, every read of them is bounds-checked)."""
    kind = walk.finding_kind
    if kind is None:
        raise ValueError(f"walk stop {walk.stop} is not a finding")
    snapshot = fmt.decode(data)
    maps = snapshot.mappings()
    kinds = [frame_kind(snapshot, maps, f) for f in walk.frames]
    details: dict[str, object] = {
        "unwinder": walk.unwinder, "library": LIBRARIES[walk.unwinder], "stop": walk.stop,
        "rc": walk.rc, "frames": describe(snapshot, walk), "frame_kinds": kinds,
        "registers": {n: hex(v) for n, v in zip(fmt.REG_NAMES, snapshot.regs, strict=True)},
    }
    if walk.stop != "cycle" and walk.fault is not None:
        details["fault"] = walk.fault.to_json()
    shape = (walk.unwinder, snapshot_step_class(kinds[-1]) if kinds else "init")
    return Finding(kind=kind, target=TARGET, harness=SNAPSHOT, location=snapshot_location(walk),
                   shape=shape, data=data, details=details)


# ---- the differential oracle -----------------------------------------------------------------

def disagreement_finding(verdict: Verdict, walks: Sequence[Walk], known: Sequence[int] | None,
                         data: bytes) -> Finding:
    """The invalid-trace finding of a disagreement, its per-unwinder table in the details."""
    names = [w.unwinder for w in walks]
    details: dict[str, object] = {
        "unwinder": ",".join(names),
        "odd": list(verdict.odd),
        "kind": verdict.kind,
        "first_diff": verdict.at,
        "walks": table_rows(walks),
        "truth": walk_text(known) if known is not None else None,
        "case": decode(data).to_json(),
    }
    return Finding(kind="invalid-trace", target=TARGET, harness=DIFFERENTIAL,
                   location=verdict.location, shape=(), data=data, details=details)


def differential_own(own: Finding, unwinders: str) -> Finding:
    """One unwinder's own finding (a fault, a hang) in a differential run, filed under the run:
    its reproducer replays the input on every unwinder of the run (`unwinders`, a comma list)."""
    return Finding(kind=own.kind, target=TARGET, harness=DIFFERENTIAL, location=own.location,
                   shape=own.shape, data=own.data,
                   details={**own.details, "unwinder": unwinders,
                            "faulted": own.details.get("unwinder")})


def differential_death(unwinder: str, unwinders: str, data: bytes, status: int,
                       stalled: bool) -> Finding:
    """The finding of an input one unwinder's worker of a differential run died on."""
    return Finding(
        kind="hang" if stalled else "crash", target=TARGET, harness=DIFFERENTIAL,
        location=death_location(status, stalled), shape=(unwinder,), data=data,
        details={"unwinder": unwinders, "faulted": unwinder, "exit_status": status,
                 "note": "outside the guard's reach: a fault with signals blocked "
                         "inside the unwinder, or a hang the watchdog could not end"})


def companion_findings(unwinder: str, companion: dict[str, Any], fp: str) -> list[Finding]:
    """A kept sample on which `unwinder` and the fp companion walk disagree, as an
    invalid-trace finding with both walks."""
    found = []
    for k in companion.get("kept", []):
        wrong, right = (unwinder, fp) if k["fp_ok"] else (fp, unwinder)
        walks = [{"unwinder": unwinder, "stop": k["main_stop"], "frames": len(k["main"]),
                  "walk": walk_text(k["main"])},
                 {"unwinder": fp, "stop": k["fp_stop"], "frames": len(k["fp"]),
                  "walk": walk_text(k["fp"])}]
        found.append(Finding(kind="invalid-trace", target=TARGET, harness=STRESS_DIFFERENTIAL,
                             location=f"{wrong} vs {right}: sample", shape=(), data=b"",
                             details={"unwinder": f"{unwinder},{fp}", "walks": walks,
                                      "truth": walk_text(k["truth"])}))
    return found
