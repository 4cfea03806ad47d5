#!/usr/bin/env python3
"""atheris harness (target native, harness snapshot): mutate a captured native stack — its
register context and stack bytes against fixed module addresses, the shape of rust-minidump's
walk_stack fuzz target — and walk it with one unwinder through accessors over the snapshot
(walkfuzz._snapshot: libunwind's remote address space, or libdw's Dwfl_Thread_Callbacks).

Input = a snapshot file (docs/native-snapshots.md), of which a custom mutator changes only the
registers and the stack bytes (header, truth and module map stay as captured). Seeds: live
samples of known chains taken in this process when the corpus folder is empty (their module
files are this checkout's, so they are captured here rather than shipped). $WALKFUZZ_UNWINDER
picks the unwinder (libunwind, the default, or libdw). Neither unwinder has coverage
instrumentation, so the feedback libFuzzer gets is the outcome, classified by an instrumented
Python function: new stop reasons, walk lengths, how much of the known chain came out and how
many reads missed the snapshot count as new coverage.

    harnesses/native_snapshot.py CORPUS_DIR -runs=100000     # by hand
    harnesses/native_snapshot.py crash-<sha1>                # replay one input
"""

import os
import sys
from pathlib import Path

import atheris  # type: ignore[import-untyped]

from walkfuzz.core.errors import CaseFormatError
from walkfuzz.engine.worker import Worker
from walkfuzz.targets.native.finding import snapshot_finding
from walkfuzz.targets.native.snapshot.capture import capture_chain, capture_seeds
from walkfuzz.targets.native.snapshot.format import join_walked, split_walked
from walkfuzz.targets.native.snapshot.native import load
from walkfuzz.targets.native.snapshot.walk import UNWINDER_ENV, SnapshotWalk, Walker

SEEDS = 16
FINDING_STOPS = (5, 7, 8)  # cycle, fault, hang (wf_snap_stop)

worker = Worker.from_environment("snapshot")
native = load()
walker = Walker(native, os.environ.get(UNWINDER_ENV) or "libunwind")
result = walker.raw
walk_c = native.lib.wf_snap_walk
unwinder_code = {"libunwind": 0, "libdw": 1}[walker.unwinder]


def bucket(n: int) -> int:
    return n.bit_length()


@atheris.instrument_func
def outcome_feedback(stop: int, rc: int, frames: int, matched: int, misses: int,
                     exact: int) -> int:
    """Branches for libFuzzer to see: each new combination here is new coverage."""
    score = stop * 100
    code = -rc if rc < 0 else rc  # libunwind's -UNW_E*, libdw's dwfl_errno
    if code == 0:
        score += 0
    elif code < 4:
        score += 100000
    elif code < 8:
        score += 200000
    elif code < 16:
        score += 300000
    elif code < 32:
        score += 400000
    else:
        score += 500000
    for value, scale in ((bucket(frames), 1), (bucket(matched), 10), (bucket(misses), 1000)):
        if value == 0:
            score += 0
        elif value == 1:
            score += scale
        elif value == 2:
            score += 2 * scale
        elif value == 3:
            score += 3 * scale
        elif value == 4:
            score += 4 * scale
        else:
            score += 5 * scale
    if exact:
        score += 7
    return score


def one_input(data: bytes) -> None:
    worker.record(data)
    stop = walk_c(unwinder_code, data, len(data), result)
    frames = int(result.frames)
    matched = 0
    while matched < frames and result.frame[matched].truth == matched:
        matched += 1
    outcome_feedback(stop, int(result.rc), frames, matched, int(result.misses),
                     frames > 1 and int(result.frame[frames - 1].exact))
    if stop in FINDING_STOPS:
        walk = SnapshotWalk.from_c(walker.unwinder, result, native.ffi)
        worker.report(snapshot_finding(walk, data))


fallback: list[bytes] = []  # a snapshot for libFuzzer's first, empty input to grow from


def mutate(data: bytes, max_size: int, seed: int) -> bytes:
    """libFuzzer's mutation of the registers and stack bytes only: the header, the truth and
    the module map stay as captured (a mutated map costs a reload of every module and walks
    nothing new). An input that is no snapshot is replaced by a captured one."""
    try:
        head, walked, middle = split_walked(data)
    except CaseFormatError:
        if not fallback:
            fallback.append(capture_chain([0, 1, 2, 3]).encode())
        return fallback[0]
    room = max(max_size - len(head) - len(middle), len(walked))
    return join_walked(head, atheris.Mutate(walked, room), middle)


def crossover(data1: bytes, data2: bytes, max_size: int, seed: int) -> bytes:
    """The registers and stack of data1 up to a point, then data2's from there: two inputs'
    fixed parts are not spliced into one (their maps and truth would no longer match)."""
    try:
        head, walked1, middle = split_walked(data1)
        _, walked2, _ = split_walked(data2)
    except CaseFormatError:
        return data1
    cut = seed % (min(len(walked1), len(walked2)) + 1)
    walked = (walked1[:cut] + walked2[cut:])[: max(max_size - len(head) - len(middle), 0)]
    return join_walked(head, walked, middle)


def seed_folder(argv: list[str]) -> None:
    """Captured seeds into the corpus folder libFuzzer was given, if it holds none yet."""
    folders = [Path(a) for a in argv[1:] if not a.startswith("-") and Path(a).is_dir()]
    if folders and not any(folders[0].iterdir()):
        capture_seeds(folders[0], SEEDS)


if __name__ == "__main__":
    seed_folder(sys.argv)
    worker.fuzz(one_input, sys.argv, mutator=mutate, crossover=crossover)
