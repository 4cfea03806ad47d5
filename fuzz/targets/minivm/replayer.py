"""minivm's Replayer: one stored input run again in this process the way its harness ran it.

Inputs go through the hot path (`wf_worker_run`: decode or generate, map, walk under the
guard, check) with the walker named in the finding (or `--walker`); a live stress capture
(harness `stress`: a case with section 11 EXPECTED) is walked again the way the live run
walked it and judged by the live oracle (`wf_live_replay`). Each replay gives a `Replay`: the
finding it reproduces (built exactly as the harness builds it, so signatures match the stored
ones), its class on the walker scale (walkfuzz.findings.classify), or an error line for an
input that cannot run (bad case file, missing walker library).

A walk that faults is caught by the guard; a fault that escapes it kills this process — the
triage driver runs replays in child processes for that reason (walkfuzz.triage.worker).
"""

from __future__ import annotations

from typing import Any

from walkfuzz.core import native
from walkfuzz.core.errors import CaseFormatError
from walkfuzz.core.guard import Fault
from walkfuzz.findings import classify
from walkfuzz.findings.finding import Finding
from walkfuzz.targets.minivm.finding import API_HARNESS, check_name, to_finding
from walkfuzz.targets.minivm.harness import HARNESSES, NEEDS_QUEUE
from walkfuzz.targets.minivm.inputs import BYTES_HARNESS, LIVE_HARNESS, case_error, sniff_harness
from walkfuzz.targets.minivm.regions import MINIVM_REGIONS
from walkfuzz.targets.minivm.walker_library import load_walker
from walkfuzz.targets.protocol import DEFAULT_HANG_NS, Replay, ReplayError, StoredInput


