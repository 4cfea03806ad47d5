"""Replay of one minivm input (`walkfuzz replay FILE`, target minivm): decode the case, walk it
natively (the reference walker, or --walker PATH.so) and with the Python spec, and say how
they compare. It also runs FILE as the harness that made it ran it (the Replayer,
walkfuzz.targets.minivm.replayer: the campaign's hot path) and names the finding's signature,
so a reproducer from a report shows the same one. A live stress capture (a case with section
11 EXPECTED; no --harness needed) is walked again the way the live run walked it and judged by
the live oracle (walkfuzz.targets.minivm.live.replay): the finding it shows is the live
finding's (kind, `check:live-<class>`, shape, first differing frame).

Exit status: 0 when the native walk equals the spec's and the input is no finding; 1 when
they differ or it is a finding (`finding: KIND SIGNATURE`); 2 for a file that is no case.

The report is a dict built step by step (`replay_report`), so later commands can add to it
(per-step explanations come from the spec's `steps`).

The Target protocol's replay part: `replay` (the CLI), `Replayer` (triage and the reproducer
check), `process_key` and `alternatives`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from walkfuzz.core.errors import CaseFormatError
from walkfuzz.core.paths import read_input
from walkfuzz.targets.minivm import spec
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import format as C
from walkfuzz.targets.minivm.case import jsonform as case_json
from walkfuzz.targets.minivm.case import native as case_native
from walkfuzz.targets.minivm.inputs import (
    BYTES_HARNESS,
    GENERATOR_HARNESSES,
    LIVE_HARNESS,
    harness_of_path,
)
from walkfuzz.targets.minivm.queue.replay import queue_report
from walkfuzz.targets.minivm.queue.replay import summary_lines as queue_summary_lines
from walkfuzz.targets.minivm.replayer import MinivmReplayer
from walkfuzz.targets.minivm.walker_library import check_walker_library
from walkfuzz.targets.protocol import StoredInput

Replayer = MinivmReplayer


def process_key(stored: StoredInput) -> str:
    """Every minivm input runs in any replay process: the core is one library."""
    return ""


def alternatives(stored: StoredInput) -> list[StoredInput]:
    """Nothing but the input is saved with a minivm finding: a case replays as it ran."""
    return []


def _input(path: str) -> bytes:
    return read_input(Path(path))


def _harness(args: argparse.Namespace, data: bytes) -> str:
    """--harness, else the generator harness FILE's place names (said on stderr: a case file
    replayed as `bytes` would only be "bad-magic"), else `bytes`."""
    import sys

    if args.harness:
        return str(args.harness)
    inferred = None if data[:4] == C.MAGIC else harness_of_path(Path(args.file))
    if inferred is None:
        return BYTES_HARNESS
    harness, why = inferred
    print(f"walkfuzz replay: {args.file} is an input of the {harness} harness ({why}); "
          f"replayed as --harness {harness}", file=sys.stderr)
    return harness


def hot_path(args: argparse.Namespace) -> tuple[bytes | None, dict[str, Any] | None,
                                                  dict[str, Any] | None]:
    """Run FILE as its harness did: the case it maps to (None: FILE itself; for a generator
    harness's input the case generated from it, kept in memory: nothing is left on disk), the
    finding it makes (None: none), and for a live capture what the live oracle said of its walk
    (None for any other input)."""
    from walkfuzz.targets.minivm.case.expected import has_expected

    data = _input(args.file)
    harness = _harness(args, data)
    if harness in (BYTES_HARNESS, LIVE_HARNESS) and has_expected(data):
        harness = LIVE_HARNESS                  # a live capture says what it is
    walker = str(Path(args.walker).resolve()) if args.walker else "reference"
    replayer = MinivmReplayer()
    if harness == BYTES_HARNESS and not data:
        return None, None, None  # read_case names the problem
    replay = replayer.run_as(data, harness, walker, args.file)
    found = replay.finding
    finding = None if found is None else {"kind": found.kind, "signature": found.signature,
                                          "location": found.location, "shape": list(found.shape)}
    if harness == LIVE_HARNESS:
        live = {**replay.extra, "why": replay.why,
                "finding": None if finding is None else {**finding, "class": replay.klass}}
        return None, finding, live
    if harness == BYTES_HARNESS:
        return None, finding, None
    return replayer.materialize(data, harness, walker, args.file), finding, None


def read_case(path: str, data: bytes | None = None) -> tuple[bytes, C.Case]:
    """The case of `path` (or `data`, the case generated from it), decoded."""
    if data is None:
        data = _input(path)
    if not data:
        raise CaseFormatError(path, "empty file (truncated: a case needs at least 8 bytes)")
    return data, dec.decode(data, source=path)


def _frames(frames: tuple[C.Frame, ...], describe: case_json.Describer) -> list[Any]:
    return [case_json.frame_to_json(f, describe) for f in frames]


def first_difference(native: case_native.NativeRun, want: spec.WalkResult) -> dict[str, Any] | None:
    """Where the native walk leaves the spec's: run result, a frame, the count, the end."""
    if native.fault is not None:
        return {"what": native.finding, "fault": native.fault.to_json()}
    if native.run_result != want.run_result:
        return {"what": "run result", "native": native.run_result, "spec": want.run_result,
                "why": want.reason}
    for i, (got, expected) in enumerate(zip(native.frames, want.frames, strict=False)):
        if got != expected:
            fields = [k for k in expected.__dataclass_fields__
                      if getattr(got, k) != getattr(expected, k)]
            return {"what": "frame", "index": i, "fields": fields}
    if len(native.frames) != len(want.frames):
        return {"what": "frame count", "native": len(native.frames), "spec": len(want.frames),
                "why": want.reason}
    if native.end_code != want.end_code:
        return {"what": "end code", "native": native.end_code, "spec": want.end_code,
                "why": want.reason}
    return None


def replay_report(path: str, walker: str | None,
                  generated: bytes | None = None) -> dict[str, Any]:
    """The report of the case in `path`, or of the case `generated` from it."""
    data, case = read_case(path, generated)
    native_status = case_native.decode(data)
    if native_status.status != 0:
        raise CaseFormatError(path, f"the C decoder refuses it: {native_status.message}")
    loaded = case_native.load_walker(walker)
    native = case_native.run_mapped(loaded)
    want = spec.walk(case)
    describe = case_json.Describer(case)
    return {
        "file": path,
        "case": case_json.case_to_json(case),
        "native": {"walker": native.walker, "run_result": native.run_result,
                   "end_code": native.end_code, "frames": _frames(native.frames, describe),
                   "finding": native.finding, "check": native.check, "oracle": native.oracle,
                   "fault": None if native.fault is None else native.fault.to_json()},
        "spec": {"run_result": want.run_result, "end_code": want.end_code,
                 "frames": _frames(want.frames, describe), "why_it_ended": want.reason,
                 "steps": [{"sp": hex(s.frame.sp), "fp": hex(s.frame.fp), "pc": hex(s.frame.pc),
                            "kind": s.kind.name if s.kind else None, "reported": s.reported,
                            "code": s.code, "reason": s.reason} for s in want.steps]},
        "first_difference": first_difference(native, want),
        "queue": queue_report(data, case, path, loaded),
    }


def _live_lines(live: dict[str, Any]) -> list[str]:
    found = live["finding"]
    if found is None:
        return [f"live oracle: {live['outcome']} ({live['why']})"]
    return [f"live oracle: {found['kind']} {found['class']} at {found['location']}, first "
            f"differing frame {live['first_diff']}, {live['walked_count']} frames walked, end "
            f"{live['end_name']}", f"finding: {found['kind']} {found['signature']}"]


def _summary(report: dict[str, Any]) -> str:
    native, want = report["native"], report["spec"]
    lines = [f"case {report['file']}:"]
    for f in native["frames"]:
        lines.append(f"  {f['type']:<13} level {f['comp_level']:>2} bci {f['bci']:>5} "
                     f"{f['method_name'] or '-'}  pc {f['pc']} sp {f['sp']}")
    lines.append(f"native ({native['walker']}): run {native['run_result']}, "
                 f"{len(native['frames'])} frames, end {native['end_code']}, "
                 f"finding {native['finding']}")
    lines.append(f"spec: run {want['run_result']}, {len(want['frames'])} frames, "
                 f"end {want['end_code']} ({want['why_it_ended'] or 'refused'})")
    diff = report["first_difference"]
    lines.append("native == spec" if diff is None else f"DIFFERS: {json.dumps(diff)}")
    if report["queue"] is not None:
        lines += queue_summary_lines(report["queue"])
    if report.get("live") is not None:       # the live oracle's lines name the finding
        lines += _live_lines(report["live"])
    else:
        found = report.get("finding")
        lines.append("finding: none" if found is None
                     else f"finding: {found['kind']} {found['signature']}")
    return "\n".join(lines)


def _with_harness_hint(err: CaseFormatError, args: argparse.Namespace) -> CaseFormatError:
    """A file no --harness named that is no case file: it may be a generator harness's."""
    if args.harness or err.problem.startswith(("empty", "truncated")):
        return err
    return CaseFormatError(err.source, f"{err.problem}; if it is the input of a generator "
                           f"harness, pass --harness ({', '.join(sorted(GENERATOR_HARNESSES))})")


def replay(args: argparse.Namespace) -> int:
    """Print FILE's case as JSON (or, with --json, the whole report) and the comparison."""
    # the --walker check of fuzz and stress: one line naming a missing symbol, and a walker
    # built for coverage (-fsanitize=fuzzer-no-link) loads because it loads libFuzzer first
    walker = str(check_walker_library(args.walker)) if args.walker else None
    try:
        generated, finding, live = hot_path(args)
        label = args.file if generated is None else f"{args.file} (the case it generates)"
        report = replay_report(label, walker, generated)
    except CaseFormatError as err:
        raise _with_harness_hint(err, args) from None
    report["finding"] = finding
    report["live"] = live
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(json.dumps(report["case"], indent=1))
        print(_summary(report))
    queue = report["queue"]
    queue_bad = queue is not None and "not_run" not in queue and (
        queue["first_difference"] is not None or queue["finding"] != "none")
    clean = report["first_difference"] is None and not queue_bad and finding is None
    return 0 if clean else 1
