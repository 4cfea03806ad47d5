"""Turning the agent's JSON lines (and a crashed JVM's hs_err file) into walkfuzz findings and
report counters.

Finding kinds and locations:
  crash          guarded fault in ASGCT      libjvm.so!<function>+0x..   (data: the record)
  crash          unguarded control crash     libjvm.so!<function>+0x..   (from hs_err)
  hang           JVM stopped responding      jvm!unresponsive / jvm!overran
  invalid-trace  shadow-stack oracle         check:shadow:<class>
  invalid-trace  GetStackTrace oracle        check:gst-held / check:gst-bottom

Hits (`hit_spans`): a fault is one hit at its event's time; an invalid class or a kind of
GetStackTrace disagreement is every one the agent counted (it writes only the first few as
events), between the first and the last time it saw one; a hang or a crashed JVM is one hit
when the JVM ended. Times are CLOCK_MONOTONIC seconds ("mono" in the agent's lines).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import cast

from walkfuzz.core.guard import Fault
from walkfuzz.core.symbolize import object_location
from walkfuzz.findings.finding import Finding, FindingKind
from walkfuzz.targets.hotspot.hserr import parse_hs_err
from walkfuzz.targets.hotspot.inputs import Record, decode
from walkfuzz.targets.hotspot.jdk import Jdk
from walkfuzz.targets.hotspot.jvm_run import JvmRun

TARGET = "hotspot"
# ASGCT result codes (HotSpot forte.cpp); -15 is the agent's own "the call faulted".
CODE_NAMES = {
    0: "no_Java_frame", -1: "no_class_load", -2: "GC_active", -3: "unknown_not_Java",
    -4: "not_walkable_not_Java", -5: "unknown_Java", -6: "not_walkable_Java",
    -7: "unknown_state", -8: "thread_exit", -9: "deopt", -10: "safepoint", -15: "faulted",
}
CODE_BIAS, CODE_OK_SLOT = 15, 16
CLASS_NAMES = ("exact", "top-tolerated", "in-update", "no-shadow", "truncated", "missing-top",
               "missing", "extra", "wrong-method", "wrong-bci", "unknown-method", "other")
VALID_CLASSES = ("exact", "top-tolerated", "in-update")


def _shape(record: Record | None) -> tuple[str, ...]:
    """The walk's shape as the signature sees it: whether pc was left alone."""
    if record is None:
        return ()
    return ("java",) if record.pc_kept else ("pc-perturbed",)


def _perturbation(data: bytes) -> tuple[Record | None, str]:
    """The record an agent event carries and its description; (None, 'none') if it has none."""
    if not data:
        return None, "none"
    rec = decode(data)
    return rec, rec.describe()


def code_counts(codes: list[int]) -> dict[str, int]:
    """Named ASGCT result counts from the agent's histogram."""
    out: dict[str, int] = {}
    for slot, count in enumerate(codes):
        if not count:
            continue
        name = "frames" if slot == CODE_OK_SLOT else CODE_NAMES.get(slot - CODE_BIAS,
                                                                     f"code{slot - CODE_BIAS}")
        out[name] = count
    return out


def class_counts(classes: list[int]) -> dict[str, int]:
    return {name: n for name, n in zip(CLASS_NAMES, classes, strict=False) if n}


def _fault_location(jdk: Jdk, event: Mapping[str, object]) -> str:
    lib = Path(str(event.get("lib", "?")))
    offset = int(cast(int, event.get("offset", 0)))
    if lib.name == "?" or not lib.exists():
        return f"{lib.name}!+{offset:#x}"
    return f"{lib.name}!{object_location(lib, offset)}"


def fault_findings(jdk: Jdk, run: JvmRun, harness: str) -> Iterator[Finding]:
    for ev in run.of_type("fault"):
        record = bytes.fromhex(str(ev.get("record", "")))
        kind: FindingKind = "hang" if ev.get("kind") == 2 else "crash"
        rec, perturbation = _perturbation(record)
        yield Finding(
            kind=kind, target=TARGET, harness=harness,
            location=_fault_location(jdk, ev),
            shape=_shape(rec) or ("java",),
            data=record,
            details={"jdk": jdk.label, "jdk_version": jdk.version, "strategy": ev.get("strategy"),
                     "perturbation": perturbation, "mono": ev.get("mono"),
                     "fault": Fault.from_json(ev).to_json(), "real": ev.get("real"),
                     "perturbed": ev.get("perturbed")},
        )


