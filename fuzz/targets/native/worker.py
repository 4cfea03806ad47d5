"""One fuzz worker process of one unwinder (`python -m walkfuzz.targets.native.worker
--unwinder NAME`), run by the supervisor in walkfuzz.targets.native.supervisor. One process walks
with one unwinder: their unw_* and _Unwind_* symbols clash in one process.

It runs the generator stream `seed` in C batches (wf_uw_fuzz_batch: one C call walks
thousands of inputs), each input copied into the current-input journal (the layout of
walkfuzz.engine.journal) before it runs, so that a death the guard cannot catch — a fault
while libunwind has signals blocked — leaves the input on disk. Findings are deduplicated
by signature (a few examples stored, every hit counted with its time on the supervisor's run
clock, walkfuzz.findings.hits.HitStore); counters go to `stats.json` every second.
Each stored finding's walk is saved beside it as a snapshot
(walkfuzz.targets.native.walk_snapshot).
A watchdog hang is run once more before it is reported: on a loaded machine a walk of a few
microseconds can be descheduled past the budget, and such hangs do not come back.
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

from walkfuzz.engine.journal import HEADER, JOURNAL_NAME
from walkfuzz.findings.hits import RunClock
from walkfuzz.findings.store import FindingSink, write_atomic
from walkfuzz.targets.native.extension import load
from walkfuzz.targets.native.finding import walk_finding
from walkfuzz.targets.native.inputs import INPUT_SIZE, KIND_NAMES, PERTURB
from walkfuzz.targets.native.outcome import (
    INVALID_NAMES,
    STOP_NAMES,
    Namer,
    WalkOutcome,
)
from walkfuzz.targets.native.unwinders import DEFAULT, add_unwinder_flag
from walkfuzz.targets.native.walk_snapshot import WalkSnapshots

STATS_NAME = "stats.json"
BATCH = 2000  # inputs per C call: ~20 ms, so a stop request is seen quickly
STATS_EVERY = 1.0  # seconds


class CurrentInput:
    """The journal file, mapped shared; C writes each input at `pointer` before running it."""

    def __init__(self, path: Path, native: Any) -> None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        os.ftruncate(fd, HEADER.size + INPUT_SIZE)
        self._map = mmap.mmap(fd, HEADER.size + INPUT_SIZE, mmap.MAP_SHARED)
        os.close(fd)
        self._buffer = native.ffi.from_buffer("uint8_t[]", self._map)
        self.pointer = self._buffer + HEADER.size

    def started(self, execs: int) -> None:
        HEADER.pack_into(self._map, 0, execs, INPUT_SIZE)


def stats_json(stats: Any, seed: int, elapsed: float, unconfirmed_hangs: int) -> dict[str, Any]:
    return {
        "seed": seed,
        "elapsed": elapsed,
        "unconfirmed_hangs": unconfirmed_hangs,
        **{name: int(getattr(stats, name)) for name in (
            "inputs", "unperturbed", "walks", "frames", "unw_steps", "faults", "hangs",
            "invalid", "known_limit", "walk_ns")},
        "stops": {name: int(stats.stops[i]) for i, name in enumerate(STOP_NAMES) if i},
        "invalid_kinds": {name: int(stats.invalid_kinds[i])
                          for i, name in enumerate(INVALID_NAMES) if i},
        "kinds_used": {name: int(stats.kinds_used[i]) for i, name in enumerate(KIND_NAMES)},
    }


class _Stop:
    requested = False

    def __call__(self, signo: int, frame: FrameType | None) -> None:
        self.requested = True


def run(out_dir: Path, worker_dir: Path, seed: int, seconds: float, budget_ms: float,
        clock: RunClock | None = None, unwinder: str = DEFAULT) -> int:
    native = load(unwinder)
    ffi, lib = native.ffi, native.lib
    worker_dir.mkdir(parents=True, exist_ok=True)
    stop = _Stop()
    signal.signal(signal.SIGTERM, stop)
    lib.wf_uw_set_walk_budget_ns(int(budget_ms * 1e6))
    journal = CurrentInput(worker_dir / JOURNAL_NAME, native)
    namer = Namer(native)
    sink = FindingSink(out_dir, clock=clock)
    snapshots = WalkSnapshots(native)
    stats = ffi.new("wf_uw_batch_stats *")
    result = ffi.new("wf_uw_result *")
    data = ffi.new(f"uint8_t[{INPUT_SIZE}]")
    start = time.monotonic()
    deadline, next_stats, index, unconfirmed = start + seconds, start + STATS_EVERY, 0, 0
    while not stop.requested and time.monotonic() < deadline:
        journal.started(index + 1)
        done = int(lib.wf_uw_fuzz_batch(seed, index, BATCH, journal.pointer, stats, result))
        index += done
        if result.status != 0:
            lib.wf_uw_generate(seed, index - 1, data)
            outcome = WalkOutcome.from_c(result)
            if outcome.stop == "hang" and lib.wf_uw_fuzz_one(data, INPUT_SIZE, result) != 2:
                unconfirmed += 1  # a slow walk on a loaded machine, not a hang: not reported
            else:
                finding = walk_finding(outcome, bytes(data), namer, PERTURB)
                snapshots.save(sink.offer(finding), finding)
            result.status = 0
        if time.monotonic() >= next_stats:
            doc = stats_json(stats, seed, time.monotonic() - start, unconfirmed)
            write_atomic(worker_dir / STATS_NAME, json.dumps(doc).encode())
            next_stats += STATS_EVERY
    doc = stats_json(stats, seed, time.monotonic() - start, unconfirmed)
    write_atomic(worker_dir / STATS_NAME, json.dumps(doc).encode())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="walkfuzz.targets.native.worker")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--worker-dir", type=Path, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--budget-ms", type=float, default=50.0)
    parser.add_argument("--clock", type=RunClock.from_text, help="the run's clock (to_text)")
    add_unwinder_flag(parser)
    args = parser.parse_args(argv)
    return run(args.out, args.worker_dir, args.seed, args.seconds, args.budget_ms, args.clock,
               args.unwinder)


if __name__ == "__main__":
    sys.exit(main())
