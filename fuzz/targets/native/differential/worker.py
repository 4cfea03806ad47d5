"""One unwinder's worker process of a differential run
(`python -m walkfuzz.targets.native.differential.worker --unwinder NAME ...`), driven by
walkfuzz.targets.native.differential.run over its stdin and stdout, one line each way:

    batch SEED FIRST COUNT WANT_INPUTS  ->  ok COUNT [I:DESCRIPTION ...]
        inputs FIRST.. of generator stream SEED walked (wf_uw_diff_batch) into DIR/rows.bin,
        their bytes into DIR/inputs.bin when WANT_INPUTS is 1; before each input runs, the
        journal DIR/current-input holds it and its number (a death leaves both on disk).
        I:DESCRIPTION: input FIRST+I is this unwinder's own finding, stored at DESCRIPTION
        (the supervisor adds every unwinder's walk of it)

A walk that faulted, hung or cycled is this unwinder's own finding: the input is walked once
more for its whole result and stored as the single-unwinder run describes it (a hang only when
it comes back: a loaded machine can deschedule a walk past the watchdog's budget), filed
under the differential run (details.unwinder: the run's unwinders, whose replay shows the
table; details.faulted: this one).

With `--input FILE` it walks that one input instead and prints its row as one JSON line
(`walkfuzz replay --unwinder all` runs one such process per unwinder).
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import sys
from pathlib import Path
from typing import Any

from walkfuzz.engine.journal import HEADER, JOURNAL_NAME
from walkfuzz.findings.hits import RunClock
from walkfuzz.findings.store import FindingSink
from walkfuzz.targets.native.differential.rows import ROW
from walkfuzz.targets.native.extension import load
from walkfuzz.targets.native.finding import DIFFERENTIAL, differential_own, walk_finding
from walkfuzz.targets.native.inputs import INPUT_SIZE
from walkfuzz.targets.native.outcome import Namer, WalkOutcome
from walkfuzz.targets.native.unwinders import add_unwinder_flag

ROWS_NAME = "rows.bin"
INPUTS_NAME = "inputs.bin"
MAX_BATCH = 4096
FAULT, HANG = 1, 2


def _mapped(path: Path, size: int) -> mmap.mmap:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.ftruncate(fd, size)
        return mmap.mmap(fd, size, mmap.MAP_SHARED)
    finally:
        os.close(fd)


class _Worker:
    """The extension, its shared files, and the sink of this unwinder's own findings."""

    def __init__(self, unwinder: str, run_unwinders: str, directory: Path, out: Path | None,
                 clock: RunClock | None, budget_ms: float) -> None:
        self.unwinder, self.run_unwinders = unwinder, run_unwinders
        self.native = load(unwinder)
        self.ffi, self.lib = self.native.ffi, self.native.lib
        self.lib.wf_uw_set_walk_budget_ns(int(budget_ms * 1e6))
        directory.mkdir(parents=True, exist_ok=True)
        self.journal = _mapped(directory / JOURNAL_NAME, HEADER.size + INPUT_SIZE)
        HEADER.pack_into(self.journal, 0, 0, INPUT_SIZE)
        self.rows = _mapped(directory / ROWS_NAME, MAX_BATCH * ROW.size)
        self.inputs = _mapped(directory / INPUTS_NAME, MAX_BATCH * INPUT_SIZE)
        journal = self.ffi.from_buffer("uint8_t[]", self.journal)
        self.started = self.ffi.cast("uint64_t *", journal)
        self.current = journal + HEADER.size
        self.row_buffer = self.ffi.cast("wf_uw_diff_row *",
                                        self.ffi.from_buffer("uint8_t[]", self.rows))
        self.input_buffer = self.ffi.from_buffer("uint8_t[]", self.inputs)
        self.sink = FindingSink(out, clock=clock) if out is not None else None
        self.namer = Namer(self.native)

    def batch(self, seed: int, first: int, count: int, want_inputs: bool) -> tuple[int, list[str]]:
        """Inputs walked, and `I:DESCRIPTION` of each own finding stored."""
        count = min(count, MAX_BATCH)
        inputs = self.input_buffer if want_inputs else self.ffi.NULL
        self.lib.wf_uw_diff_batch(seed, first, count, self.current, self.started,
                                  self.row_buffer, inputs)
        stored = []
        for i in range(count):
            if self.row_buffer[i].status in (FAULT, HANG):
                description = self._own_finding(seed, first + i)
                if description is not None:
                    stored.append(f"{i}:{description}")
        return count, stored

    def _own_finding(self, seed: int, index: int) -> Path | None:
        data = self.ffi.new(f"uint8_t[{INPUT_SIZE}]")
        self.lib.wf_uw_generate(seed, index, data)
        result = self.ffi.new("wf_uw_result *")
        self.lib.wf_uw_fuzz_one(data, INPUT_SIZE, result)
        if result.status not in (FAULT, HANG) or self.sink is None:
            return None
        own = walk_finding(WalkOutcome.from_c(result), bytes(data), self.namer, DIFFERENTIAL)
        finding = differential_own(own, self.run_unwinders)
        directory = self.sink.offer(finding)
        return None if directory is None else directory / f"{finding.sha1}.json"

    def one(self, data: bytes) -> dict[str, Any]:
        row = self.ffi.new("wf_uw_diff_row *")
        self.lib.wf_uw_diff_one(data, len(data), row)
        blob = bytes(self.ffi.buffer(row))
        fault = self.namer.describe(int(row.fault_pc)) if row.fault_pc else ""
        return {"row": blob.hex(), "fault": fault}


def serve(worker: _Worker) -> int:
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            return 0
        if words[0] != "batch" or len(words) != 5:
            print(f"error unknown command {line.strip()!r}", flush=True)
            return 2
        seed, first, count, want = (int(w) for w in words[1:])
        done, stored = worker.batch(seed, first, count, bool(want))
        print(" ".join(["ok", str(done), *stored]), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="walkfuzz.targets.native.differential.worker")
    add_unwinder_flag(parser, required=True)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--budget-ms", type=float, default=50.0)
    parser.add_argument("--clock", type=RunClock.from_text, help="the run's clock (to_text)")
    parser.add_argument("--input", type=Path, help="walk this one input, print its row")
    parser.add_argument("--run-unwinders", default="", help="every unwinder of the run")
    args = parser.parse_args(argv)
    worker = _Worker(args.unwinder, args.run_unwinders or args.unwinder, args.dir, args.out,
                     args.clock, args.budget_ms)
    if args.input is not None:
        print(json.dumps(worker.one(args.input.read_bytes())), flush=True)
        return 0
    print("ready", flush=True)
    return serve(worker)


if __name__ == "__main__":
    sys.exit(main())
