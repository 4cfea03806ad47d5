"""The queue API called directly through cffi: capability, argument checks, dead and foreign
handles, nested safepoints, thread exit. Sequences and traces: test_queue_model/_truth."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from walkfuzz.core.native import load
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.queue.cases import base_case, physical_frames

NO_QUEUE, OTHER_ERROR, BAD_ARGUMENT = -5, -7, -23


@pytest.fixture()
def api() -> Iterator[Any]:
    """The core with a generated IN_JAVA case mapped; the thread's queues reset around."""
    ffi, lib = load()
    _, case = base_case(3, vm.ThreadState.IN_JAVA, vm.Option.WALK_SAME_THREAD)
    pc, sp, fp = physical_frames(case)[0]
    uc = ffi.new("uint8_t[]", lib.WF_QUEUE_CONTEXT_SIZE)
    lib.wf_queue_make_context(uc, pc, sp, fp)
    lib.wf_queue_thread_reset()
    yield ffi, lib, uc, (pc, sp, fp)
    lib.wf_queue_thread_reset()


def _handler(ffi: Any, calls: list[int]) -> Any:
    return ffi.callback("void(ASGST_Iterator *, void *, void *)",
                        lambda it, qarg, arg: calls.append(int(ffi.cast("uintptr_t", arg))))


def test_capability_is_reported() -> None:
    _, lib = load()
    assert lib.ASGST_Capabilities() & lib.ASGST_REGISTER_QUEUE


def test_case_format_documents_the_capability_the_core_reports() -> None:
    """docs/case-format.md §4.5 once said Capabilities returns 0 (before the queue existed)."""
    _, lib = load()
    doc = (Path(__file__).parents[2] / "docs" / "case-format.md").read_text()
    line = next(x for x in doc.splitlines() if x.startswith("- `ASGST_Capabilities()`"))
    assert lib.ASGST_Capabilities() == lib.ASGST_REGISTER_QUEUE
    assert "ASGST_REGISTER_QUEUE" in line and "returns 0" not in line, line


@pytest.mark.parametrize("env, size", [(1, 4), (0, -1), (0, 65537)])
def test_register_rejects_bad_arguments(api: Any, env: int, size: int) -> None:
    ffi, lib, _, _ = api
    fun = _handler(ffi, [])
    assert lib.ASGST_RegisterQueue(ffi.cast("void *", env), size, 0, fun, ffi.NULL) == ffi.NULL


def test_register_rejects_null_handler(api: Any) -> None:
    ffi, lib, _, _ = api
    assert lib.ASGST_RegisterQueue(ffi.NULL, 4, 0, ffi.NULL, ffi.NULL) == ffi.NULL


def test_no_queue_and_dead_queue_are_defined(api: Any) -> None:
    ffi, lib, uc, _ = api
    fun = _handler(ffi, [])
    q = lib.ASGST_RegisterQueue(ffi.NULL, 2, 0, fun, ffi.NULL)
    assert lib.ASGST_Enqueue(q, uc, ffi.NULL) == 1
    assert lib.ASGST_DeregisterQueue(ffi.NULL, q) == 1
    for handle in (q, ffi.NULL, ffi.cast("ASGST_Queue *", 0x1000)):
        assert lib.ASGST_Enqueue(handle, uc, ffi.NULL) == NO_QUEUE
        assert lib.ASGST_GetQueueElement(handle, 0) == ffi.NULL
        info = lib.ASGST_GetQueueSizeInfo(handle)
        assert (info.size, info.capacity, info.attempts) == (0, 0, 0)
        assert lib.ASGST_DeregisterQueue(ffi.NULL, handle) == 0
    counters = ffi.new("wf_queue_counters *")
    lib.wf_queue_get_counters(q, counters)
    assert (counters.attempts, counters.enqueued, counters.dropped) == (1, 1, 1)


def test_negative_indexes_and_enqueuable_element(api: Any) -> None:
    ffi, lib, uc, _ = api
    fun = _handler(ffi, [])
    q = lib.ASGST_RegisterQueue(ffi.NULL, 3, 0, fun, ffi.NULL)
    for arg in (10, 11, 12):
        assert lib.ASGST_Enqueue(q, uc, ffi.cast("void *", arg)) == 1
    args = [int(ffi.cast("uintptr_t", lib.ASGST_GetQueueElement(q, n).arg))
            for n in (0, 1, 2, -1, -2, -3)]
    assert args == [10, 11, 12, 12, 11, 10]
    assert lib.ASGST_GetQueueElement(q, 3) == ffi.NULL
    assert lib.ASGST_GetQueueElement(q, -4) == ffi.NULL
    el = ffi.new("ASGST_QueueElement *")
    assert lib.ASGST_GetEnqueuableElement(uc, el) == 1
    last = lib.ASGST_GetQueueElement(q, -1)
    assert (el.pc, el.sp, el.fp, el.arg) == (last.pc, last.sp, last.fp, ffi.NULL)
    assert lib.ASGST_GetEnqueuableElement(uc, ffi.NULL) == BAD_ARGUMENT


def test_safepoint_inside_a_handler_is_a_no_op(api: Any) -> None:
    ffi, lib, uc, (pc, sp, fp) = api
    nested: list[int] = []
    enqueued: list[int] = []

    def on_element(it: Any, qarg: Any, arg: Any) -> None:
        nested.append(lib.wf_queue_safepoint(sp, fp, pc))
        enqueued.append(lib.ASGST_Enqueue(q, uc, ffi.NULL))

    fun = ffi.callback("void(ASGST_Iterator *, void *, void *)", on_element)
    q = lib.ASGST_RegisterQueue(ffi.NULL, 2, 0, fun, ffi.NULL)
    lib.ASGST_Enqueue(q, uc, ffi.NULL)
    assert lib.wf_queue_safepoint(sp, fp, pc) == 1
    assert (nested, enqueued) == ([-1], [OTHER_ERROR])
    assert lib.ASGST_GetQueueSizeInfo(q).attempts == 0     # reset at the safepoint's end


def test_thread_exit_drops_pending_and_blocks_registration(api: Any) -> None:
    ffi, lib, uc, _ = api
    calls: list[int] = []
    fun = _handler(ffi, calls)
    q = lib.ASGST_RegisterQueue(ffi.NULL, 2, 0, fun, ffi.NULL)
    lib.ASGST_Enqueue(q, uc, ffi.NULL)
    assert lib.wf_queue_thread_exit() == 1
    assert lib.ASGST_Enqueue(q, uc, ffi.NULL) == NO_QUEUE
    assert lib.ASGST_RegisterQueue(ffi.NULL, 2, 0, fun, ffi.NULL) == ffi.NULL
    counters = ffi.new("wf_queue_counters *")
    lib.wf_queue_get_counters(q, counters)
    assert (counters.dropped, calls) == (1, [])
    lib.wf_queue_thread_reset()
    assert lib.ASGST_RegisterQueue(ffi.NULL, 2, 0, fun, ffi.NULL) != ffi.NULL


def test_enqueue_without_a_mapped_vm_is_no_thread(api: Any) -> None:
    ffi, lib, uc, _ = api
    fun = _handler(ffi, [])
    q = lib.ASGST_RegisterQueue(ffi.NULL, 2, 0, fun, ffi.NULL)
    lib.wf_case_unmap()
    assert lib.ASGST_Enqueue(q, uc, ffi.NULL) == vm.WalkCode.NO_THREAD
