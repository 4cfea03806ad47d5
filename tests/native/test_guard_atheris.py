"""The guard inside an atheris campaign: installed lazily under libFuzzer, it catches the faults
of guarded calls (the campaign goes on and counts them) and passes any other fault on to
libFuzzer's own crash handling."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from walkfuzz.core import native

HARNESS = Path(__file__).with_name("guard_atheris_harness.py")
RUNS = 3000
EVERY = 7


def campaign(flavour: native.Flavour, out: Path, **env: str) -> subprocess.CompletedProcess[str]:
    # Campaigns use the cov flavour; under the ASan run the asan flavour (the ASan runtime is
    # preloaded for the whole run) stands in for it.
    child_env = {**os.environ, native.FLAVOUR_ENV: "asan" if flavour == "asan" else "cov",
                 "GUARD_EVERY": str(EVERY), **env}
    child_env.pop("PYTHONFAULTHANDLER", None)
    return subprocess.run(
        [sys.executable, str(HARNESS), f"-runs={RUNS}", "-seed=1", f"-artifact_prefix={out}/"],
        capture_output=True, text=True, env=child_env, timeout=300, check=False,
    )


def test_campaign_continues_past_every_guarded_fault(flavour: native.Flavour,
                                                     tmp_path: Path) -> None:
    run = campaign(flavour, tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    done = re.search(r"^Done (\d+) runs", run.stderr, re.M)
    assert done, run.stderr[-2000:]
    runs = int(done.group(1))
    faults = [tuple(map(int, line.split()[1:])) for line in run.stdout.splitlines()]
    assert len(faults) == runs // EVERY
    assert faults[-1] == (runs // EVERY * EVERY, runs // EVERY)
    assert not list(tmp_path.glob("crash-*"))


def test_fault_outside_the_guard_reaches_libfuzzer(flavour: native.Flavour,
                                                  tmp_path: Path) -> None:
    run = campaign(flavour, tmp_path, GUARD_ESCAPE_AT="100")
    assert run.returncode != 0
    assert len(run.stdout.splitlines()) == 99 // EVERY
    report = "AddressSanitizer: SEGV" if flavour == "asan" else "libFuzzer: deadly signal"
    assert report in run.stderr
    assert len(list(tmp_path.glob("crash-*"))) == 1


