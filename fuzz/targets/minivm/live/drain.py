"""Draining a live run's captures while it runs (wf_live_drain, native/src/live/live_capture.c):
each failed sample the handler captured becomes a case file, a description and a finding,
saved under the output directory at once — the case bytes first, as walkfuzz.findings.store saves
every finding — so a run that dies later has lost nothing.

wf_live_run runs on another Python thread (cffi releases the GIL during a C call); this side
polls the workers' rings every POLL_SECONDS and once more after the run.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from walkfuzz.findings.hits import Hits, HitStore, RunClock
from walkfuzz.findings.store import save_finding
from walkfuzz.targets.minivm.live.hits import HITS, signature_hits
from walkfuzz.targets.minivm.live.signature import FAULT, HANG, class_name, live_finding, located

POLL_SECONDS = 0.02
HITS_EVERY_SECONDS = 1.0       # how often the hits store gets the C side's counts
EXAMPLES_PER_SIGNATURE = 3     # inputs stored per signature and run (FindingSink's default)
EXAMPLES_KEPT = 256            # descriptions a result keeps (the rest are only counted)
WINDOW_NAMES = ("none", "call", "prologue", "epilogue", "bci")
MODE_NAMES = {1: "signal", 2: "thread", 3: "queue"}
SOURCE_NAMES = {1: "walk", 2: "enqueue", 3: "element"}
FRAME_TYPES = {1: "java", 2: "inlined", 3: "native", 4: "non-java"}
ERROR_NAMES = {0: "ASGST_NO_FRAME", -1: "ASGST_NO_THREAD", -2: "ASGST_THREAD_EXIT",
               -3: "ASGST_UNSAFE_STATE", -4: "ASGST_NO_TOP_JAVA_FRAME",
               -17: "ASGST_WF_BAD_PC", -18: "ASGST_WF_BAD_SP", -19: "ASGST_WF_BAD_FP",
               -20: "ASGST_WF_BAD_METHOD", -21: "ASGST_WF_BAD_BCP",
               -22: "ASGST_WF_DEPTH_LIMIT", -23: "ASGST_WF_BAD_ARGUMENT",
               -24: "ASGST_WF_FRAME_GONE", -5: "ASGST_ENQUEUE_NO_QUEUE",
               -6: "ASGST_ENQUEUE_FULL_QUEUE", -7: "ASGST_ENQUEUE_OTHER_ERROR"}
CASE_STATUS = {0: "ok", -1: "too many stack words changed before the safepoint"}


class MethodNames:
    """Names of the live VM's methods ("m3_compiled"), read once each."""

    def __init__(self, ffi: Any, lib: Any) -> None:
        self.ffi, self.lib = ffi, lib
        self.names: dict[int, str] = {}

    def __call__(self, index: int) -> str | int:
        if index not in self.names:
            name = self.lib.wf_live_method_name(index) if index >= 0 else self.ffi.NULL
            if name == self.ffi.NULL:
                return index
            self.names[index] = self.ffi.string(name).decode()
        return self.names[index]


def frames_json(frames: Any, count: int, names: MethodNames) -> list[dict[str, Any]]:
    return [{"method": names(int(f.method)), "bci": int(f.bci),
             "type": FRAME_TYPES.get(int(f.type), str(int(f.type))), "level": int(f.level)}
            for f in (frames[k] for k in range(min(count, len(frames))))]


