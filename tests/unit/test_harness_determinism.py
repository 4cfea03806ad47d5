"""The same corpus gives libFuzzer the same coverage on every run. Code whose edges follow the
machine's load instead of the input (the guard's watchdog thread: how often it polls, whether a
poll lands inside a call) made a corpus of 260 inputs count 588 or 595 edges from one run to
the next, and libFuzzer keeps an input for an edge it has not seen."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = 4


def inited(harness: str, corpus: Path, scratch: Path) -> str:
    env = {**os.environ, "WALKFUZZ_NATIVE": "cov", "WALKFUZZ_OUT": str(scratch),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, str(ROOT / "harnesses" / f"{harness}.py"), "-runs=0",
                           "-max_len=4096", str(corpus)], capture_output=True, text=True,
                          timeout=600, env=env, cwd=scratch, check=False)
    found = re.search(r"INITED (cov: \d+ ft: \d+)", done.stderr)
    assert found, done.stderr[-2000:]
    return found.group(1)


def test_a_corpus_reaches_the_same_features_on_every_run(tmp_path: Path) -> None:
    counts = {inited("layouts", ROOT / "corpora" / "bytes", tmp_path) for _ in range(RUNS)}
    assert len(counts) == 1, counts
