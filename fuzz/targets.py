"""Where a campaign's pieces live: targets, their harness scripts, their seed corpora.

A harness is an executable atheris script. For the simulated VM (`minivm`) it is
`harnesses/<harness>.py`; for another target T it is `harnesses/<T>_<harness>.py`. Seeds
shipped with the project are in `corpora/<script stem>/`, named after the harness script
(`corpora/layouts/`, `corpora/libunwind_perturb/`; libFuzzer layout: one file per input, named
by its SHA-1). `--harness` also accepts the path of a harness script of one's own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
HARNESS_DIR = ROOT / "harnesses"
CORPORA_DIR = ROOT / "corpora"
TARGETS = ("minivm", "hotspot", "libunwind")
DEFAULT_TARGET = "minivm"
DEFAULT_MAX_LEN = 4096
# Harnesses whose inputs are whole case files need room for a stack image.
MAX_LEN = {"bytes": 16384}


@dataclass(frozen=True)
class HarnessSpec:
    name: str
    target: str
    script: Path
    seeds: Path | None  # the shipped seed corpus, if there is one
    max_len: int  # default largest input


def _script_name(target: str, harness: str) -> str:
    return f"{harness}.py" if target == DEFAULT_TARGET else f"{target}_{harness}.py"


def list_harnesses(target: str) -> list[str]:
    """Harness names available for `target`, from the scripts in harnesses/."""
    names = []
    for script in sorted(HARNESS_DIR.glob("*.py")):
        stem = script.stem
        if target == DEFAULT_TARGET:
            if not any(stem.startswith(f"{t}_") for t in TARGETS) and not stem.startswith("_"):
                names.append(stem)
        elif stem.startswith(f"{target}_"):
            names.append(stem.removeprefix(f"{target}_"))
    return names


def check_target(target: str) -> None:
    if target not in TARGETS:
        raise UserError(f"unknown target {target!r}; known targets: {', '.join(TARGETS)}")


def find_harness(target: str, harness: str) -> HarnessSpec:
    """The harness named `harness` for `target`, or a harness script given by path."""
    check_target(target)
    if os.sep in harness or harness.endswith(".py"):
        script = Path(harness).resolve()
        if not script.is_file():
            raise UserError(f"harness script {harness!r} does not exist")
        name = script.stem
    else:
        script = HARNESS_DIR / _script_name(target, harness)
        name = harness
        if not script.is_file():
            known = ", ".join(list_harnesses(target)) or "none yet"
            raise UserError(
                f"unknown harness {harness!r} for target {target!r}; available: {known}"
            )
    if not os.access(script, os.X_OK):
        raise UserError(f"harness script {str(script)!r} is not executable (chmod +x it)")
    seeds = CORPORA_DIR / script.stem
    return HarnessSpec(name, target, script, seeds if seeds.is_dir() else None,
                       MAX_LEN.get(name, DEFAULT_MAX_LEN))
