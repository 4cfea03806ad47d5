"""The minivm harnesses' shared body: one C call per input, a Finding when it finds something.

    harnesses/layouts.py:   MinivmHarness("layouts").fuzz()

Per input, libFuzzer calls one C function (`wf_worker_run`: journal, decode or generate, map,
walk under the guard, check) from the C fuzz loop `wf_worker_fuzz`, with no Python in between;
Python runs only on a finding (`_on_finding`). An input file run by hand takes the same C call
through `one_input`.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Sequence
from typing import Any

from walkfuzz.core.errors import WalkerLibraryError
from walkfuzz.core.native import Native
from walkfuzz.engine.worker import Worker
from walkfuzz.findings.finding import Finding
from walkfuzz.targets.minivm.finding import to_finding
from walkfuzz.targets.minivm.walker_library import load_walker

HARNESSES = {"registers": 1, "layouts": 2, "bytes": 3, "queue": 4, "api": 5}  # wf_worker_harness
NEEDS_QUEUE = {"queue"}  # harnesses that run the walker's safepoint queue API
WATCHDOG_NS = 200_000_000  # a walk longer than this is a hang (the reference takes microseconds)


class MinivmHarness:
    def __init__(self, harness: str) -> None:
        if harness not in HARNESSES:
            raise SystemExit(f"unknown minivm harness {harness!r}; one of {sorted(HARNESSES)}")
        self.name = harness
        self.number = HARNESSES[harness]
        self.worker = Worker.from_environment(harness)
        self.native: Native = self.worker.load_native()
        lib, ffi = self.native.lib, self.native.ffi
        self.lib, self.ffi = lib, ffi
        self.walker = self._walker(self.worker.env.walker)
        self.case = lib.wf_case_new()
        self.result = ffi.new("wf_run_result *")
        lib.wf_guard_set_budget_ns(WATCHDOG_NS)

    def _walker(self, walker: str) -> Any:
        if walker == "reference":
            return self.lib.wf_walker_reference()
        try:
            table = load_walker(walker, self.native)
        except WalkerLibraryError as err:
            raise SystemExit(str(err)) from None  # one line for the campaign to quote
        self._table = table  # keep it alive
        if self.name in NEEDS_QUEUE and not table.has_queue:
            reason = self.ffi.string(table.queue_error).decode(errors="replace")
            raise SystemExit(f"harness {self.name}: {reason}")
        return table

    def one_input(self, data: bytes) -> None:
        if self.lib.wf_worker_run(self.number, self.walker, data, len(data), self.case,
                                  self.result):
            self.worker.report(self.finding(data))

    def finding(self, data: bytes) -> Finding:
        """Describe the last run's result (only called when it is a finding)."""
        return to_finding(self.ffi, self.lib, self.result, data, self.name,
                          self.worker.env.walker, with_queue_op=self.name in NEEDS_QUEUE)

    def fuzz(self, argv: Sequence[str] | None = None) -> None:
        self.worker.fuzz(self.one_input, sys.argv if argv is None else argv, loop=self._loop)

    def _loop(self, args: list[str]) -> int:
        """libFuzzer on `args` calling wf_worker_run from C; its status."""
        ffi = self.ffi
        on_finding = ffi.callback("wf_finding_fn", self._on_finding)
        strings = [ffi.new("char[]", arg.encode()) for arg in args]  # alive while it runs
        argv = ffi.new("char *[]", [*strings, ffi.NULL])
        status = int(self.lib.wf_worker_fuzz(len(strings), argv, self.number, self.walker,
                                             self.case, self.result, on_finding))
        if status == -errno.ENOSYS:
            raise SystemExit("no libFuzzer in this process (LLVMFuzzerRunDriver not found)")
        if status < 0:
            raise SystemExit(f"cannot start the fuzz loop: {os.strerror(-status)}")
        return status

    def _on_finding(self, data: Any, length: int) -> int:
        """The C loop's finding (self.result holds it): saved, or 1 to end as a crash."""
        return self.worker.report_from_c(
            lambda: self.finding(bytes(self.ffi.buffer(data, length))))
