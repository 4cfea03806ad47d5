"""Live stress tests: each test runs one live stress (in a child process) and files its result
here; at the end of the session the controller writes ONE aggregated report of all of them
(walkfuzz.report.document: report.json/html/md) into $WALKFUZZ_STRESS_REPORT (default
reports/stress-tests). Works with and without pytest-xdist: each process files its results
as JSON parts, the controller (the process without `workerinput`) merges them."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from walkfuzz.targets.minivm.stress.session import write_session_report

ROOT = Path(__file__).resolve().parents[2]
REPORT_DIR = Path(os.environ.get("WALKFUZZ_STRESS_REPORT", ROOT / "reports" / "stress-tests"))
PARTS = REPORT_DIR / "parts"


def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if _is_controller(session.config):
        shutil.rmtree(PARTS, ignore_errors=True)
        PARTS.mkdir(parents=True, exist_ok=True)
        session.config.stash[_STARTED] = time.time()


_STARTED = pytest.StashKey[float]()


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _is_controller(session.config) or not PARTS.is_dir():
        return
    parts = [json.loads(p.read_text()) for p in sorted(PARTS.glob("*.json"))]
    if parts:
        started = session.config.stash.get(_STARTED, time.time())
        paths = write_session_report(REPORT_DIR, parts, started)
        print(f"\nstress session report: {paths['html']}")


@pytest.fixture
def file_result(request: pytest.FixtureRequest) -> Any:
    """Call with a stress result to add it to the session report."""

    def file(result: dict[str, Any]) -> None:
        PARTS.mkdir(parents=True, exist_ok=True)
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in request.node.nodeid)
        (PARTS / f"{name}.json").write_text(json.dumps({"test": request.node.nodeid, **result}))

    return file
