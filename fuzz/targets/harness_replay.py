"""The native target's replay of one stored input in this process: its one-call replay
(`wf_uw_fuzz_one`) on one unwinder's extension (targets libunwind and native); its snapshots
are remote-memory mode's (walkfuzz.targets.native.snapshot.replayer). The replay's shape is the
Target protocol's (walkfuzz.targets.protocol).

A walk that faults is caught by the guard; a fault that escapes it kills this process — the
triage driver runs replays in child processes for that reason (walkfuzz.triage.worker).
"""

from __future__ import annotations

from walkfuzz.findings import classify
from walkfuzz.targets.protocol import DEFAULT_HANG_NS as DEFAULT_HANG_NS
from walkfuzz.targets.protocol import Replay as Replay
from walkfuzz.targets.protocol import ReplayError as ReplayError


class LibunwindReplayer:
    """Replays the native target's inputs with its one-call replay (`wf_uw_fuzz_one`) on one
    unwinder's extension (libunwind's by default; one per process: their symbols clash)."""

    def __init__(self, hang_ns: int = DEFAULT_HANG_NS, unwinder: str = "") -> None:
        from walkfuzz.targets.native.extension import load
        from walkfuzz.targets.native.outcome import Namer
        from walkfuzz.targets.native.unwinders import DEFAULT

        self.native = load(unwinder or DEFAULT)
        self.ffi, self.lib = self.native.ffi, self.native.lib
        self.lib.wf_uw_set_walk_budget_ns(hang_ns)
        self.result = self.ffi.new("wf_uw_result *")
        self.namer = Namer(self.native)
        self.hang_ns = hang_ns
        self._regions: tuple[classify.Region, ...] | None = None

    def run(self, data: bytes, harness: str, walker: str, source: str) -> Replay:
        from walkfuzz.targets.native.outcome import WalkOutcome, to_finding

        if walker != "reference":
            raise ReplayError(f"{source}: the native target takes no --walker ({walker!r})")
        self.lib.wf_uw_fuzz_one(data, len(data), self.result)
        outcome = WalkOutcome.from_c(self.result)
        if outcome.finding_kind is None:
            return Replay(None)
        finding = to_finding(outcome, data, self.namer, harness)
        if finding.kind == "crash" and outcome.stop == "fault":
            if self._regions is None:
                self._regions = classify.process_regions()
            klass, why = classify.fault_class(outcome.fault["addr"], outcome.fault["si_code"],
                                              self._regions)
        elif finding.kind in ("crash", "hang"):
            klass, why = classify.HANG_CLASS, f"the walk stopped at {outcome.stop}"
        else:
            klass, why = outcome.invalid, f"first differing frame {outcome.first_diff}"
        return Replay(finding, klass, why)
