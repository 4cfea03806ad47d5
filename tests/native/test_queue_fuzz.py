"""The `queue` harness's one C call (wf_queue_fuzz.h) on the plain build: it generates real
programs, finds nothing on the reference walker, finds the planted queue bookkeeping bug as a
queue-bookkeeping contract finding and a wrong element walk as queue-truth, runs a walker
library's own queue functions (wf_walker.h's optional queue entries), and reports a walker
without the queue API instead of running it."""

from __future__ import annotations

import random
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from walkfuzz.core.native import load
from walkfuzz.targets.minivm import planted
from walkfuzz.targets.minivm.case.decode import decode
from walkfuzz.targets.minivm.case.queue_program import Opcode
from walkfuzz.targets.minivm.queue.cases import encoded
from walkfuzz.targets.minivm.queue.replay import queue_report
from walkfuzz.targets.minivm.walker_library import load_walker

QUEUE = 4                      # WF_HARNESS_QUEUE
CONTRACT, INVALID_TRACE = 4, 3
INPUTS = 3000


def _inputs(seed: int, count: int = INPUTS) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(rng.choice((64, 256, 512, 1024))) for _ in range(count)]


def _walker(path: Path) -> Any:
    return load_walker(str(path))


def _findings(walker: Any, inputs: list[bytes]) -> Counter[tuple[int, str]]:
    ffi, lib = load()
    case = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    result = ffi.new("wf_run_result *")
    found: Counter[tuple[int, str]] = Counter()
    for data in inputs:
        kind = lib.wf_worker_run(QUEUE, walker, data, len(data), case, result)
        if kind:
            found[(kind, ffi.string(lib.wf_check_name(result.check)).decode())] += 1
    return found


def test_programs_are_generated_and_replay_from_the_case_file() -> None:
    """The program is the mapped case's section 9: it encodes, decodes, and its ops are the
    generator's, with enqueues from the case's frames and a final safepoint."""
    ffi, lib = load()
    case = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    result = ffi.new("wf_run_result *")
    opcodes: Counter[int] = Counter()
    for data in _inputs(1, 200):
        lib.wf_worker_run(QUEUE, lib.wf_walker_reference(), data, len(data), case, result)
        assert result.status == 0
        program = decode(encoded(ffi, lib, case), "<queue input>").queue
        assert program is not None and len(program) == lib.wf_queue_fuzz_op_count()
        assert program[0].code == Opcode.REGISTER and program[-1].code == Opcode.SAFEPOINT
        opcodes.update(op.code for op in program)
    # every kind of op shows up but THREAD, which only a live capture's case has
    assert set(opcodes) == set(Opcode) - {Opcode.THREAD}, opcodes
    assert opcodes[Opcode.ENQUEUE] > opcodes[Opcode.THREAD_EXIT]


def test_same_input_same_program_and_verdict() -> None:
    ffi, lib = load()
    walker = _walker(planted.build(planted.planted_bug("queue-bookkeeping"), "plain"))
    case = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    result = ffi.new("wf_run_result *")
    for data in _inputs(2, 100):
        first = (lib.wf_worker_run(QUEUE, walker, data, len(data), case, result),
                 lib.wf_queue_fuzz_op_count(), result.queue_op)
        again = (lib.wf_worker_run(QUEUE, walker, data, len(data), case, result),
                 lib.wf_queue_fuzz_op_count(), result.queue_op)
        assert first == again, data.hex()


def test_reference_walker_gives_no_finding() -> None:
    _, lib = load()
    assert _findings(lib.wf_walker_reference(), _inputs(3)) == Counter()


def test_reference_walker_library_runs_its_own_queue() -> None:
    walker = _walker(planted.build(planted.REFERENCE, "plain"))
    assert walker.has_queue == 1
    assert _findings(walker, _inputs(4)) == Counter()


def test_planted_queue_bookkeeping_is_a_bookkeeping_contract_finding() -> None:
    walker = _walker(planted.build(planted.planted_bug("queue-bookkeeping"), "plain"))
    found = _findings(walker, _inputs(5))
    assert found, "the planted bookkeeping bug was not found"
    assert set(found) == {(CONTRACT, "queue-bookkeeping")}, found


def test_element_walks_are_checked_against_the_truth() -> None:
    """A walker whose iterator reports inlined scopes outermost first enqueues fine but walks
    every element wrongly: the truth oracle of the element walks catches it."""
    walker = _walker(planted.build(planted.planted_bug("inlined-scope-order"), "plain"))
    found = _findings(walker, _inputs(6))
    assert (INVALID_TRACE, "queue-truth") in found, found


def test_walker_without_the_queue_api_is_refused(tmp_path: Path) -> None:
    clang = shutil.which("clang")
    assert clang is not None, "clang is not on PATH (Debian package clang; make setup)"
    library = tmp_path / "no-queue.so"
    sources = [planted.WALKER_SOURCES / n for n in ("ref_walker.c", "ref_info.c")]
    subprocess.run([clang, *planted.CFLAGS, f"-I{planted.INCLUDE}", *map(str, sources), "-o",
                    str(library)], check=True)
    ffi, lib = load()
    walker = _walker(library)
    assert walker.has_queue == 0 and walker.enqueue == ffi.NULL
    reason = ffi.string(walker.queue_error).decode()
    assert str(library) in reason and "ASGST_REGISTER_QUEUE" in reason, reason
    case = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    result = ffi.new("wf_run_result *")
    data = _inputs(7, 1)[0]
    assert lib.wf_worker_run(QUEUE, walker, data, len(data), case, result) == 0
    assert result.status == lib.WF_CASE_ERR_BAD_FIELD


def test_generated_programs_agree_with_the_python_model() -> None:
    """The Python model of the queue (walkfuzz.targets.minivm.queue.model) predicts the C log of
    generated programs event by event: the generator writes programs both sides read alike."""
    ffi, lib = load()
    case = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    result = ffi.new("wf_run_result *")
    compared = 0
    for data in _inputs(8, 150):
        lib.wf_worker_run(QUEUE, lib.wf_walker_reference(), data, len(data), case, result)
        file = encoded(ffi, lib, case)
        report = queue_report(file, decode(file, "<queue input>"), "<queue input>")
        assert report is not None
        if report["model"] is None:
            continue
        assert report["first_difference"] is None, (data.hex(), report["first_difference"])
        compared += 1
    assert compared >= 75, compared
