"""walkfuzz minimize: delta debugging, the queue section split, and the command's contract."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from walkfuzz.targets.minivm import planted
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import encode as enc
from walkfuzz.targets.minivm.case import format as C
from walkfuzz.targets.minivm.case.builder import PC_C, CaseBuilder
from walkfuzz.targets.minivm.minimize import MINIMIZE_HANG_NS, ddmin, minimize, split_queue
from walkfuzz.targets.minivm.replayer import MinivmReplayer

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


def _finding(path: Path, walker: Path) -> str:
    """The `finding: KIND SIGNATURE` line `walkfuzz replay` prints for path on walker, checked
    against its exit status (1: a finding, 0: none)."""
    done = subprocess.run([str(WALKFUZZ), "replay", str(path), "--walker", str(walker)],
                          capture_output=True, text=True, timeout=60)
    [line] = [x for x in done.stdout.splitlines() if x.startswith("finding: ")]
    assert done.returncode == (0 if line == "finding: none" else 1), done.stderr[-2000:]
    return line


def _minimize(path: Path, walker: Path, out: Path) -> str:
    done = subprocess.run([str(WALKFUZZ), "minimize", str(path), "--walker", str(walker), "-o",
                           str(out), "--budget", "2"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _padded(data: bytes) -> bytes:
    """The case with a class and a method after its own that nothing uses: what minimizing
    must take out again."""
    case = dec.decode(data)
    unused_class = len(case.classes)
    return enc.encode(dataclasses.replace(
        case, classes=(*case.classes, C.ClassDef(1, b"Unused" * 20, b"")),
        methods=(*case.methods, C.MethodDef(unused_class, 257, 10, b"unused" * 20, b"()V", b""))))


def test_minimize_keeps_the_signature_and_shrinks(tmp_path: Path) -> None:
    """The first regression input that shows the frame-size-off-by-one bug, already minimal,
    stays its size; the same input with an unused class and method becomes strictly smaller.
    Each minimized file replays to the finding the input replays to."""
    walker = planted.build(planted.planted_bug("frame-size-off-by-one"), "plain")
    regressions = Path(__file__).resolve().parents[2] / "corpora" / "bytes" / "regressions"
    shows = [p for p in sorted(regressions.iterdir()) if _finding(p, walker) != "finding: none"]
    assert shows, "no regression input shows the frame-size-off-by-one bug"
    candidate = shows[0]
    padded = tmp_path / "padded.case"
    padded.write_bytes(_padded(candidate.read_bytes()))
    finding = _finding(candidate, walker)
    assert _finding(padded, walker) == finding
    for source, shrinks in ((candidate, False), (padded, True)):
        out = tmp_path / f"{source.name}.min"
        stdout = _minimize(source, walker, out)
        assert f"signature {finding.split()[2]} kept" in stdout
        assert _finding(out, walker) == finding
        if shrinks:
            assert out.stat().st_size < source.stat().st_size, stdout
        else:
            assert out.stat().st_size <= source.stat().st_size, stdout


def test_a_clean_input_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "clean.case"
    path.write_bytes(_case())
    done = subprocess.run([str(WALKFUZZ), "minimize", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "clean.case" in done.stderr
    assert "nothing to minimize" in done.stderr


def test_a_generator_input_can_shrink_to_nothing_and_still_show_the_bug() -> None:
    # The layouts harness reads missing bytes as zeros, and the layout it generates from none
    # has fixed-size frames, which frame-size-off-by-one misreads: the empty input is the
    # smallest reproducer, not a case shrunk past what reproduces (the reference walker walks
    # it clean). A consumer of minimize() (bench/bench_triage.py) must allow for b"".
    walker = str(planted.build(planted.planted_bug("frame-size-off-by-one"), "plain"))
    replayer = MinivmReplayer(MINIMIZE_HANG_NS)
    empty = replayer.run_as(b"", "layouts", walker, "<empty>").finding
    assert empty is not None
    assert replayer.run_as(b"", "layouts", "reference", "<empty>").finding is None
    data = bytes(range(1, 200))
    first = replayer.run_as(data, "layouts", walker, "<input>").finding
    assert first is not None and first.signature == empty.signature, "pick another input"
    result = minimize(data, "layouts", walker, 5.0, replayer)
    assert (result.data, result.harness, result.signature) == (b"", "layouts", empty.signature)