def invalid_findings(jdk: Jdk, run: JvmRun, harness: str) -> Iterator[Finding]:
    for ev in run.of_type("invalid"):
        yield Finding(
            kind="invalid-trace", target=TARGET, harness=harness,
            location=f"check:shadow:{ev.get('class')}", shape=("java",), data=b"",
            details={"jdk": jdk.label, "oracle": "shadow-stack", **ev},
        )
    for ev in run.of_type("check"):
        yield Finding(
            kind="invalid-trace", target=TARGET, harness=harness,
            location=f"check:gst-{ev.get('kind')}", shape=("java",), data=b"",
            details={"jdk": jdk.label, "oracle": "GetStackTrace", **ev},
        )


def watchdog_finding(jdk: Jdk, run: JvmRun, harness: str) -> Finding | None:
    if run.watchdog is None:
        return None
    return Finding(kind="hang", target=TARGET, harness=harness, location=f"jvm!{run.watchdog}",
                   shape=(), data=b"",
                   details={"jdk": jdk.label, "last_tick": run.last_tick,
                            "wall_s": round(run.wall_s, 1)})


def crash_finding(jdk: Jdk, run: JvmRun, harness: str) -> Finding | None:
    """The hs_err of a JVM that died, as a crash finding (data: the flight record if known)."""
    if run.hs_err is None:
        return None
    from walkfuzz.targets.hotspot.hserr import flight_record  # local: only control runs need it

    crash = parse_hs_err(run.hs_err)
    if crash is None:
        return Finding(kind="crash", target=TARGET, harness=harness, location="jvm!hs_err",
                       shape=(), data=b"", details={"jdk": jdk.label, "hs_err": str(run.hs_err)})
    flight = flight_record(run.flight, crash.tid) if run.flight else None
    record = flight[1] if flight else b""
    rec, perturbation = _perturbation(record)
    function = crash.function
    if not function and crash.library == "libjvm.so":
        function = object_location(jdk.libjvm, crash.offset)
    return Finding(
        kind="crash", target=TARGET, harness=harness,
        location=f"{crash.library}!{function or f'+{crash.offset:#x}'}",
        shape=_shape(rec),
        data=record,
        details={"jdk": jdk.label, "jdk_version": jdk.version, "hs_err": str(run.hs_err),
                 "signal": crash.signal, "pc": f"{crash.pc:#x}", "tid": crash.tid,
                 "perturbation": perturbation if rec else "unknown"},
    )


def signature_counts(findings: list[Finding]) -> Counter[str]:
    return Counter(f.signature for f in findings)


Span = tuple[int, float, float]  # hits, first and last CLOCK_MONOTONIC second


def _summary_span(summary: Mapping[str, object], location: str) -> Span | None:
    """Every invalid trace of a class, or GetStackTrace disagreement of a kind, the summary
    counted: how many and when the first and the last was; None if the summary has none."""
    if location.startswith("check:shadow:"):
        name = location.rsplit(":", 1)[-1]
        index = CLASS_NAMES.index(name) if name in CLASS_NAMES else -1
        counts = summary.get("classes")
        firsts, lasts = summary.get("class_first_mono"), summary.get("class_last_mono")
        if index < 0 or not (isinstance(counts, list) and isinstance(firsts, list)
                             and isinstance(lasts, list)) or index >= len(firsts):
            return None
        return int(counts[index]), float(firsts[index]), float(lasts[index])
    if location.startswith("check:gst-"):
        kind = location.removeprefix("check:gst-")
        times = summary.get(f"{kind}_disagree_mono")
        if not isinstance(times, list) or f"{kind}_checks" not in summary:
            return None
        count = int(str(summary[f"{kind}_checks"])) - int(str(summary.get(f"{kind}_agree", 0)))
        return count, float(times[0]), float(times[1])
    return None


def hit_spans(run: JvmRun, findings: list[Finding]) -> dict[str, Span]:
    """The hits of each signature among `findings` (all of `run`), see the module docstring."""
    spans: dict[str, Span] = {}
    summary = run.summary or {}
    for f in findings:
        signature = f.signature
        counted = _summary_span(summary, f.location) if f.kind == "invalid-trace" else None
        if counted is not None and counted[0] > 0 and counted[1] > 0:
            spans[signature] = counted
            continue
        mono = f.details.get("mono")
        at = float(mono) if isinstance(mono, int | float) else run.ended_mono
        count, first, last = spans.get(signature, (0, at, at))
        spans[signature] = (count + 1, min(first, at), max(last, at))
    return spans

