"""Hits of a live stress run per signature: how many failed samples, and when the first and
the last one were sampled, as seconds since the start of the run and as wall time.

The C side counts every failed sample under its signature key (wf_live_signatures, with
CLOCK_MONOTONIC times; docs/stress.md), so the counts are exact even when captures are
dropped. The run keeps them in the hits store (walkfuzz.findings.hits.HitStore.put), as every
run does, while it goes on and at its end; each stored finding's description carries its
signature's hits as known when it was saved.
"""

from __future__ import annotations

from typing import Any

from walkfuzz.findings.hits import RunClock
from walkfuzz.targets.minivm.live.signature import key_signature

HITS = "hits"
SIGNATURES_CAP = 1024  # wf_live_signatures: at most 16 workers x 32 keys


def hits_doc(count: int, first_ns: int, last_ns: int, clock: RunClock) -> dict[str, Any]:
    """`count` hits between two CLOCK_MONOTONIC readings in ns (Hits.to_json)."""
    return clock.span(count, first_ns / 1e9, last_ns / 1e9).to_json()


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
