"""Test set-up shared by every suite: the native flavour this run uses, and the skip policy
(a skip fails unless an opt-out of tests/opt_outs.py covers it; opt-in suites are deselected).

`make test` runs tests/native twice: with the plain core, and with `WALKFUZZ_NATIVE=asan` under
the ASan runtime. Tests take their module from `walkfuzz.core.native.load()` (or the `native_core`
fixture) and so run against whichever flavour the environment selects.
"""

from __future__ import annotations

import sys

import pytest

from tests.opt_outs import (  # noqa: F401  (the skip policy's hooks, registered from here)
    pytest_collection_modifyitems,
    pytest_make_collect_report,
    pytest_runtest_makereport,
    pytest_terminal_summary,
)
from walkfuzz.core import native


def pytest_report_header() -> str:
    return f"walkfuzz native flavour: {native.selected_flavour()} (${native.FLAVOUR_ENV})"


@pytest.fixture(scope="session")
def flavour() -> native.Flavour:
    """The native flavour of this run."""
    return native.selected_flavour()


@pytest.fixture(scope="session")
def native_core() -> native.Native:
    """`(ffi, lib)` of this run's flavour."""
    return native.load()


@pytest.fixture(scope="session")
def native_testing() -> native.Native:
    """`(ffi, lib)` of this run's flavour's testing extension (native.load_testing())."""
    return native.load_testing()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail a run in which a second flavour of the core was imported: both would map the VM at
    the same fixed address, the second one cannot (MAP_FIXED_NOREPLACE), and in the ASan run
    the tests would silently exercise the plain build. Take the core from `native.load()`."""
    chosen = native.selected_flavour()
    others = sorted(module for flavour, module in native.MODULES.items()
                    if flavour != chosen and module in sys.modules)
    if others:
        print(f"\nwalkfuzz: this {chosen} run also imported {', '.join(others)}; "
              "tests must take the core from walkfuzz.core.native.load()", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

