"""A live stress capture replayed (C: wf_live_replay, native/src/live/live_replay.c): the walk its
EXPECTED section names runs again with the same walker, and the live oracle judges it against
the expected trace exactly, so the finding (walkfuzz.targets.minivm.live.signature) is the live
one's: same kind, location `check:live-<class>` and shape, or the same fault. """

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from walkfuzz.core.guard import Fault, native_fault
from walkfuzz.findings.finding import Finding
from walkfuzz.targets.minivm.live.drain import ERROR_NAMES, FRAME_TYPES
from walkfuzz.targets.minivm.live.signature import FAULT, HANG, class_name, live_finding

OUTCOMES = ("exact", "invalid", "fault", "hang", "not-judged")
ERRORS = {-1: "no EXPECTED section (not a live stress capture)",
          -2: "the walker lacks the safepoint queue API this capture replays",
          -3: "its queue program ran no element handler",
          -4: "out of memory"}


@dataclass
class LiveReplay:
    """What one replay gave: a finding (None: the walk is what the live oracle expects, or an
    element whose frame was gone), or the error that kept it from running."""

    finding: Finding | None = None
    error: str | None = None
    klass: str = ""
    why: str = ""
    fault: Fault | None = None
    doc: dict[str, Any] = field(default_factory=dict)


def _frames(r: Any) -> list[dict[str, Any]]:
    return [{"method": int(f.method), "bci": int(f.bci),
             "type": FRAME_TYPES.get(int(f.type), str(int(f.type))), "level": int(f.level)}
            for f in (r.walked[k] for k in range(min(int(r.walked_count), len(r.walked))))]


def replay_live(ffi: Any, lib: Any, walker_table: Any, case: Any, data: bytes,
                walker: str) -> LiveReplay:
    """Replay the case mapped last (its bytes are `data`) with `walker_table`."""
    r = ffi.new("wf_live_replay_result *")
    lib.wf_live_replay(walker_table, case, r)
    if r.status != 0:
        return LiveReplay(error=ERRORS.get(int(r.status), f"status {r.status}"))
    outcome = OUTCOMES[int(r.outcome)]
    doc: dict[str, Any] = {
        "outcome": outcome, "first_diff": int(r.first_diff), "run_result": int(r.run_result),
        "end_code": int(r.end_code),
        "end_name": ERROR_NAMES.get(int(r.end_code), str(int(r.end_code))),
        "walked_count": int(r.walked_count), "walked": _frames(r)}
    if outcome in ("exact", "not-judged"):
        why = {"exact": "the walk is the expected trace",
               "not-judged": "a walk the live run does not judge (an element whose frame is "
                             "gone, an Enqueue that enqueued)"}[outcome]
        return LiveReplay(why=why, doc=doc)
    cls = {"fault": FAULT, "hang": HANG}.get(outcome, int(r.cls))
    doc["class"] = class_name(cls)
    fault = native_fault(r.fault) if cls in (FAULT, HANG) else None
    if fault is not None:
        doc["fault"] = fault.to_json()
    shape = [int(r.shape[i]) for i in range(r.shape_len)]
    finding = live_finding(cls, int(r.fault.pc), shape, data, {"walker": walker, **doc})
    return LiveReplay(finding=finding, klass=class_name(cls),
                      why=f"first differing frame {int(r.first_diff)}",
                      fault=fault, doc=doc)
