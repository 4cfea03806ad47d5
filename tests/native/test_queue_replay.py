"""`walkfuzz replay` of a case with a queue program (section 9): the program is shown, the C
executor's log and the model's prediction are both in the report and agree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from walkfuzz.targets.minivm import planted
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.queue_program import Opcode, QueueOp
from walkfuzz.targets.minivm.queue.cases import base_case, physical_frames, with_program
from walkfuzz.targets.minivm.replay import replay_report


def _queue_case(tmp_path: Path) -> tuple[Path, list[QueueOp]]:
    data, case = base_case(3, vm.ThreadState.IN_JAVA, vm.Option.WALK_SAME_THREAD)
    pc, sp, fp = physical_frames(case)[0]
    ops = [QueueOp(Opcode.REGISTER, n=2, options=vm.Option.WALK_SAME_THREAD),
           QueueOp(Opcode.ENQUEUE, queue=0, pc=pc, sp=sp, fp=fp, arg=9),
           QueueOp(Opcode.COMPRESS, queue=0, pc=pc, sp=sp, fp=fp),
           QueueOp(Opcode.SAFEPOINT, pc=pc, sp=sp, fp=fp)]
    path = tmp_path / "queue.case"
    path.write_bytes(with_program(data, ops))
    return path, ops


def test_replay_report_shows_the_program_its_log_and_the_model(tmp_path: Path) -> None:
    path, ops = _queue_case(tmp_path)
    report = replay_report(str(path), None)
    assert [o["op"] for o in report["case"]["queue"]] == [Opcode(o.code).name for o in ops]
    queue = report["queue"]
    assert queue["status"] == 0 and queue["violations"] == 0
    element = next(e for e in queue["events"] if e["kind"] == "ELEMENT")
    assert (element["arg"], element["code"]) == ("0xa", 0)   # 9, bumped once by COMPRESS
    assert element["frames"], "the element walked no frame"
    assert queue["model"] == queue["events"]
    assert queue["first_difference"] is None


def test_replay_command_prints_the_queue_log(tmp_path: Path) -> None:
    path, _ = _queue_case(tmp_path)
    out = subprocess.run([sys.executable, "-m", "walkfuzz.cli", "replay", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "queue: native == model" in out.stdout
    assert "ELEMENT" in out.stdout
    json_out = subprocess.run([sys.executable, "-m", "walkfuzz.cli", "replay", "--json",
                               str(path)], capture_output=True, text=True, timeout=120)
    assert json.loads(json_out.stdout)["queue"]["model_unavailable"] is None


def test_replay_of_a_case_without_program_has_no_queue_part(tmp_path: Path) -> None:
    data, _ = base_case(3, vm.ThreadState.IN_JAVA, vm.Option.WALK_SAME_THREAD)
    path = tmp_path / "plain.case"
    path.write_bytes(data)
    report = replay_report(str(path), None)
    assert report["case"]["queue"] is None and report["queue"] is None


def test_replay_with_a_walker_runs_the_queue_program_through_that_walker(tmp_path: Path) -> None:
    """A queue case replayed with --walker is run by that walker's queue entries and judged by
    the queue harness's oracle: the planted pool bug shows in its replay, not in the
    reference walker's."""
    data, _ = base_case(3, vm.ThreadState.IN_JAVA, vm.Option.WALK_SAME_THREAD)
    path = tmp_path / "fill.case"
    path.write_bytes(with_program(data, [QueueOp(Opcode.FILL)]))
    walker = planted.build(planted.planted_bug("pool-wraps-early"), "plain")
    reference = replay_report(str(path), None)["queue"]
    assert (reference["walker"], reference["finding"]) == ("reference", "none")
    planted_run = replay_report(str(path), str(walker))["queue"]
    assert planted_run["walker"] != "reference"
    assert (planted_run["finding"], planted_run["check"]) == ("contract", "queue-bookkeeping")
    out = subprocess.run([sys.executable, "-m", "walkfuzz.cli", "replay", "--walker",
                          str(walker), str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr
    assert "finding contract (queue-bookkeeping)" in out.stdout
