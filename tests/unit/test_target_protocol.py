"""The Target protocol (walkfuzz.targets.protocol): every target the table registers is a package
with the five modules and the replay part's functions, and the layers above and below the
targets name no target (they reach one only through walkfuzz.targets.table)."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

from walkfuzz.targets.protocol import PARTS
from walkfuzz.targets.table import TARGETS

PACKAGE = Path(__file__).resolve().parents[2] / "fuzz"
# The layers that reach a target only through the table.
TARGET_FREE = ("triage", "commands", "report", "findings", "engine")
# A comparison with a target's name, or a tuple of them: `== "minivm"`, `in ("libunwind",
# "native")`, `!= 'hotspot'`, and the constants that used to stand for them.
NAMES = "|".join(sorted({re.escape(t.name) for t in TARGETS}))
COMPARISON = re.compile(
    rf"""(?:[!=]=|\bin|\bnot in)\s*\(?\s*["']({NAMES})["']"""
    rf"""|["']({NAMES})["']\s*(?:[!=]=|in\b)"""
    r"""|\bNATIVE_TARGETS\b|\bSTORED_TARGETS\b""")


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_every_target_package_has_the_five_modules(target: object) -> None:
    from walkfuzz.targets.table import Target

    assert isinstance(target, Target)
    package = f"walkfuzz.targets.{target.package}"
    missing = [part for part in PARTS
               if importlib.util.find_spec(f"{package}.{part}") is None]
    assert missing == [], f"{package} lacks {missing}"


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_every_target_package_has_the_protocol_functions(target: object) -> None:
    from walkfuzz.targets.table import Target

    assert isinstance(target, Target)
    package = f"walkfuzz.targets.{target.package}"
    fuzz = importlib.import_module(f"{package}.fuzz")
    stress = importlib.import_module(f"{package}.stress")
    replay = importlib.import_module(f"{package}.replay")
    assert callable(getattr(fuzz, "fuzz", None)), f"{package}.fuzz has no fuzz(args)"
    assert callable(getattr(stress, "stress", None)), f"{package}.stress has no stress(request)"
    for name in ("replay", "process_key", "alternatives"):
        assert callable(getattr(replay, name, None)), f"{package}.replay has no {name}()"
    replayer = getattr(replay, "Replayer", None)
    assert inspect.isclass(replayer), f"{package}.replay has no Replayer class"
    assert list(inspect.signature(replayer).parameters)[:2] == ["hang_ns", "key"]
    assert list(inspect.signature(replayer.run).parameters) == ["self", "data", "stored"]
    # the table hands out the package's own replay part, not another module's
    assert target.replayer() is replay


def _comparisons(path: Path) -> list[str]:
    """Each target-name comparison in `path`, as `FILE:LINE: the comparison`."""
    text = path.read_text()
    return [f"{path.name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
            for m in COMPARISON.finditer(text)]


def test_no_target_name_is_compared_outside_the_table_and_the_targets() -> None:
    found = [f"{layer}/{hit}" for layer in TARGET_FREE
             for path in sorted((PACKAGE / layer).rglob("*.py")) for hit in _comparisons(path)]
    assert found == []


def test_the_check_sees_a_target_name_comparison(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('if target == "minivm":\n    pass\nif t in ("libunwind", "native"):\n'
                     "    pass\nx = NATIVE_TARGETS\n")
    assert len(_comparisons(probe)) == 3
