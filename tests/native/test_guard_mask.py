"""The two guarded-call variants differ in what a fault does to the thread's signal mask."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from walkfuzz.core import guard
from walkfuzz.core.guard import Fault


def blocked() -> set[int]:
    return set(signal.pthread_sigmask(signal.SIG_BLOCK, []))


@pytest.fixture
def usr2_unblocked_afterwards() -> Iterator[None]:
    yield
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR2])


def test_fast_variant_unblocks_the_fault_signal_it_jumps_out_of() -> None:
    # Without the unblock in the handler the second fault would kill the process.
    for _ in range(3):
        assert isinstance(guard.read_word(0x10), Fault)
        assert signal.SIGSEGV not in blocked()


@pytest.mark.usefixtures("usr2_unblocked_afterwards")
def test_fast_variant_keeps_what_the_call_blocked() -> None:
    assert signal.SIGUSR2 not in blocked()
    fault = guard.call("wf_guard_test_block_then_read", 0x10)
    assert isinstance(fault, Fault) and fault.address == 0x10
    assert signal.SIGUSR2 in blocked()


@pytest.mark.usefixtures("usr2_unblocked_afterwards")
def test_masked_variant_restores_the_mask_of_the_caller() -> None:
    assert signal.SIGUSR2 not in blocked()
    fault = guard.call("wf_guard_test_block_then_read", 0x10, masked=True)
    assert isinstance(fault, Fault) and fault.address == 0x10
    assert signal.SIGUSR2 not in blocked()
    assert signal.SIGSEGV not in blocked()
