"""libunwind fuzz supervisor: a worker that dies costs one process; its input is kept."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.opt_outs import skip_if_opted_out
from walkfuzz.engine.journal import JOURNAL_NAME, read_journal
from walkfuzz.targets.native.extension import load
from walkfuzz.targets.native.inputs import INPUT_SIZE
from walkfuzz.targets.native.supervisor import run_fuzz

skip_if_opted_out("libunwind", module=True)
load()  # not built: an error naming the module and how to build it, never a skip

RUN_SECONDS = 10.0


def _children() -> list[int]:
    pids = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        pids += [int(p) for p in (task / "children").read_text().split()]
    return pids


def test_killed_worker_becomes_a_finding_and_is_restarted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A fault while libunwind has signals blocked kills the worker past every handler. Under
    # the ASan flavour the SIGSEGV sent here would instead reach ASan's handler (installed
    # before the guard, which chains to it), so keep ASan's handler out of the workers.
    options = [os.environ.get("ASAN_OPTIONS"), "handle_segv=0"]
    monkeypatch.setenv("ASAN_OPTIONS", ":".join(filter(None, options)))
    killed: list[int] = []
    journal = tmp_path / "workers" / "0" / "life-0" / JOURNAL_NAME

    def kill_one_worker(elapsed: float, counters: dict[str, object]) -> None:
        # Only once it runs inputs: a worker still starting (slow under ASan on a busy
        # machine) has no input to lose, and its death would be no finding.
        if not killed and _children() and read_journal(journal).execs > 0:
            killed.append(_children()[0])
            os.kill(killed[0], signal.SIGSEGV)  # as libunwind faulting with signals blocked

    # Long enough for a restart after a late kill: the supervisor restarts a worker only with
    # more than a second left.
    result = run_fuzz(tmp_path, RUN_SECONDS, jobs=1, progress=kill_one_worker)
    assert killed
    assert result.counters["worker_deaths"] == 1
    assert result.counters["worker_lives"] == 2
    assert result.counters["walks"] > 0
    deaths = [f for f in result.findings if f.location == "process-death:SIGSEGV"]
    assert len(deaths) == 1 and len(deaths[0].data) == INPUT_SIZE
    assert (tmp_path / f"crash-{deaths[0].sha1}").read_bytes() == deaths[0].data
    crashes = [f for f in result.findings if f.location.startswith("libunwind.so")]
    assert crashes and all(f.kind == "crash" and f.details["fault"]["signal"] for f in crashes)
