"""A native campaign's findings replay from what the report prints, as a user copies it: each
stored finding has the snapshot of its walk beside it, a finding whose input walks clean in a
fresh process prints the snapshot's replay instead, and that replay gives the finding. `walkfuzz
triage` of native findings dirs of two unwinders groups them and replays each, per unwinder.

The libdw run uses generator seed 7: its first finding (a cycle through a pc perturbed into
the heap and an rbp a few bytes off) walks clean from its input in a fresh process, whose stack
below the chain holds other words, and cycles again from its snapshot; a run of a few seconds
finds it within its first half second of walking (a cap on time is the generator's only one).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.native.reproducers import (
    FUZZ_FOUND,
    REPLAY_FOUND,
    TRIAGE_FOUND,
    check_replay,
    check_snapshot_replay,
    is_snapshot_reproducer,
    report_groups,
    run_reproducer,
    walkfuzz,
)
from tests.opt_outs import skip_if_opted_out
from walkfuzz.findings.finding import Finding
from walkfuzz.targets.native.extension import load
from walkfuzz.targets.native.inputs import INPUT_SIZE
from walkfuzz.targets.native.snapshot import format as fmt
from walkfuzz.targets.native.walk_snapshot import WalkSnapshots

skip_if_opted_out("libunwind", module=True)

SEED = "7"
RBP = fmt.REG_NAMES.index("rbp")
MAX_INPUTS = 200_000  # libunwind faults within the first thousands of generated inputs
LIBDW_SECONDS, FP_SECONDS = "3", "1"  # fp faults from its first walks
TRIAGE_RUNS = "1"  # replayed, not read from descriptions: one run says so


def _campaign(out: Path, unwinder: str, seconds: str) -> Path:
    done = walkfuzz("fuzz", "--target", "native", "--unwinder", unwinder, "--seed", SEED,
                    "-j", "1", "--time", seconds, "--out", str(out))
    assert done.returncode == FUZZ_FOUND, done.stderr[-2000:]
    return out


def _check_report(out: Path) -> None:
    """Every stored finding has its walk beside it; every printed reproducer gives its finding,
    one of them (seed 7's first) from the snapshot."""
    inputs = sorted(out.glob("findings/*/*.bin"))
    assert inputs
    for path in inputs:
        assert path.with_suffix(".wfsnap").read_bytes()[:8] == b"WFSNAP1\0", path
    groups = report_groups(out)
    assert any(is_snapshot_reproducer(g["reproducer"]) for g in groups), groups
    for group in groups:
        if is_snapshot_reproducer(group["reproducer"]):
            walk = check_snapshot_replay(group)
            assert walk["unwinder"] == "libdw" and walk["location"].startswith("libdw-remote:")
        else:
            check_replay("native", group)
        assert "reproduces it in a fresh process" in group["details"]["replay"], group


def _check_triage(tmp_path: Path, libdw: Path, fp: Path) -> None:
    """Both unwinders' findings replayed (each in processes of its own), grouped, their
    reproducers runnable; the input that walks clean is replayed from its snapshot."""
    json_path = tmp_path / "triage.json"
    done = walkfuzz("triage", str(libdw), str(fp), "--runs", TRIAGE_RUNS, "--json",
                    str(json_path))
    assert done.returncode == TRIAGE_FOUND, done.stderr[-2000:]
    assert "native inputs are not minimized" in done.stderr
    doc: dict[str, Any] = json.loads(json_path.read_text())
    stored = [*libdw.glob("findings/*/*.bin"), *fp.glob("findings/*/*.bin")]
    members = [m for g in doc["groups"] for m in g["inputs"]]
    assert doc["inputs"] == len(stored) and not doc["errors"]
    # an input may walk clean in a fresh process (it reads process state); most do not
    assert len(members) + len(doc["clean"]) == len(stored) and len(members) > len(doc["clean"])
    assert all(m["reproduced"] == f"{TRIAGE_RUNS}/{TRIAGE_RUNS}" for m in members), members
    signatures = {m["signature"] for m in members}
    assert any(s.startswith("crash.fp_") for s in signatures), signatures
    from_snapshot = [m for m in members if m["path"].endswith(".wfsnap")]
    assert from_snapshot and all(m["signature"].startswith("hang.libdw-remote_check_cycle")
                                 for m in from_snapshot), from_snapshot
    for unwinder in ("libdw", "fp"):  # one reproducer of each unwinder's, as printed
        command = next(g["reproducer"] for g in doc["groups"]
                       if f"--unwinder {unwinder} " in g["reproducer"])
        replay = run_reproducer(command)
        assert replay.returncode == REPLAY_FOUND, (command, replay.stderr[-2000:])


def test_native_findings_replay_from_the_report_and_in_triage(tmp_path: Path) -> None:
    load("libdw"), load("fp")  # not built: an error naming the module, never a skip
    libdw = _campaign(tmp_path / "libdw", "libdw", LIBDW_SECONDS)
    _check_report(libdw)
    _check_triage(tmp_path, libdw, _campaign(tmp_path / "fp", "fp", FP_SECONDS))


def test_a_findings_walk_is_captured_from_the_registers_it_walked(tmp_path: Path) -> None:
    """In this process (and under ASan in test-asan): the snapshot a finding leaves holds the
    perturbed registers the walk started from, the stack from below them, and the modules."""
    native = load()
    snapshots = WalkSnapshots(native)
    lib, ffi = native.lib, native.ffi
    stats, result = ffi.new("wf_uw_batch_stats *"), ffi.new("wf_uw_result *")
    current = ffi.new(f"uint8_t[{INPUT_SIZE}]")
    done = 0
    while result.status == 0 and done < MAX_INPUTS:
        done += int(lib.wf_uw_fuzz_batch(1, done, 1000, current, stats, result))
    assert result.status != 0, f"no finding in {done} inputs"
    data = snapshots.last()
    assert data is not None
    snapshot = fmt.decode(data)
    rip, rsp, rbp = (int(v) for v in result.walked_from)
    assert (snapshot.regs[fmt.RIP], snapshot.regs[fmt.RSP], snapshot.regs[RBP]) == (rip, rsp, rbp)
    assert snapshot.stack and snapshot.mappings()
    assert len(snapshot.truth) == (int(result.expected_count) if result.perturbations == 0
                                   else 0)
    path = snapshots.save(tmp_path, Finding("crash", "libunwind", "perturb", "x", (), b"in"))
    assert path is not None and path.read_bytes() == data