class MinivmReplayer:
    """Replays minivm inputs through the hot path; walker libraries are loaded once each."""

    def __init__(self, hang_ns: int = DEFAULT_HANG_NS, key: str = "") -> None:
        del key  # every minivm input runs in any replay process (process_key)
        self.core = native.load()
        self.ffi, self.lib = self.core
        self.case = self.ffi.gc(self.lib.wf_case_new(), self.lib.wf_case_free)
        self.result = self.ffi.new("wf_run_result *")
        self.walkers: dict[str, Any] = {"reference": self.lib.wf_walker_reference()}
        self.hang_ns = hang_ns

    def walker(self, name: str) -> Any:
        if name not in self.walkers:
            self.walkers[name] = load_walker(name, self.core)
        return self.walkers[name]

    def run(self, data: bytes, stored: StoredInput) -> Replay:
        """Once, as its stored harness (else the one its bytes say) ran it on its walker."""
        harness = stored.harness or sniff_harness(data, stored.path)
        return self.run_as(data, harness, stored.walker, stored.path)

    def run_as(self, data: bytes, harness: str, walker: str, source: str) -> Replay:
        """Replay once; ReplayError / CaseFormatError / WalkerLibraryError on bad input."""
        if harness == LIVE_HARNESS:
            return self.run_live(data, walker, source)
        number = HARNESSES.get(harness)
        if number is None:
            raise ReplayError(f"{source}: unknown minivm harness {harness!r}; one of "
                              f"{sorted([*HARNESSES, LIVE_HARNESS])}")
        table = self.walker(walker)
        if harness in NEEDS_QUEUE and walker != "reference" and not table.has_queue:
            reason = self.ffi.string(table.queue_error).decode(errors="replace")
            raise ReplayError(f"{source}: harness {harness}: {reason}")
        lib, r = self.lib, self.result
        if lib.wf_guard_budget_ns() != self.hang_ns:
            lib.wf_guard_set_budget_ns(self.hang_ns)
        lib.wf_worker_run(number, table, data, len(data), self.case, r)
        if r.status != 0:
            raise CaseFormatError(source, case_error(data, source))
        if r.finding == 0:
            return Replay(None)
        finding = self._finding(data, harness, walker)
        klass, why = self._classify(finding)
        return Replay(finding, klass, why)

    def run_live(self, data: bytes, walker: str, source: str) -> Replay:
        """A live capture walked again and judged by the live oracle; `extra` has the
        replay's result (walkfuzz.targets.minivm.live.replay)."""
        from walkfuzz.targets.minivm.live.replay import replay_live

        table = self.walker(walker)
        if self.lib.wf_guard_budget_ns() != self.hang_ns:
            self.lib.wf_guard_set_budget_ns(self.hang_ns)
        if self.lib.wf_case_decode(data, len(data), self.case, self.ffi.NULL) != 0:
            raise CaseFormatError(source, case_error(data, source))
        live = replay_live(self.ffi, self.lib, table, self.case, data, walker)
        if live.error:
            raise ReplayError(f"{source}: {live.error}")
        if live.finding is None:
            return Replay(None, why=live.why, extra=live.doc)
        if live.finding.kind == "crash" and live.fault is not None:
            klass, why = classify.fault_class(live.fault.address, live.fault.si_code,
                                              MINIVM_REGIONS)
        elif live.finding.kind == "hang":
            klass = classify.HANG_CLASS
            why = f"the walk ran past the {self.hang_ns / 1e6:g} ms budget"
        else:
            klass, why = live.klass, live.why
        return Replay(live.finding, klass, why, extra=live.doc)

    def _finding(self, data: bytes, harness: str, walker: str) -> Finding:
        """The last run's finding, described as walkfuzz.targets.minivm.harness describes it."""
        return to_finding(self.ffi, self.lib, self.result, data, harness, walker,
                          with_queue_op=harness in NEEDS_QUEUE)

    def _classify(self, finding: Finding) -> tuple[str, str]:
        r = self.result
        if finding.kind == "crash":
            fault = Fault.from_native(r.fault)
            return classify.fault_class(fault.address, fault.si_code, MINIVM_REGIONS)
        if finding.kind == "hang":
            return classify.HANG_CLASS, f"the walk ran past the {self.hang_ns / 1e6:g} ms budget"
        check = check_name(self.ffi, self.lib, r.check)
        if finding.harness == API_HARNESS:
            # an operation's result, not a recorded walk: the check (it names the operation)
            # is the class; wf_run_frames holds no walk of this input
            return classify.contract_class(check, 0), (
                f"check {check} failed at op {finding.details.get('api_op_name')}")
        if finding.kind == "contract":
            if classify.contract_class(check, int(r.frames)) == classify.HANG_CLASS:
                return classify.HANG_CLASS, f"the walk was stopped after {r.frames} frames"
            return classify.contract_class(check, int(r.frames)), f"check {check} failed"
        got = self._walker_frames()
        want = self._oracle_frames()
        return classify.invalid_trace_class(got, want, int(r.end_code), int(r.want_end_code))

    def _walker_frames(self) -> list[classify.FrameTuple]:
        raw = self.lib.wf_run_frames()
        return [self._tuple(raw[i]) for i in range(min(int(self.result.frames), 65536))]

    def _oracle_frames(self) -> list[classify.FrameTuple]:
        """The oracle's trace: the case's truth, or the reference walker's walk of it (the
        case is still mapped; walking it again with the reference changes nothing)."""
        r, c = self.result, self.case
        if r.oracle == 1:
            return [self._tuple(c.truth[i]) for i in range(int(c.truth_count))]
        again = self.ffi.new("wf_run_result *")
        self.lib.wf_run_mapped(self.lib.wf_walker_reference(), c, again)
        raw = self.lib.wf_run_frames()
        return [self._tuple(raw[i]) for i in range(min(int(again.frames), 65536))]

    def _tuple(self, f: Any) -> classify.FrameTuple:
        def word(p: Any) -> int:
            return int(self.ffi.cast("uintptr_t", p))

        return (int(f.type), int(f.comp_level), int(f.bci), word(f.method), word(f.pc),
                word(f.sp), word(f.fp))

    def materialize(self, data: bytes, harness: str, walker: str, source: str) -> bytes:
        """The case file of what `data` ran as: for a generator harness, the generated (and
        mutated) case as the hot path mapped it; for `bytes` and `stress`, the case file itself."""
        if harness in (BYTES_HARNESS, LIVE_HARNESS):
            return data
        self.run_as(data, harness, walker, source)
        need = abs(int(self.lib.wf_case_encode(self.case, self.ffi.NULL, 0)))
        buf = self.ffi.new("uint8_t[]", need)
        got = int(self.lib.wf_case_encode(self.case, buf, need))
        if got != need:
            raise RuntimeError(f"wf_case_encode wrote {got} bytes, announced {need}")
        return bytes(self.ffi.buffer(buf, need))
