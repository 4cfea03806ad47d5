"""Replay a snapshot: each unwinder walks it twice
(`python -m walkfuzz.targets.native.snapshot.replay [--unwinder U]... FILE`, run by the CLI in a
child process, since a walk may kill the process that runs it) and the walks print as JSON.

Verdict per unwinder: `crash` / `hang` (the harness's findings, named by the same signature),
`invalid-trace` when the snapshot carries a known chain (truth ranges) and the walk is not that
chain, else `ok`. The two walks must give the same frames; `repeatable` says whether they did.
Exit 0 all ok, 1 any finding or a walk that did not repeat, 2 not a snapshot.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from walkfuzz.core.errors import CaseFormatError, UserError
from walkfuzz.core.exit_status import BAD_INPUT, CLEAN, FINDINGS, judged
from walkfuzz.targets.native.child import walk_in_child
from walkfuzz.targets.native.finding import snapshot_finding
from walkfuzz.targets.native.inputs import describe_snapshot
from walkfuzz.targets.native.snapshot import format as fmt
from walkfuzz.targets.native.snapshot.native import load
from walkfuzz.targets.native.snapshot.walk import (
    UNWINDERS,
    SnapshotWalk,
    Walker,
    describe,
)
from walkfuzz.targets.native.unwinders import add_unwinder_flag

REPEATS = 2


def verdict(walk: SnapshotWalk) -> str:
    if walk.finding_kind is not None:
        return walk.finding_kind
    if walk.truth > 0 and not walk.matched:
        return "invalid-trace"
    return "ok"


def walk_doc(snapshot: fmt.Snapshot, data: bytes, walks: list[SnapshotWalk]) -> dict[str, Any]:
    first = walks[0]
    doc: dict[str, Any] = {
        "unwinder": first.unwinder, "verdict": verdict(first), "stop": first.stop,
        "rc": first.rc, "frames": describe(snapshot, first),
        "truth": {"ranges": first.truth, "matched": first.matched},
        "repeatable": all(w.signature_frames() == first.signature_frames()
                          and w.stop == first.stop for w in walks),
        "reads": first.reads, "misses": first.misses,
    }
    if first.finding_kind is not None:
        finding = snapshot_finding(first, data)
        doc["location"] = finding.location
        doc["signature"] = finding.signature
    return doc


def replay(data: bytes, unwinders: list[str], source: str) -> dict[str, Any]:
    snapshot = fmt.decode(data, source)
    native = load()
    docs = []
    for name in unwinders:
        walker = Walker(native, name)
        docs.append(walk_doc(snapshot, data, [walker.walk(data) for _ in range(REPEATS)]))
    return {
        "snapshot": describe_snapshot(snapshot),
        "walks": docs,
    }


def status(doc: dict[str, Any]) -> int:
    return judged(any(w["verdict"] != "ok" or not w["repeatable"] for w in doc["walks"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m walkfuzz.targets.native.snapshot.replay")
    add_unwinder_flag(parser, sorted(UNWINDERS), repeat=True)
    parser.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    try:
        doc = replay(args.file.read_bytes(), args.unwinder or sorted(UNWINDERS), str(args.file))
    except (CaseFormatError, OSError) as err:
        print(f"walkfuzz replay: error: {err}", file=sys.stderr)
        return BAD_INPUT
    print(json.dumps(doc, indent=1))
    return status(doc)


def unwinders_of(flag: str | None) -> list[str]:
    """The unwinders `--unwinder` names for a snapshot: both when not given or `all`, else
    the comma list, each one of UNWINDERS (UserError naming one that walks no snapshot)."""
    if flag is None or flag == "all":
        return sorted(UNWINDERS)
    names = flag.split(",")
    for name in names:
        if name not in UNWINDERS:
            raise UserError(f"--unwinder {name!r} does not walk snapshots; remote-memory mode "
                            f"has {', '.join(sorted(UNWINDERS))} (or all)")
    return names


def replay_and_judge(path: Path, unwinders: list[str]) -> int:
    """The replay in a child process; its JSON on stdout, its exit status (a dead child is a
    finding: 1, with how it died)."""
    if not path.is_file():
        raise UserError(f"snapshot {str(path)!r} does not exist")
    args = [arg for name in unwinders for arg in ("--unwinder", name)]
    end = walk_in_child("walkfuzz.targets.native.snapshot.replay", [*args, str(path)],
                        verdicts=(CLEAN, FINDINGS, BAD_INPUT))
    if end.died is None:
        return end.returncode
    print(f"walkfuzz replay: the replay process died ({end.died})", file=sys.stderr)
    return FINDINGS

if __name__ == "__main__":
    sys.exit(main())
