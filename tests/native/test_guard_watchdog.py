"""The watchdog turns a guarded call that never returns into a hang fault within its budget."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from walkfuzz.core import guard
from walkfuzz.core.errors import UserError
from walkfuzz.core.guard import Fault, Outcome, Returned

BUDGET_NS = 50_000_000
SAFETY_VALVE_NS = 20_000_000_000   # the spin returns by itself after 20 s if nobody stops it


@pytest.fixture
def budget() -> Iterator[int]:
    guard.set_budget_ns(BUDGET_NS)
    yield BUDGET_NS
    guard.set_budget_ns(0)


def spin(masked: bool = False) -> tuple[Outcome, float]:
    start = time.monotonic()
    outcome = guard.call("wf_guard_test_spin", SAFETY_VALVE_NS, masked=masked)
    return outcome, time.monotonic() - start


@pytest.mark.parametrize("masked", [False, True], ids=["fast", "masked"])
def test_endless_call_returns_a_hang_fault(budget: int, masked: bool) -> None:
    for _ in range(2):
        outcome, elapsed = spin(masked)
        assert isinstance(outcome, Fault), f"not interrupted: {outcome} after {elapsed:.1f}s"
        assert (outcome.kind, outcome.signo, outcome.code) == ("hang", guard.hang_signal(),
                                                               "SI_TKILL")
        assert elapsed >= budget / 1e9
        assert guard.call("wf_guard_test_identity", 5) == Returned(5)


def test_idle_thread_with_a_budget_is_left_alone(budget: int) -> None:
    time.sleep(4 * budget / 1e9)
    assert guard.call("wf_guard_test_identity", 9) == Returned(9)
    assert guard.call("wf_guard_test_spin", budget // 10) == Returned(0)


def test_budget_zero_stops_watching() -> None:
    guard.set_budget_ns(BUDGET_NS)
    guard.set_budget_ns(0)
    assert guard.budget_ns() == 0
    assert guard.call("wf_guard_test_spin", 3 * BUDGET_NS) == Returned(0)


def test_budget_belongs_to_its_thread() -> None:
    outcomes: list[Outcome] = []

    def watched_worker() -> None:
        guard.set_budget_ns(BUDGET_NS)
        outcomes.append(spin()[0])
        guard.set_budget_ns(0)

    worker = threading.Thread(target=watched_worker)
    worker.start()
    worker.join()
    assert isinstance(outcomes[0], Fault) and outcomes[0].kind == "hang"
    assert guard.budget_ns() == 0


def test_negative_budget_is_refused_naming_it() -> None:
    with pytest.raises(UserError, match="-5"):
        guard.set_budget_ns(-5)


def test_a_call_that_waits_for_the_cpu_is_no_hang(budget: int) -> None:
    """The budget is the thread's CPU time: a call that is not running (here it sleeps; on a
    busy machine it waits for a core) for four budgets has not hung."""
    assert guard.call("wf_guard_test_sleep", 4 * budget) == Returned(0)


ALLOCATOR_HANG = """
from walkfuzz.core import guard
from walkfuzz.core.guard import Fault, Returned
guard.set_budget_ns(50_000_000)
for _ in range(5):
    outcome = guard.call("wf_guard_test_alloc_spin", 20_000_000_000)
    assert isinstance(outcome, Fault) and outcome.kind == "hang", outcome
    assert isinstance(guard.call("wf_guard_test_alloc_spin", 1_000_000), Returned)
print("unwound outside the allocator")
"""


def test_a_hang_in_the_allocator_is_unwound_outside_it() -> None:
    """A call that spends its time in malloc and free: unwinding it inside them would leave the
    arena lock taken, and the next malloc of the thread would wait forever (a child process,
    so that a deadlock fails the test by its timeout instead of hanging the suite)."""
    child = subprocess.run([sys.executable, "-c", ALLOCATOR_HANG], capture_output=True,
                           text=True, timeout=120)
    assert child.returncode == 0 and "unwound outside" in child.stdout, child.stderr[-2000:]
