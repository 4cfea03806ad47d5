"""Progress as a user sees it: while a run goes on, a status line per interval (appended when
stderr is no terminal, rewritten in place on one), then one summary line; for stress, triage
and every target's stress."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from walkfuzz.engine.child import run_child
from walkfuzz.engine.progress import STATUS_PREFIX, Progress, firsts, report_status

WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
ROOT = Path(__file__).resolve().parents[2]
EVERY = "0.2"  # seconds between appended lines, so a short run shows several
TIMEOUT = 300
STATUS_LINE = re.compile(r"^\[\d\d:\d\d\] ")


def walkfuzz(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WALKFUZZ_PROGRESS_EVERY": EVERY}
    return subprocess.run([str(WALKFUZZ), *args], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT, check=False)


def status_lines(stderr: str, word: str) -> list[str]:
    return [line for line in stderr.splitlines()
            if STATUS_LINE.match(line) and f"] {word} " in line]


def test_minivm_stress_shows_its_counts_while_it_runs(tmp_path: Path) -> None:
    # A walk budget, not a time: a busy machine makes the run (and its status lines) longer.
    done = walkfuzz("stress", "--walks", "30000", "--duration", "120s", "--baseline", "0",
                    "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = status_lines(done.stderr, "walks")
    walks = [float(re.sub(r"k$", "e3", line.split()[2])) for line in lines]
    assert len(lines) >= 2 and walks[-1] > walks[0], done.stderr  # counts that grow
    summary = [line for line in done.stdout.splitlines() if line.startswith("stress ")]
    assert len(summary) == 1 and " walks (" in summary[0], done.stdout


def test_libunwind_stress_shows_its_counts_while_it_runs(tmp_path: Path) -> None:
    done = walkfuzz("stress", "--target", "libunwind", "--duration", "2s", "--baseline", "0.3s",
                    "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert len(status_lines(done.stderr, "walks")) >= 2, done.stderr
    summary = [line for line in done.stdout.splitlines() if line.startswith("libunwind stress: ")]
    assert len(summary) == 1 and "by kind: " in summary[0], done.stdout
    assert "{" not in done.stdout  # named fields, no Python dict


@pytest.mark.parametrize(("action", "length", "word", "counted"),
                         [("stress", "--duration", "samples", " samples ("),
                          ("fuzz", "--time", "calls", " calls in ")])
def test_hotspot_prints_progress_and_one_summary_line(tmp_path: Path, action: str, length: str,
                                                      word: str, counted: str) -> None:
    done = walkfuzz(action, "--target", "hotspot", "--jdk", "17", length, "2s",
                    "--out", str(tmp_path))
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert status_lines(done.stderr, word), done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 2, lines  # the summary and where the report is, no JSON dump
    assert lines[0].startswith(f"hotspot {action} (17): ") and counted in lines[0]
    assert lines[1] == f"report: {tmp_path.resolve() / 'report.html'}"


def test_triage_counts_the_inputs_it_replayed() -> None:
    corpus = ROOT / "corpora" / "bytes"
    total = sum(1 for p in corpus.iterdir() if p.is_file())
    done = walkfuzz("triage", str(corpus), "--runs", "1")
    lines = status_lines(done.stderr, "replayed")
    assert lines, done.stderr
    assert all(re.search(rf"replayed \d+/{total} inputs", line) for line in lines), lines


def test_on_a_terminal_the_line_is_rewritten_in_place(tmp_path: Path) -> None:
    main, side = pty.openpty()
    child = subprocess.Popen([str(WALKFUZZ), "stress", "--duration", "1s", "--baseline", "0",
                              "--out", str(tmp_path)], stdin=side, stdout=side, stderr=side)
    os.close(side)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed with the child
            break
        if not chunk:
            break
        seen += chunk
    assert child.wait(timeout=TIMEOUT) == 0, seen[-2000:]
    os.close(main)
    text = seen.decode(errors="replace")
    assert "\r\x1b[2K[00:0" in text  # back to the start of the line, cleared, redrawn
    assert text.count("\n") <= 4, text  # the status never scrolled: summary and report only
    assert "stress signal-" in text


def test_a_child_s_status_reports_reach_the_parent_and_leave_its_stderr() -> None:
    seen: list[dict[str, object]] = []
    code = ("from walkfuzz.engine.progress import report_status; import sys; "
            "report_status({'walked': 1}); print('said', file=sys.stderr); "
            "report_status({'walked': 2}); print('result')")
    done = run_child([sys.executable, "-c", code], timeout=60, on_status=seen.append)
    assert done.returncode == 0
    assert seen == [{"walked": 1}, {"walked": 2}]
    assert (done.stdout, done.stderr) == ("result\n", "said\n")
    assert STATUS_PREFIX not in done.stderr


def test_a_status_report_is_one_line() -> None:
    class Sink:
        text = ""

        def write(self, s: str) -> None:
            self.text += s

        def flush(self) -> None:
            pass

    sink = Sink()
    report_status({"walked": 3, "sampling": True}, sink)  # type: ignore[arg-type]
    assert sink.text == STATUS_PREFIX + '{"walked": 3, "sampling": true}\n'


def test_a_minivm_campaign_shows_its_status_and_one_summary(tmp_path: Path) -> None:
    done = walkfuzz("fuzz", "--harness", "layouts", "--time", "4s", "--out", str(tmp_path))
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert len(status_lines(done.stderr, "execs")) >= 2, done.stderr[-2000:]
    assert len([ln for ln in done.stdout.splitlines() if " execs in " in ln]) == 1, done.stdout


def test_libunwind_generator_fuzz_shows_its_status(tmp_path: Path) -> None:
    done = walkfuzz("fuzz", "--target", "libunwind", "--engine", "generator", "--time", "1500ms",
                    "-j", "1", "--out", str(tmp_path))
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert status_lines(done.stderr, "walks"), done.stderr[-2000:]
    assert [ln for ln in done.stdout.splitlines() if ln.startswith("libunwind fuzz: ")]


def test_a_key_that_changes_all_the_time_keeps_the_log_s_cadence() -> None:
    log = io.StringIO()
    with Progress(log, live=False, every=10.0) as progress:
        for tick in range(61):  # 30 s, an update every 0.5 s, the key new every time
            progress.update(tick / 2, f"walks {tick}", key=tick)
    # at most one line a second brought forward by the key, not one per update
    assert 4 <= len(log.getvalue().splitlines()) <= 31, log.getvalue()


def test_hit_counts_key_a_line_only_when_they_first_leave_zero() -> None:
    log = io.StringIO()
    with Progress(log, live=False, every=10.0) as progress:
        for tick, (faults, hangs) in enumerate([(0, 0), (0, 0), (5, 0), (9, 0), (20, 1),
                                                (40, 3)]):
            progress.update(float(tick), f"faults {faults} hangs {hangs}", firsts(faults, hangs))
    lines = log.getvalue().splitlines()
    assert [line.split("] ")[1] for line in lines] == [
        "faults 0 hangs 0", "faults 5 hangs 0", "faults 20 hangs 1"]


def test_native_differential_fuzz_logs_at_the_common_cadence(tmp_path: Path) -> None:
    env = {**os.environ, "WALKFUZZ_PROGRESS_EVERY": "10"}
    done = subprocess.run([str(WALKFUZZ), "fuzz", "--target", "native", "--unwinder", "all",
                           "--time", "4s", "--out", str(tmp_path)], capture_output=True,
                          text=True, env=env, timeout=TIMEOUT, check=False)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    lines = status_lines(done.stderr, "inputs")
    # every 10 s, and sooner for a new class at most once a second: not one per new class
    assert 1 <= len(lines) <= 6, done.stderr[-2000:]
