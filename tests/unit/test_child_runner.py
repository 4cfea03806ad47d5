"""The one child-process runner (walkfuzz.engine.child), on real child processes: a time-out
kills the child's whole process group, a death by a signal is named, a status report reaches
the parent while the child still runs; and no module outside the engine and the core starts a
process by itself."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from walkfuzz.engine.child import (
    ChildRun,
    kill_group,
    python_command,
    run_child,
    start_child,
    walkfuzz_command,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "fuzz"
ALLOWED = ("engine", "core")  # the folders of fuzz/ that may start a process themselves
POPEN = re.compile(r"\bPopen\(")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _gone(pid: int, seconds: float = 10.0) -> bool:
    """Whether `pid` (no child of ours: init reaps it) is gone within `seconds`."""
    deadline = time.monotonic() + seconds
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def popen_calls(package: Path) -> list[str]:
    """`path:line` of every Popen( in `package` outside the folders allowed to start one."""
    hits = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] in ALLOWED:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if POPEN.search(line):
                hits.append(f"{path.relative_to(package)}:{number}")
    return hits


def test_only_the_engine_and_the_core_start_processes() -> None:
    assert popen_calls(PACKAGE) == []


def test_the_popen_check_finds_a_popen_outside_them(tmp_path: Path) -> None:
    (tmp_path / "engine").mkdir()
    (tmp_path / "targets").mkdir()
    (tmp_path / "engine" / "ok.py").write_text("subprocess.Popen(argv)\n")
    (tmp_path / "targets" / "raw.py").write_text("import subprocess\nsubprocess.Popen(argv)\n")
    assert popen_calls(tmp_path) == ["targets/raw.py:2"]


def test_a_time_out_kills_the_child_s_process_group(tmp_path: Path) -> None:
    grandchild = tmp_path / "grandchild.pid"
    code = ("import subprocess, sys, time; "
            "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            f"open({str(grandchild)!r}, 'w').write(str(g.pid)); time.sleep(60)")
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_child(python_command("-c", code), timeout=3)
    assert time.monotonic() - started < 30  # the grandchild's open pipes kept nobody waiting
    assert grandchild.exists(), "the child had not started its grandchild in 3 s"
    assert _gone(int(grandchild.read_text()))


def test_a_stop_kills_the_child_s_process_group(tmp_path: Path) -> None:
    stop = threading.Event()
    code = "import time; print('up', flush=True); time.sleep(60)"
    threading.Timer(1.0, stop.set).start()
    done = run_child(python_command("-c", code), stop=stop, timeout=30)
    assert done.died == "SIGKILL"
    assert done.stdout == "up\n"  # its output until then is kept


def test_a_death_by_a_signal_is_named() -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    done = run_child(python_command("-c", code))
    assert done.returncode == -signal.SIGSEGV
    assert done.died == "SIGSEGV"


def test_an_exit_is_no_death_unless_it_is_no_verdict() -> None:
    done = run_child(python_command("-c", "raise SystemExit(3)"))
    assert done.died is None
    assert done.death(verdicts=(0, 1)) == "exit 3"
    assert done.death(verdicts=(0, 1, 3)) is None


def test_status_reports_stream_while_the_child_runs(tmp_path: Path) -> None:
    """The child waits for a file the parent writes only once the first report came."""
    go = tmp_path / "go"
    code = ("import os, sys, time; from walkfuzz.engine.progress import report_status; "
            "report_status({'walked': 1}); "
            f"[time.sleep(0.05) for _ in range(1200) if not os.path.exists({str(go)!r})]; "
            f"print('saw go' if os.path.exists({str(go)!r}) else 'no go')")

    def on_status(status: dict[str, object]) -> None:
        seen.append(status)
        go.write_text("")

    seen: list[dict[str, object]] = []
    done = run_child(python_command("-c", code), on_status=on_status, timeout=120)
    assert seen == [{"walked": 1}]
    assert done.stdout == "saw go\n"


def test_stdin_text_reaches_the_child() -> None:
    done = run_child(python_command("-c", "import sys; print(sys.stdin.read().upper())"),
                     stdin="walk\n")
    assert done == ChildRun(done.argv, 0, "WALK\n\n", "")


def test_kill_group_kills_what_a_started_child_started(tmp_path: Path) -> None:
    grandchild = tmp_path / "grandchild.pid"
    code = ("import subprocess, sys, time; "
            "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            f"open({str(grandchild)!r}, 'w').write(str(g.pid)); time.sleep(60)")
    process = start_child(python_command("-c", code), own_group=True)
    deadline = time.monotonic() + 30
    while not grandchild.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert kill_group(process) == -signal.SIGKILL
    assert _gone(int(grandchild.read_text()))


def test_walkfuzz_s_own_children_run_in_this_interpreter() -> None:
    command = walkfuzz_command("walkfuzz.cli", "--help")
    assert command[:3] == [sys.executable, "-m", "walkfuzz.cli"]
    done = run_child(command, timeout=120)
    assert done.returncode == 0 and "usage: walkfuzz" in done.stdout


def test_a_status_report_nobody_asked_for_is_no_line_of_stderr() -> None:
    code = ("import sys; from walkfuzz.engine.progress import report_status; "
            "report_status({'walked': 1}); print('said', file=sys.stderr)")
    done = run_child(python_command("-c", code), timeout=120)
    assert done.stderr == "said\n"
