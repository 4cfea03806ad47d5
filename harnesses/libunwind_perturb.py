#!/usr/bin/env python3
"""atheris harness (`--target libunwind`, the native target walked by libunwind; harness perturb):
walk a perturbed context with libunwind.

One C call per input: wf_uw_fuzz_one decodes the bytes (layout in wf_unwind.h), runs the chain
they name, captures the context at its bottom, applies the perturbations and walks the copy
under the guard. libunwind itself carries no coverage instrumentation, so the feedback
libFuzzer gets is the outcome, classified by an instrumented Python function: new stop
reasons, walk lengths, frame kinds and fault sites count as new coverage.

    harnesses/libunwind_perturb.py -runs=100000          # by hand
    harnesses/libunwind_perturb.py crash-<sha1>          # replay one input
"""

import sys

import atheris  # type: ignore[import-untyped]

from walkfuzz.engine.worker import Worker
from walkfuzz.targets.native.extension import load
from walkfuzz.targets.native.finding import walk_finding
from walkfuzz.targets.native.inputs import PERTURB
from walkfuzz.targets.native.outcome import Namer, WalkOutcome
from walkfuzz.targets.native.walk_snapshot import WalkSnapshots

worker = Worker.from_environment(PERTURB)
native = load()
namer = Namer(native)
result = native.ffi.new("wf_uw_result *")
fuzz_one = native.lib.wf_uw_fuzz_one
snapshots = WalkSnapshots(native)  # a stored finding's walk, saved beside it


@atheris.instrument_func
def outcome_feedback(stop: int, frames: int, first_kind: str, last_kind: str) -> int:
    """Branches for libFuzzer to see: each new combination here is new coverage."""
    score = stop
    if frames == 0:
        score += 1
    elif frames < 4:
        score += 2
    elif frames < 16:
        score += 3
    else:
        score += 4
    for kind in (first_kind, last_kind):
        if kind == "sigtramp":
            score += 5
        elif kind.startswith("chain"):
            score += 6
        elif kind == "wild":
            score += 7
        elif kind in ("bottom", "root"):
            score += 8
        else:
            score += 9
    return score


def one_input(data: bytes) -> None:
    worker.record(data)
    status = fuzz_one(data, len(data), result)
    outcome = WalkOutcome.from_c(result)
    kinds = outcome.kinds(namer) or ("none",)
    outcome_feedback(int(result.stop), int(result.frames), kinds[0], kinds[-1])
    if status != 0:
        finding = walk_finding(outcome, data, namer, PERTURB)
        snapshots.save(worker.report(finding), finding)


if __name__ == "__main__":
    worker.fuzz(one_input, sys.argv)
