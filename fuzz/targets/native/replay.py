"""Replay one libunwind fuzz input and print what happened as JSON
(`python -m walkfuzz.targets.native.replay FILE`; the CLI runs it in a child process, since an
input may kill the process that runs it). A finding is named by its signature, built as the
harness builds it, so it compares with the one a report stored. Exit 0 clean, 1 a finding."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from walkfuzz.targets.native.case import decode
from walkfuzz.targets.native.extension import load
from walkfuzz.targets.native.outcome import Namer, WalkOutcome, to_finding


def replay(data: bytes) -> dict[str, Any]:
    native = load()
    result = native.ffi.new("wf_uw_result *")
    native.lib.wf_uw_fuzz_one(data, len(data), result)
    outcome = WalkOutcome.from_c(result)
    namer = Namer(native)
    doc: dict[str, Any] = {
        "case": decode(data).to_json(),
        "verdict": outcome.finding_kind or "ok",
        "stop": outcome.stop,
        "unw_rc": outcome.unw_rc,
        "frames": [namer.describe(pc) for _, pc, _ in outcome.frames],
        "expected": [namer.kind(i, 0) for i in outcome.expected],
    }
    if outcome.finding_kind is not None:
        finding = to_finding(outcome, data, namer, "perturb")
        doc["location"] = finding.location
        doc["signature"] = finding.signature
    if outcome.stop in ("fault", "hang"):
        doc["fault"] = {k: hex(v) if k in ("addr", "pc") else v
                        for k, v in outcome.fault.items()}
    return doc


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    doc = replay(Path(args[0]).read_bytes())
    print(json.dumps(doc, indent=1))
    return 0 if doc["verdict"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
