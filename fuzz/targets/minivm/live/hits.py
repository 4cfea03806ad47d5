"""Hits of a live stress run per signature: how many failed samples, and when the first and
the last one were sampled, as seconds since the start of the run and as wall time.

The C side counts every failed sample under its signature key (wf_live_signatures, with
CLOCK_MONOTONIC times; docs/stress.md), so the counts are exact even when captures are
dropped. Each stored finding's description carries its signature's hits under "hits"
({count, first_seen_s, first_seen_at, last_seen_s, last_seen_at}), written when the finding
is saved and brought up to date while the run goes on and at its end.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from walkfuzz.findings.finding import finding_dir, write_atomic
from walkfuzz.targets.minivm.live.signature import key_signature

HITS = "hits"
SIGNATURES_CAP = 1024  # wf_live_signatures: at most 16 workers x 32 keys


@dataclass(frozen=True)
class RunClock:
    """The run's start on CLOCK_MONOTONIC (what the C side stamps samples with) and on the
    wall clock, read together."""

    start_mono: float
    start_wall: float

    @classmethod
    def start(cls) -> RunClock:
        return cls(time.monotonic(), time.time())

    def at(self, mono_ns: int) -> tuple[float, float]:
        """Seconds since the start and wall time of a CLOCK_MONOTONIC reading in ns."""
        seconds = mono_ns / 1e9 - self.start_mono
        return seconds, self.start_wall + seconds


def hits_doc(count: int, first_ns: int, last_ns: int, clock: RunClock) -> dict[str, Any]:
    first, first_at = clock.at(first_ns)
    last, last_at = clock.at(last_ns)
    return {"count": count, "first_seen_s": round(first, 6), "first_seen_at": round(first_at, 6),
            "last_seen_s": round(last, 6), "last_seen_at": round(last_at, 6)}


def signature_hits(ffi: Any, lib: Any, clock: RunClock) -> dict[str, dict[str, Any]]:
    """Every signature the run's failed samples counted so far: its hits, kind, location and
    shape. Keys that name one signature (e.g. two fault pcs in one function) are merged."""
    keys = ffi.new("wf_live_signature[]", SIGNATURES_CAP)
    n = min(int(lib.wf_live_signatures(keys, SIGNATURES_CAP)), SIGNATURES_CAP)
    merged: dict[str, dict[str, Any]] = {}
    for k in (keys[i] for i in range(n)):
        finding = key_signature(int(k.cls), int(k.fault_pc), int(k.tail))
        doc = merged.setdefault(finding.signature, {
            "kind": finding.kind, "location": finding.location, "shape": list(finding.shape),
            "count": 0, "first_ns": int(k.first_ns), "last_ns": int(k.last_ns)})
        doc["count"] += int(k.count)
        doc["first_ns"] = min(doc["first_ns"], int(k.first_ns))
        doc["last_ns"] = max(doc["last_ns"], int(k.last_ns))
    return {s: {"kind": d["kind"], "location": d["location"], "shape": d["shape"],
                HITS: hits_doc(d["count"], d["first_ns"], d["last_ns"], clock)}
            for s, d in merged.items()}


def write_hits(out_dir: Path, signature: str, hits: Mapping[str, Any]) -> None:
    """Set "hits" in the description of every input stored for `signature`."""
    for description in sorted(finding_dir(out_dir, signature).glob("*.json")):
        try:
            doc = json.loads(description.read_text())
        except (OSError, ValueError):
            continue  # walkfuzz.findings.finding.load_findings names unreadable descriptions
        if isinstance(doc, dict) and doc.get(HITS) != hits:
            doc[HITS] = dict(hits)
            write_atomic(description, json.dumps(doc, indent=1, default=str).encode())
