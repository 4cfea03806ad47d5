"""`walkfuzz fuzz` end to end on a Python-only toy harness (tests/fixtures/toy_harness.py):
findings, worker deaths, the report, SIGKILL and resume. Each campaign runs a few seconds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from walkfuzz.findings.store import load_findings

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "tests" / "fixtures" / "toy_harness.py"
WALKFUZZ = [sys.executable, "-m", "walkfuzz.cli"]


def fuzz(out: Path, *args: str, timeout: float = 60,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*WALKFUZZ, "fuzz", "--harness", str(TOY), "--out", str(out), *args],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def seeds(tmp_path: Path, **files: bytes) -> Path:
    directory = tmp_path / "seeds"
    directory.mkdir(exist_ok=True)
    for name, data in files.items():
        (directory / name).write_bytes(data)
    return directory


def test_campaign_saves_findings_and_writes_a_valid_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # the toy's ABRT and KILL deaths off: found from the seed too, they would be findings too
    run = fuzz(out, "--time", "3", "-j", "2", "--corpus", str(seeds(tmp_path, a=b"FU")),
               env={"WALKFUZZ_TOY_DEATHS": "0"})
    assert run.returncode == 1, run.stderr  # findings -> exit 1
    findings = load_findings(out)
    assert findings and {f.location for f in findings} == {"toy:fuz"}
    assert all(f.data.startswith(b"FUZ") for f in findings)
    report = json.loads((out / "report.json").read_text())
    assert report["meta"]["status"] == "completed"
    assert report["findings"][0]["kind"] == "contract"
    assert report["series"]["execs"][-1][1] > 1000
    assert max(v for _, v in report["series"]["coverage"]) > 0
    schema = json.loads((ROOT / "reports" / "run.schema.json").read_text())
    jsonschema.validate(report, schema)
    assert "report.html" in run.stdout and "1 distinct findings" in run.stdout


def test_dead_workers_become_findings_and_are_restarted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    corpus = seeds(tmp_path, k=b"KILL", a=b"ABRT", ok=b"hello")
    run = fuzz(out, "--time", "4", "--corpus", str(corpus))
    assert run.returncode == 1, run.stderr
    by_location = {f.location: f for f in load_findings(out)}
    assert by_location["process-death:SIGKILL"].data == b"KILL"  # only the journal knew it
    assert by_location["process-death:deadly signal"].data == b"ABRT"  # libFuzzer's artifact
    quarantined = {p.name for p in (out / "quarantine").iterdir()}
    assert {by_location[w].sha1 for w in ("process-death:SIGKILL",
                                          "process-death:deadly signal")} <= quarantined
    doc = json.loads((out / "campaign.json").read_text())
    assert doc["sessions"][0]["counters"]["restarts"] >= 2
    assert "worker 0 exited with SIGKILL; restarting" in run.stderr
    assert json.loads((out / "report.json").read_text())["series"]["execs"][-1][1] > 1000


def test_stop_on_first(tmp_path: Path) -> None:
    """A campaign asked for an hour ends at its first finding: one that did not would outlive
    the run's timeout and fail the test (no clock is read here: a busy machine is slow)."""
    out = tmp_path / "out"
    run = fuzz(out, "--time", "1h", "--stop-on-first", "--corpus", str(seeds(tmp_path, f=b"FUZ")),
               timeout=600)
    assert run.returncode == 1, run.stderr
    assert "stopping at the first new finding" in run.stderr


