"""walkfuzz minimize: delta debugging, the queue section split, and the command's contract."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from walkfuzz.targets.minivm import planted
from walkfuzz.targets.minivm.case import encode as enc
from walkfuzz.targets.minivm.case.builder import PC_C, CaseBuilder
from walkfuzz.targets.minivm.minimize import ddmin, split_queue

WALKFUZZ = Path(sys.executable).with_name("walkfuzz")


def test_ddmin_keeps_exactly_what_the_predicate_needs() -> None:
    tests = []

    def keeps(items: list[int]) -> bool:
        tests.append(items)
        return {3, 17, 40} <= set(items)

    assert ddmin(list(range(64)), keeps, lambda: False) == [3, 17, 40]
    assert len(tests) < 64 * 6


def test_ddmin_stops_when_the_budget_is_spent() -> None:
    assert ddmin(list(range(64)), lambda items: True, lambda: True) == list(range(64))


def _case() -> bytes:
    b = CaseBuilder(stack_words=8)
    fp = b.c_frame(fp=b.hi - 16, ret=0, caller_fp=0)
    return enc.encode(b.case(context=(PC_C, b.hi - 32, fp)))


def test_split_queue_takes_out_section_9_only() -> None:
    data = _case()
    queue = b"\x09\x00\x00\x00\x04\x00\x00\x00abcd"
    assert split_queue(data + queue) == (data, queue)
    assert split_queue(data) == (data, b"")


def test_minimize_keeps_the_signature_and_shrinks(tmp_path: Path) -> None:
    walker = planted.build(planted.planted_bug("frame-size-off-by-one"), "plain")
    regressions = Path(__file__).resolve().parents[2] / "corpora" / "bytes" / "regressions"
    for candidate in sorted(regressions.iterdir()):
        out = tmp_path / "min.case"
        done = subprocess.run([str(WALKFUZZ), "minimize", str(candidate), "--walker",
                               str(walker), "-o", str(out), "--budget", "2"],
                              capture_output=True, text=True, timeout=60)
        if done.returncode == 0:
            assert out.stat().st_size <= candidate.stat().st_size
            assert "kept" in done.stdout
            return
        assert done.returncode == 2 and "nothing to minimize" in done.stderr
    raise AssertionError("no regression input shows the frame-size-off-by-one bug")


def test_a_clean_input_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "clean.case"
    path.write_bytes(_case())
    done = subprocess.run([str(WALKFUZZ), "minimize", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "clean.case" in done.stderr
    assert "nothing to minimize" in done.stderr
