"""Whether the reproducer a native run's report prints replays its finding: every group's
stored input is replayed in a fresh process, as `walkfuzz replay --target native` replays it,
and when it walks clean there, the snapshot saved beside it (walkfuzz.targets.native.walk_snapshot)
is walked by the same unwinder in remote-memory mode, as `walkfuzz replay SNAPSHOT` walks it,
each in a child process as those replays run it (walkfuzz.targets.native.child).

    an input reproduces the signature     reproducer: walkfuzz replay --target ... INPUT
    a snapshot gives the finding's kind   reproducer: walkfuzz replay --unwinder U SNAPSHOT
    neither                               reproducer unchanged; `replay` says neither does

The first that does, of the inputs then their snapshots, or for libdw (SNAPSHOT_FIRST) the
snapshots then the inputs. A watchdog hang or a stall is not checked (the replays run without a
watchdog: such a walk may not end); a cycle is, the recorder ends it.

A snapshot's walk is a remote-memory walk: its signature is `<unwinder>-remote:...` and its
frames are named by module (walkfuzz.targets.native.snapshot.walk), so it matches the finding by
kind, and a cycle by being a cycle; the group's `replay` detail names what it gave.
"""

from __future__ import annotations

import json
import shlex
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from walkfuzz.report.document import FindingGroup
from walkfuzz.targets.native.child import walk_in_child
from walkfuzz.targets.native.finding import death_finding
from walkfuzz.targets.native.inputs import PERTURB
from walkfuzz.targets.native.snapshot.walk import UNWINDERS as SNAPSHOT_UNWINDERS
from walkfuzz.targets.native.walk_snapshot import snapshot_of

JOBS = 2
CYCLE = "check:cycle"
# Unwinders whose snapshot walk runs the code the live walk ran (libdw's walker is one file for
# both, wf_snap_dw.c), only the memory read differs: their snapshot, which replays the same in
# any process, comes before their input. libunwind's remote address space is another code path
# than unw_init_local2's, so its input comes first.
SNAPSHOT_FIRST = frozenset({"libdw"})


def _doc(stdout: str) -> dict[str, Any]:
    try:
        doc = json.loads(stdout)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def input_signature(path: Path, unwinder: str) -> str | None:
    """The signature the input gives in a fresh process (a death's, as `walkfuzz replay`
    names it), None when it walks clean."""
    end = walk_in_child("walkfuzz.targets.native.child_replay", ["--unwinder", unwinder, str(path)],
                        capture=True)
    if end.died is not None:
        return death_finding(unwinder, path.read_bytes(), end.returncode).signature
    signature = _doc(end.stdout).get("signature")
    return signature if isinstance(signature, str) else None


def snapshot_walk(path: Path, unwinder: str) -> dict[str, Any] | None:
    """The first walk of the snapshot at path by `unwinder` in a fresh process (verdict,
    location, signature), None when the replay printed none (it died)."""
    end = walk_in_child("walkfuzz.targets.native.snapshot.replay",
                        ["--unwinder", unwinder, str(path)], capture=True)
    walks = _doc(end.stdout).get("walks")
    return walks[0] if isinstance(walks, list) and walks and isinstance(walks[0], dict) else None


def same_finding(group: FindingGroup, walk: dict[str, Any]) -> bool:
    """Whether a snapshot's walk is the group's finding seen remotely: the same kind, and a
    cycle when the group's is one."""
    if walk.get("verdict") != group.kind or not walk.get("repeatable"):
        return False
    return str(walk.get("location", "")).endswith(CYCLE) == group.location.endswith(CYCLE)


def _input_replays(group: FindingGroup, example: Path, unwinder: str) -> bool:
    if input_signature(example, unwinder) != group.signature:
        return False
    argv = shlex.split(group.reproducer)
    if argv and argv[-1] in group.examples:  # `walkfuzz replay ... INPUT`: name this input
        argv[-1] = str(example)
        group.reproducer = shlex.join(argv)
    group.details["replay"] = "the input reproduces it in a fresh process"
    return True


def _snapshot_replays(group: FindingGroup, snapshot: Path, unwinder: str) -> bool:
    walk = snapshot_walk(snapshot, unwinder)
    if walk is None or not same_finding(group, walk):
        return False
    group.reproducer = shlex.join(["walkfuzz", "replay", "--unwinder", unwinder, str(snapshot)])
    group.details["replay"] = ("the snapshot beside the input reproduces it in a fresh process, "
                               f"walked in remote-memory mode: {walk.get('signature')}")
    return True


def _check(group: FindingGroup, unwinder: str) -> None:
    examples = [Path(e) for e in group.examples if Path(e).is_file()]
    if not examples or group.harness != PERTURB:  # a snapshot campaign's inputs are snapshots
        return
    if group.kind == "hang" and not group.location.endswith(CYCLE):
        group.details["replay"] = ("not checked: a watchdog hang or a stall; `walkfuzz replay` "
                                   "runs the walk without a watchdog, so it may not end")
        return
    snapshots = [s for s in map(snapshot_of, examples) if s.is_file()]
    walkable = snapshots if unwinder in SNAPSHOT_UNWINDERS else []
    inputs_first = unwinder not in SNAPSHOT_FIRST
    for example in examples if inputs_first else ():
        if _input_replays(group, example, unwinder):
            return
    for snapshot in walkable:
        if _snapshot_replays(group, snapshot, unwinder):
            return
    for example in () if inputs_first else examples:
        if _input_replays(group, example, unwinder):
            return
    if walkable:
        why = "nor does the snapshot beside it"
    elif snapshots:
        why = (f"the snapshot beside it holds the walked stack, but remote-memory mode walks "
               f"only {' and '.join(sorted(SNAPSHOT_UNWINDERS))}")
    else:
        why = "no snapshot beside it (its process died on it, or it was stored before snapshots)"
    group.details["replay"] = f"the input does not reproduce it in a fresh process; {why}"


def check_reproducers(groups: list[FindingGroup], unwinder: str) -> None:
    """Replay every group's inputs (and snapshots) in fresh processes; set each reproducer
    to the one that replays its finding, and its `replay` detail to what the replays gave."""
    with ThreadPoolExecutor(JOBS) as pool:
        list(pool.map(lambda group: _check(group, unwinder), groups))