def describe(info: Any, names: MethodNames, clock: RunClock) -> dict[str, Any]:
    """A drained capture (wf_live_finding) as a JSON-able description."""
    cls = int(info.cls)
    seconds, wall = clock.at(int(info.t_ns) / 1e9)
    return {
        "class": class_name(cls), "mode": MODE_NAMES.get(int(info.mode), str(info.mode)),
        "source": SOURCE_NAMES.get(int(info.source), str(info.source)),
        "window": WINDOW_NAMES[int(info.window)], "worker": int(info.worker),
        "seconds": round(seconds, 6), "at": round(wall, 6),
        "end_code": int(info.end_code),
        "end_name": ERROR_NAMES.get(int(info.end_code), str(int(info.end_code))),
        "first_diff": int(info.first_diff), "thread_state": int(info.thread_state),
        "thread_flags": int(info.thread_flags), "pc": int(info.pc), "sp": int(info.sp),
        "fp": int(info.fp), "fault_pc": int(info.fault_pc), "fault_addr": int(info.fault_addr),
        "fault_signo": int(info.fault_signo),
        "fault_location": (located(cls, int(info.fault_pc)).location
                           if cls in (FAULT, HANG) else ""),
        "walked_count": int(info.walked_count), "expected_count": int(info.expected_count),
        "walked": frames_json(info.walked, int(info.walked_count), names),
        "expected": frames_json(info.expected, int(info.expected_count), names),
        "stack_bytes": int(info.stack_bytes), "stack_dropped": int(info.stack_dropped),
        "pokes": int(info.pokes), "case": CASE_STATUS.get(int(info.status), str(info.status)),
    }


class Drain:
    """Takes a run's captures as they come; saves them under `out_dir` (None: describes only)."""

    def __init__(self, ffi: Any, lib: Any, clock: RunClock, out_dir: Path | None,
                 run_details: dict[str, Any]) -> None:
        self.ffi, self.lib, self.clock, self.out_dir = ffi, lib, clock, out_dir
        self.run_details = run_details
        self.names = MethodNames(ffi, lib)
        self.info = ffi.new("wf_live_finding *")
        self.buffer = ffi.new("uint8_t[]", lib.WF_LIVE_CASE_MAX)
        self.examples: list[dict[str, Any]] = []
        self.drained = 0
        self.stored: dict[str, int] = {}   # signature -> inputs stored by this run
        self.hits = None if out_dir is None else HitStore(out_dir, clock)
        self._hits_written = 0.0

    def take(self) -> int:
        """Drain every capture pending now; how many there were."""
        taken = 0
        while True:
            length = int(self.lib.wf_live_drain(self.info, self.buffer, len(self.buffer)))
            if length == 0:
                break
            if length < 0:
                raise RuntimeError(f"a live case needs {-length} bytes, more than "
                                   f"WF_LIVE_CASE_MAX ({len(self.buffer)})")
            data = bytes(self.ffi.buffer(self.buffer, length)) if self.info.status == 0 else b""
            self._keep(describe(self.info, self.names, self.clock), data)
            taken += 1
        if taken and time.monotonic() - self._hits_written >= HITS_EVERY_SECONDS:
            self.count_hits()
        return taken

    def _keep(self, example: dict[str, Any], data: bytes) -> None:
        self.drained += 1
        finding = live_finding(int(self.info.cls), example["fault_pc"],
                               [int(self.info.shape[i]) for i in range(self.info.shape_len)],
                               data, {**example, **self.run_details})
        example.update(signature=finding.signature, kind=finding.kind,
                       location=finding.location, shape=list(finding.shape))
        if self.out_dir is not None and data and \
                self.stored.get(finding.signature, 0) < EXAMPLES_PER_SIGNATURE:
            counted = self.count_hits().get(finding.signature)
            directory = save_finding(self.out_dir, finding,
                                     None if counted is None else Hits.from_json(counted[HITS]))
            self.stored[finding.signature] = self.stored.get(finding.signature, 0) + 1
            example["path"] = str(directory / f"{finding.sha1}.bin")
        if len(self.examples) < EXAMPLES_KEPT:
            self.examples.append(example)

    def count_hits(self) -> dict[str, dict[str, Any]]:
        """Every signature's hits so far, from the C side's counts; kept in the hits store."""
        counted = signature_hits(self.ffi, self.lib, self.clock)
        if self.hits is not None:
            for signature, doc in counted.items():
                self.hits.put(signature, Hits.from_json(doc[HITS]))
        self._hits_written = time.monotonic()
        return counted