def _wait_for(condition: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError("condition not reached")


def test_sigkill_then_resume_loses_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    corpus = seeds(tmp_path, f=b"FUZ", g=b"G")
    campaign = subprocess.Popen(
        [*WALKFUZZ, "fuzz", "--harness", str(TOY), "--out", str(out), "--time", "60", "-j", "2",
         "--corpus", str(corpus)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(lambda: len(list((out / "findings").glob("*/*.bin"))) > 0
                  and len(list((out / "corpus").iterdir())) >= 2
                  and (out / "stats.jsonl").exists(), 20)
        time.sleep(1)
    finally:
        campaign.send_signal(signal.SIGKILL)
        campaign.wait()
    before_corpus = {p.name for p in (out / "corpus").iterdir()}
    before_findings = {p.relative_to(out) for p in out.glob("findings/*/*")}
    before_t = json.loads((out / "stats.jsonl").read_text().splitlines()[-1])["t"]
    _wait_for(lambda: not _workers_alive(out), 10)  # they follow their supervisor

    run = fuzz(out, "--runs", "200", "-j", "2")  # any work at all moves the clock on
    assert run.returncode == 1, run.stderr
    assert "resuming campaign" in run.stderr
    assert before_corpus <= {p.name for p in (out / "corpus").iterdir()}
    assert before_findings <= {p.relative_to(out) for p in out.glob("findings/*/*")}
    sessions = json.loads((out / "campaign.json").read_text())["sessions"]
    assert [s["status"] for s in sessions] == ["killed", "completed"]
    times = [p[0] for p in json.loads((out / "report.json").read_text())["series"]["execs"]]
    assert times == sorted(times) and times[-1] > before_t


def _workers_alive(out: Path) -> bool:
    result = subprocess.run(["pgrep", "-f", f"artifact_prefix={out}/"], capture_output=True)
    return result.returncode == 0


def test_a_running_campaign_directory_is_locked(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = subprocess.Popen(
        [*WALKFUZZ, "fuzz", "--harness", str(TOY), "--out", str(out), "--time", "20"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(lambda: (out / "campaign.json").exists(), 10)
        second = fuzz(out, "--time", "2")
        assert second.returncode == 2
        assert f"is in use by a running campaign (pid {first.pid})" in second.stderr
    finally:
        first.send_signal(signal.SIGTERM)  # a clean stop: report written, status interrupted
        first.wait(30)
    status = json.loads((out / "report.json").read_text())["meta"]["status"]
    assert status == "interrupted"


def test_resume_with_another_harness_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "campaign.json").write_text(json.dumps({
        "spec": {"target": "minivm", "harness": "layouts", "walker": "reference"},
        "sessions": []}))
    run = fuzz(out, "--time", "1")
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1
    assert "holds a campaign with harness 'layouts', not 'toy_harness'" in run.stderr


@pytest.mark.parametrize("args,message", [
    (["--target", "jvm"], "unknown target 'jvm'"),
    (["--walker", "/nonexistent/w.so"], "walker library '/nonexistent/w.so' does not exist"),
    (["--corpus", "/nonexistent/seeds"], "corpus directory '/nonexistent/seeds' does not exist"),
])
def test_bad_input_is_one_error_line(tmp_path: Path, args: list[str], message: str) -> None:
    run = fuzz(tmp_path / "out", "--time", "1", *args)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and message in run.stderr, run.stderr


def test_unknown_harness_names_the_available_ones(tmp_path: Path) -> None:
    run = subprocess.run([*WALKFUZZ, "fuzz", "--harness", "nope", "--time", "1"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 2
    assert "unknown harness 'nope' for target 'minivm'; available:" in run.stderr


def test_a_worker_that_cannot_start_ends_the_campaign_with_its_reason(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("#!/usr/bin/env python3\nimport sys\nsys.exit('cannot load walker x.so')\n")
    broken.chmod(0o755)
    run = subprocess.run(
        [*WALKFUZZ, "fuzz", "--harness", str(broken), "--out", str(tmp_path / "out"),
         "--time", "30"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert run.returncode == 2
    last = run.stderr.strip().splitlines()[-1]
    assert "before its first input 3 times: cannot load walker x.so" in last


def test_a_finding_counts_once_its_description_is_stored(tmp_path: Path) -> None:
    """--stop-on-first stops the workers when the count goes up: a signature directory whose
    finding is still being written must not count, or the stop loses that finding."""
    from walkfuzz.engine.campaign import CampaignDir

    out = CampaignDir(tmp_path)
    writing = out.findings / "crash.walker_f+0x10.compiled.0123abcd"
    writing.mkdir(parents=True)
    (writing / "a.bin").write_bytes(b"input")
    assert out.signatures_by_kind()["crash"] == 0
    (writing / "a.json").write_text("{}")
    assert out.signatures_by_kind()["crash"] == 1
