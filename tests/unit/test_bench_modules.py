"""Every benchmark of `make bench` (bench/bench_*.py) runs, on its smallest case: its measure()
once, a script benchmark once as `make bench` runs it, both with WALKFUZZ_BENCH_QUICK=1 (seconds
of work, not minutes). A benchmark that breaks fails here, in `make test`, not in the next
`make bench` minutes into its run. What the figures are is not checked, only that there are
some, finite, and that the table the runner prints and records can be made of them."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from tests.opt_outs import skip_if_opted_out

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))  # as `python bench/runner.py` has it
import runner  # noqa: E402

BENCHMARKS = sorted(runner.BENCH_DIR.glob("bench_*.py"))
# The tools a benchmark needs, by the opt-out that leaves them out (tests/opt_outs.py).
NEEDS = {"bench_hotspot": ("hotspot",), "bench_libunwind": ("libunwind",),
         "bench_native": ("libunwind",)}


def test_every_benchmark_is_covered() -> None:
    assert len(BENCHMARKS) >= 10, f"bench/bench_*.py: only {BENCHMARKS}"
    assert set(NEEDS) <= {p.stem for p in BENCHMARKS}


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.stem)
def test_benchmark_runs_its_smallest_case(path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    for tool in NEEDS.get(path.stem, ()):
        skip_if_opted_out(tool)
    monkeypatch.setenv(runner.QUICK_ENV, "1")
    monkeypatch.delenv("BENCH_FUZZ_SECONDS", raising=False)
    module = runner.load(path)
    measure = getattr(module, "measure", None)
    if measure is None:
        script = runner.run_script(path)
        assert script.returncode == 0, runner.script_failure(script)
        assert any(line.strip() for line in script.output), f"{path.name} printed nothing"
        return
    rows = measure()
    assert rows, f"{path.name}: measure() gave no rows"
    by_case = {(r.group, r.case): r for r in rows}
    assert len(by_case) == len(rows), f"{path.name}: two rows of one group and case"
    for row in rows:
        assert isinstance(row, runner.Row) and math.isfinite(row.value), row
        assert row.baseline is None or (row.group, row.baseline) in by_case, row
        runner.row_record(row, by_case)  # as the results file records it
    runner.print_table(rows)
    assert capsys.readouterr().out.count("\n") == len(rows) + 1
