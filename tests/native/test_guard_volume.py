"""The guard under volume: a million faults, threads faulting at once, stack overflows."""

from __future__ import annotations

import signal
import threading

from walkfuzz.core import guard, native
from walkfuzz.core.guard import Fault, Returned

MILLION = 1_000_000
THREADS = 8
FAULTS_PER_THREAD = 20_000
SMALL_STACK = 256 * 1024


def test_a_million_faults_are_all_recovered(native_testing: native.Native) -> None:
    ffi, lib = native_testing
    wrong = ffi.new("uint64_t *")
    caught = lib.wf_guard_test_fault_loop(0x10, MILLION, wrong)
    assert (caught, wrong[0]) == (MILLION, 0)
    assert guard.call("wf_guard_test_identity", 7) == Returned(7)
    fault = guard.read_word(0x28)
    assert isinstance(fault, Fault) and fault.address == 0x28


def test_threads_faulting_at_once_each_get_their_own_fault(native_testing: native.Native) -> None:
    ffi, lib = native_testing
    threads = ffi.new(f"wf_guard_test_thread[{THREADS}]")
    addresses = [0x1000 * (i + 1) + 8 * i for i in range(THREADS)]
    for thread, address in zip(threads, addresses, strict=True):
        thread.addr = address
    assert lib.wf_guard_test_concurrent_faults(threads, THREADS, FAULTS_PER_THREAD) == 0
    results = [(t.faults, t.wrong, t.last_addr) for t in threads]
    assert results == [(FAULTS_PER_THREAD, 0, address) for address in addresses]


def test_stack_overflow_in_a_guarded_call_is_caught(native_testing: native.Native) -> None:
    # Needs the alternate signal stack the guard gives each thread: on the overflowed stack the
    # handler itself could not run.
    ffi, lib = native_testing
    for _ in range(2):
        fault = ffi.new("wf_fault *")
        assert lib.wf_guard_test_overflow_in_thread(SMALL_STACK, fault) == 1
        assert Fault.from_native(fault).signo == signal.SIGSEGV


def test_preparing_a_thread_gives_it_an_alternate_stack(native_core: native.Native,
                                                        native_testing: native.Native) -> None:
    lib, testing = native_core.lib, native_testing.lib
    seen: list[tuple[int, int]] = []

    def fresh_thread() -> None:
        before = testing.wf_guard_test_has_altstack()
        lib.wf_guard_prepare_thread()
        seen.append((before, testing.wf_guard_test_has_altstack()))

    thread = threading.Thread(target=fresh_thread)
    thread.start()
    thread.join()
    # A Python thread has none, unless the ASan runtime gave it one (which the guard keeps).
    expected_before = 1 if native.selected_flavour() == "asan" else 0
    assert seen == [(expected_before, 1)]
