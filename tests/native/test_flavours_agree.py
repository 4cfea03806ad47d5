"""The same input gives the same run in every build of the core: gcc's plain module and the
clang-built module a campaign uses (cov; asan under the ASan run) generate, mutate, walk and
check alike, so a finding of a campaign replays on the plain build (triage, replay, regress).

Unspecified evaluation order is what breaks this: two reads of the generator's or mutators'
byte provider in one expression (`*pick_register(p) = region_pointer(p)`) are consumed in a
different order by gcc and clang. A process loads one flavour, so each flavour runs in a
child (flavour_results.py) on the same inputs, and their lines are compared."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from walkfuzz.core import native
from walkfuzz.targets.minivm.harness import HARNESSES

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("flavour_results.py")
RANDOM_INPUTS = 300            # per harness, besides its seed corpus


def _inputs() -> list[tuple[int, bytes]]:
    rng = random.Random(11)
    out: list[tuple[int, bytes]] = []
    for name, number in sorted(HARNESSES.items()):
        out += [(number, entry.read_bytes())
                for entry in sorted((ROOT / "corpora" / name).rglob("*")) if entry.is_file()]
        out += [(number, rng.randbytes(rng.choice((16, 64, 256, 1024))))
                for _ in range(RANDOM_INPUTS)]
    return out


def _runs(flavour: native.Flavour, listing: Path) -> list[dict[str, Any]]:
    env = {**os.environ, native.FLAVOUR_ENV: flavour}
    child = subprocess.run([sys.executable, str(CHILD), str(listing)], capture_output=True,
                           text=True, env=env, timeout=300, check=False)
    assert child.returncode == 0, child.stderr[-2000:]
    return [json.loads(line) for line in child.stdout.splitlines()]


def test_plain_and_clang_builds_give_the_same_runs(flavour: native.Flavour,
                                                   tmp_path: Path) -> None:
    # A campaign's clang build is cov; under the ASan run (its runtime preloaded for every
    # child) the asan flavour stands in for it, as in test_guard_atheris.py.
    clang: native.Flavour = "asan" if flavour == "asan" else "cov"
    inputs = _inputs()
    listing = tmp_path / "inputs.txt"
    listing.write_text("".join(f"{harness} {data.hex()}\n" for harness, data in inputs))
    gcc_runs, clang_runs = _runs("plain", listing), _runs(clang, listing)
    assert len(gcc_runs) == len(clang_runs) == len(inputs)
    assert any(run["mutations"] for run in gcc_runs
               if run["harness"] == HARNESSES["registers"]), "no registers input was mutated"
    differ = [(inputs[i][0], inputs[i][1].hex(), gcc, other)
              for i, (gcc, other) in enumerate(zip(gcc_runs, clang_runs, strict=True))
              if gcc != other]
    assert not differ, f"{len(differ)} inputs run differently on plain and {clang}; " \
                       f"the first (harness, input, plain, {clang}): {differ[0]}"
