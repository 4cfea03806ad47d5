"""Replay one fuzz input of the native target and print what happened as JSON
(`python -m walkfuzz.targets.native.replay [--unwinder NAME] FILE`, libunwind by default; the
CLI runs it in a child process, since an
input may kill the process that runs it). A finding is named by its signature, built as the
harness builds it, so it compares with the one a report stored. Exit 0 clean, 1 a finding."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from walkfuzz.core.paths import read_input
from walkfuzz.targets.native.case import decode
from walkfuzz.targets.native.extension import load
from walkfuzz.targets.native.outcome import Namer, WalkOutcome, to_finding
from walkfuzz.targets.native.unwinders import DEFAULT, add_unwinder_flag


def replay(data: bytes, unwinder: str = DEFAULT) -> dict[str, Any]:
    native = load(unwinder)
    result = native.ffi.new("wf_uw_result *")
    native.lib.wf_uw_fuzz_one(data, len(data), result)
    namer = Namer(native)
    outcome = WalkOutcome.from_c(result)
    doc: dict[str, Any] = {
        "unwinder": namer.unwinder,
        "case": decode(data).to_json(),
        "verdict": outcome.finding_kind or "ok",
        "stop": outcome.stop,
        "unw_rc": outcome.unw_rc,
        "known_limit": outcome.known_limit,
        "frames": [namer.describe(pc) for _, pc, _ in outcome.frames],
        "expected": [namer.kind(i, 0) for i in outcome.expected],
    }
    if outcome.finding_kind is not None:
        finding = to_finding(outcome, data, namer, "perturb")
        doc["location"] = finding.location
        doc["signature"] = finding.signature
    if outcome.fault is not None:
        doc["fault"] = outcome.fault.to_json()
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="walkfuzz.targets.native.replay")
    add_unwinder_flag(parser)
    parser.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    doc = replay(read_input(args.file), args.unwinder)
    print(json.dumps(doc, indent=1))
    return 0 if doc["verdict"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
