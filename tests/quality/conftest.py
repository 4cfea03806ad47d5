"""The quality suite's closing table: seconds and inputs to each planted bug's first finding,
as tests/quality/test_planted.py wrote them to build/quality-times.json during this run."""

from __future__ import annotations

import json
import time

import pytest

from walkfuzz.targets.minivm.planted_campaign import TIMES_FILE, table

STARTED = time.time()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TIMES_FILE.exists() or TIMES_FILE.stat().st_mtime < STARTED:
        return
    doc = json.loads(TIMES_FILE.read_text())
    terminalreporter.section("planted bugs: seconds and inputs to the first finding")
    for line in table(doc["hunts"]):
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"libFuzzer seed {doc['libfuzzer_seed']}, load average "
                                f"{doc['load_average']}; written to {TIMES_FILE}")
