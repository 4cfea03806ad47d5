"""`bench/runner.py --results DIR` on a tiny fake bench area (no timing): one dated results file
per run, .json and .md, with the machine, the commit, the date, every row (with its ratio) and
every script benchmark's output; a second run never overwrites the first. And every results
file README, docs and CHANGELOG name exists."""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))  # as `python bench/runner.py` has it
import runner  # noqa: E402

MEASURED = '''
from runner import Row

def measure():
    return [Row("fake", "slow path", 40.0, "ns"),
            Row("fake", "fast path", 10.0, "ns", baseline="slow path", target="< 20 ns")]
'''
SCRIPT = '''
import sys

STATUS = 0

if __name__ == "__main__":
    print("fake script: 1234 widgets/s")
    sys.exit(STATUS)
'''


@pytest.fixture
def fake_bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    area = tmp_path / "bench"
    area.mkdir()
    (area / "bench_measured.py").write_text(MEASURED)
    (area / "bench_script.py").write_text(SCRIPT)
    monkeypatch.setattr(runner, "BENCH_DIR", area)
    return runner


def results(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.json"))


def test_a_run_writes_one_dated_results_file(fake_bench: ModuleType, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"
    assert fake_bench.main(["--results", str(out)]) == 0
    [path] = results(out)
    today = datetime.date.today().isoformat()
    assert re.fullmatch(rf"{today}-{len(os.sched_getaffinity(0))}cpu-[a-z0-9-]+\.json",
                        path.name), path.name
    doc = json.loads(path.read_text())
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert (doc["date"], doc["commit"]) == (today, head)
    assert doc["machine"]["cpus"] == len(os.sched_getaffinity(0)) and doc["machine"]["cpu"]
    assert len(doc["load_average"]["before"]) == len(doc["load_average"]["after"]) == 3
    assert [(r["case"], r["value"], r["unit"], r["ratio"], r["target"]) for r in doc["rows"]] == [
        ("slow path", 40.0, "ns", None, ""), ("fast path", 10.0, "ns", 0.25, "< 20 ns")]
    assert doc["scripts"] == [{"name": "bench_script", "returncode": 0,
                               "output": ["fake script: 1234 widgets/s"]}]
    assert set(doc["seconds"]) == {"bench_measured", "bench_script"}

    md = path.with_suffix(".md").read_text()
    assert f"`{path.name}`" in md and head in md and today in md
    assert "| fake | slow path | 40.0 | ns |" in md
    assert "| fake | fast path | 10.0 | ns | 0.25x slow path | < 20 ns |" in md
    assert "fake script: 1234 widgets/s" in md
    assert f"bench results: {path}" in capsys.readouterr().out


def test_a_second_run_gets_its_own_file(fake_bench: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert fake_bench.main(["--results", str(out)]) == 0
    [first] = results(out)
    kept = first.read_text()
    assert fake_bench.main(["--results", str(out), "measured"]) == 0
    second = next(p for p in results(out) if p != first)
    assert second.stem == f"{first.stem}-2" and second.with_suffix(".md").is_file()
    assert first.read_text() == kept
    doc = json.loads(second.read_text())
    assert doc["scripts"] == [] and doc["command"] == ["bench/runner.py", "--results", str(out),
                                                      "measured"]


def test_without_results_nothing_is_written(fake_bench: ModuleType, tmp_path: Path) -> None:
    assert fake_bench.main(["measured"]) == 0
    assert not list(tmp_path.rglob("*.json"))


def test_a_failed_script_is_recorded_and_fails_the_run(fake_bench: ModuleType,
                                                      tmp_path: Path) -> None:
    script = fake_bench.BENCH_DIR / "bench_script.py"
    script.write_text(SCRIPT.replace("STATUS = 0", "STATUS = 3"))
    out = tmp_path / "results"
    assert fake_bench.main(["--results", str(out), "script"]) == 1
    [path] = results(out)
    doc = json.loads(path.read_text())
    assert doc["scripts"][0]["returncode"] == 3
    assert doc["failed"] == {"bench_script": "exit 3: fake script: 1234 widgets/s"}
    md = path.with_suffix(".md").read_text()
    assert "(its own output, exit 3)" in md
    assert "- bench_script: exit 3: fake script: 1234 widgets/s" in md


BROKEN = {
    # measure() raising, as bench_triage's did on a finding minimized to an empty input
    "bench_divides.py": "def measure():\n    return [1 / len(b'')]\n",
    "bench_exits.py": "def measure():\n    raise SystemExit('no report: the campaign died')\n",
    "bench_unloadable.py": "import walkfuzz.no_such_module\n",
}


def test_a_failed_benchmark_is_recorded_and_the_others_rows_are_kept(
        fake_bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, text in BROKEN.items():
        (fake_bench.BENCH_DIR / name).write_text(text)
    out = tmp_path / "results"
    assert fake_bench.main(["--results", str(out)]) == 1
    [path] = results(out)
    doc = json.loads(path.read_text())
    assert [r["case"] for r in doc["rows"]] == ["slow path", "fast path"]
    assert doc["scripts"][0]["returncode"] == 0
    assert doc["failed"] == {
        "bench_divides": "ZeroDivisionError: division by zero",
        "bench_exits": "no report: the campaign died",
        "bench_unloadable": "ModuleNotFoundError: No module named 'walkfuzz.no_such_module'",
    }
    md = path.with_suffix(".md").read_text()
    assert "| fake | fast path | 10.0 | ns | 0.25x slow path | < 20 ns |" in md
    assert "- bench_divides: ZeroDivisionError: division by zero" in md
    printed = capsys.readouterr()
    assert "fast path" in printed.out and "3 benchmark(s) FAILED" in printed.err


def test_quick_sets_the_variable_every_benchmark_reads(fake_bench: ModuleType,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(runner.QUICK_ENV, "0")  # and restored after: --quick sets it
    assert runner.budget(10.0, 0.1) == 10.0
    assert fake_bench.main(["--quick", "measured"]) == 0
    assert os.environ[runner.QUICK_ENV] == "1" and runner.budget(10.0, 0.1) == 0.1
    with pytest.raises(SystemExit):  # a quick run's figures are never recorded
        fake_bench.main(["--quick", "--results", str(fake_bench.BENCH_DIR / "results")])


def test_the_docs_name_only_results_files_that_exist() -> None:
    named = set()
    for doc in [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]:
        named |= set(re.findall(r"bench/results/([\w.-]+\.(?:json|md))", doc.read_text()))
    missing = sorted(n for n in named if not (ROOT / "bench" / "results" / n).is_file())
    assert not missing, f"named in the docs but not in bench/results/: {missing}"


def test_a_row_with_a_goal_is_marked_met_or_missed() -> None:
    base = runner.Row("g", "bare", 100.0, "exec/s")
    slow = runner.Row("g", "slow", 85.0, "exec/s", baseline="bare", target=">= 0.90x",
                      goal=runner.Goal(at_least=0.9))
    fast = runner.Row("g", "fast", 95.0, "exec/s", baseline="bare", target=">= 0.90x",
                      goal=runner.Goal(at_least=0.9))
    cost = runner.Row("g", "slowdown", 12.5, "%", target="<= 10%",
                      goal=runner.Goal(at_most=10.0, on="value"))
    by_case = {(r.group, r.case): r for r in (base, slow, fast, cost)}
    assert runner.verdict(base, by_case) is None
    assert runner.verdict(slow, by_case) == "MISSED"
    assert runner.verdict(fast, by_case) == "met"
    assert runner.verdict(cost, by_case) == "MISSED"
    assert "[MISSED]" in runner.format_row(slow, by_case)
    assert runner.row_record(fast, by_case)["verdict"] == "met"


def test_a_ratio_goal_over_a_baseline_of_zero_is_missed() -> None:
    # a limit that delivered nothing on a loaded machine: no share of it can be judged met
    none = runner.Row("g", "limit", 0.0, "/CPU-s")
    row = runner.Row("g", "mode", 5.0, "/CPU-s", baseline="limit", goal=runner.Goal(at_least=0.8))
    assert runner.verdict(row, {(r.group, r.case): r for r in (none, row)}) == "MISSED"
