"""A fault inside a safepoint does not leak into the next input of the `queue` harness.

The guard's siglongjmp out of a handler or an element walk skips the end of the walker's
safepoint, so the walker would still believe its thread is processing its queues: every later
RegisterQueue refused, every Enqueue rejected, and each following input a false contract
finding. The harness resets the walker's thread state after the fault and before every input
(wf_queue_thread_reset); these tests run normal inputs alone and after such a fault and
compare.

The fault is made where only a safepoint can reach: a walker table that is the reference
walker except for NextFrame, which executes ud2. The executor calls the table's NextFrame only
to walk the iterators its handlers get, and handlers run only inside wf_queue_safepoint."""

from __future__ import annotations

import random
import signal
from typing import Any

from walkfuzz.core.native import function_address, load

QUEUE = 4                      # WF_HARNESS_QUEUE
CRASH = 1                      # WF_FINDING_CRASH


def _inputs(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(rng.choice((64, 256, 1024))) for _ in range(count)]


def _faulting_walker() -> Any:
    """The reference walker whose NextFrame faults (SIGILL) on its first instruction."""
    ffi, lib = load()
    table = ffi.new("wf_walker *", lib.wf_walker_reference()[0])
    table.next_frame = ffi.cast("int (*)(ASGST_Iterator *, ASGST_Frame *)",
                                function_address("wf_guard_test_illegal"))
    return table


def _run(walker: Any, data: bytes) -> tuple[int, ...]:
    ffi, lib = load()
    case = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    r = ffi.new("wf_run_result *")
    lib.wf_worker_run(QUEUE, walker, data, len(data), case, r)
    return (r.status, r.finding, r.check, r.queue_op, r.run_result, r.end_code, r.frames,
            r.diff_index, r.fault.kind, r.fault.signo, r.fault.pc, lib.wf_queue_fuzz_op_count())


def test_normal_inputs_run_alike_alone_and_after_a_fault_in_a_safepoint() -> None:
    _, lib = load()
    normal = _inputs(21, 40)
    alone = [_run(lib.wf_walker_reference(), data) for data in normal]
    assert all(run[:2] == (0, 0) for run in alone), alone   # the reference finds nothing
    faulting, ud2 = _faulting_walker(), function_address("wf_guard_test_illegal")
    faults = 0
    for data in _inputs(22, 60):
        status, finding, *_, signo, pc, _ops = _run(faulting, data)
        if finding == 0:
            continue                              # no handler got an iterator to walk
        assert (status, finding, signo, pc) == (0, CRASH, signal.SIGILL, ud2), data.hex()
        faults += 1
        after = [_run(lib.wf_walker_reference(), d) for d in normal]
        assert after == alone, f"after the fault of input {data.hex()}"
    assert faults >= 5, faults
