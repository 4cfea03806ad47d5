"""`walkfuzz fuzz|replay --target native --unwinder A,B`: the differential oracle run as a user
runs it, a runs cap keeping it to a few seconds."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from walkfuzz.targets.native.differential.judge import Walk, judge
from walkfuzz.targets.native.extension import load

WALKFUZZ = [sys.executable, "-m", "walkfuzz.cli"]
UNWINDERS = ("libunwind", "libgcc")
ORDER = ("libunwind", "llvm", "libgcc", "libdw", "fp")


def walkfuzz(*args: str | Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALKFUZZ, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def test_a_differential_run_reports_every_unwinder_and_its_reproducers_replay(
        tmp_path: Path) -> None:
    for name in UNWINDERS:
        load(name)  # not built: an error naming the module, never a skip
    done = walkfuzz("fuzz", "--target", "native", "--unwinder", ",".join(UNWINDERS),
                    "--runs", "1000", "--out", tmp_path)
    report = json.loads((tmp_path / "report.json").read_text())
    assert done.returncode == (1 if report["findings"] else 0), done.stderr[-2000:]
    counters = report["counters"]
    assert counters["inputs"] == 1000
    for name in UNWINDERS:
        assert counters[f"unwinder.{name}"]["walks"] == 1000, counters
        assert f"  {name} " in done.stdout  # the summary's per-unwinder table
    assert report["findings"], "libgcc faults on perturbed contexts: findings expected"
    markdown = (tmp_path / "report.md").read_text()
    assert "| unwinder | stop | frames | walk |" in markdown
    for group in report["findings"]:
        walks = group["details"]["walks"]
        assert [w["unwinder"] for w in walks] == list(UNWINDERS), group
        assert f"--unwinder {','.join(UNWINDERS)}" in group["reproducer"]
    group = report["findings"][0]
    argv = shlex.split(group["reproducer"])
    assert argv[:2] == ["walkfuzz", "replay"]
    replay = walkfuzz(*argv[1:], timeout=120)
    assert replay.returncode == 1, replay.stderr[-2000:]
    table = replay.stdout.splitlines()
    assert table[0].split() == ["unwinder", "stop", "frames", "walk"]
    rows = {line.split()[0]: line.split()[1] for line in table[1:] if line.split()
            and line.split()[0] in UNWINDERS}
    assert rows == {w["unwinder"]: w["stop"] for w in group["details"]["walks"]}
    summary = json.loads(table[-1])
    assert summary["unwinders"] == list(UNWINDERS)


def test_an_unknown_unwinder_is_one_line_and_status_2(tmp_path: Path) -> None:
    done = walkfuzz("fuzz", "--target", "native", "--unwinder", "libunwind,nosuch", "--runs",
                    "10", "--out", tmp_path)
    assert done.returncode == 2
    assert "'nosuch'" in done.stderr and "Traceback" not in done.stderr


def test_fp_is_held_to_frames_on_the_stack_in_order_not_to_every_frame() -> None:
    """The known limit of a frame-pointer walk (a frameless function skipped) is no
    disagreement; a frame that is not on the stack is."""
    truth = (32, 3, 6, 33)
    exact = Walk("libunwind", "root", 4, truth)
    skipped = Walk("fp", "root", 3, (32, 6, 33))
    invented = Walk("fp", "root", 4, (32, 9, 6, 33))
    assert judge([exact, skipped], truth, ORDER) is None
    verdict = judge([exact, invented], truth, ORDER)
    assert verdict is not None and verdict.odd == ("fp",)
    perturbed = judge([exact, Walk("libgcc", "end", 2, truth[:2]), skipped], None, ORDER)
    assert perturbed is not None
    assert (perturbed.odd, perturbed.kind) == (("libgcc",), "ends-early-end")


def test_a_differential_stress_run_walks_every_sample_with_fp_too(tmp_path: Path) -> None:
    """libunwind and fp: one sampling process, each sample walked by both and judged."""
    done = walkfuzz("stress", "--target", "native", "--unwinder", "libunwind,fp",
                    "--duration", "0.5s", "--baseline", "0", "--out", tmp_path)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    counters = json.loads((tmp_path / "report.json").read_text())["counters"]
    walked = counters["unwinder.libunwind"]["walked"]
    fp = counters["fp_in.libunwind"]
    assert walked > 0 and fp["walked"] == walked, counters
    assert fp["fp_exact"] + fp["fp_faithful"] + fp["fp_wrong"] + fp["fp_faults"] \
        + fp["fp_hangs"] == walked
    assert "fp (same process)" in done.stdout
