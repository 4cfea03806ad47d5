"""Bad input for the HotSpot target: each ends with one clear error line naming the problem."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.opt_outs import skip_if_opted_out
from walkfuzz.core.symbolize import exported_functions, object_location
from walkfuzz.targets.hotspot import workload
from walkfuzz.targets.hotspot.jdk import JdkError, build_jdk, find_jdk

WALKFUZZ = [sys.executable, "-m", "walkfuzz.cli"]


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALKFUZZ, *args], capture_output=True, text=True, env=env, timeout=120)


def test_no_jdk_is_one_clear_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)  # no java anywhere
    proc = _cli(["stress", "--target", "hotspot", "--duration", "1s", "--out",
                 str(tmp_path / "o")], env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no JDK found" in lines[0]


def test_jdk_without_asyncgetcalltrace_is_one_clear_error(tmp_path: Path) -> None:
    skip_if_opted_out("hotspot")
    java = find_jdk("17").java
    fake = tmp_path / "fakejdk"
    (fake / "bin").mkdir(parents=True)
    (fake / "lib" / "server").mkdir(parents=True)
    (fake / "bin" / "java").symlink_to(java.resolve())
    # a real ELF library that exports no JVM symbols stands in for libjvm.so
    shutil.copy("/lib/x86_64-linux-gnu/libm.so.6", fake / "lib" / "server" / "libjvm.so")
    with pytest.raises(JdkError, match="does not export AsyncGetCallTrace"):
        find_jdk(str(fake))
    proc = _cli(["fuzz", "--target", "hotspot", "--jdk", str(fake), "--time", "1"],
                dict(os.environ))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "does not export AsyncGetCallTrace" in proc.stderr


def test_workload_that_fails_to_compile_is_one_clear_error(tmp_path: Path) -> None:
    skip_if_opted_out("hotspot")
    javac = build_jdk().javac
    assert javac is not None  # build_jdk() raises without one
    broken = {"wf/Main.java": "package wf; public final class Main { int x = ; }\n"}
    with pytest.raises(workload.WorkloadCompileError, match=r"javac failed.*error"):
        workload.compile_sources(javac, tmp_path, 1, broken, {}, "", "broken")


def test_generated_workload_is_deterministic_and_tracks_every_feature() -> None:
    a, b = workload.generate(7), workload.generate(7)
    assert a.digest == b.digest and a.sources == b.sources
    assert workload.generate(8).digest != a.digest
    tracked = {line.split()[0] for line in a.manifest.splitlines()}
    for klass in ("Rec0", "Streams", "Exc", "Poly", "Jni", "Loading", "Deopt", "Osr", "Worker"):
        assert f"Lwf/{klass};" in tracked
    assert any(k.startswith("Lwf/plugin/") for k in tracked)


def test_libjvm_symbols_name_asgct() -> None:
    skip_if_opted_out("hotspot")
    jdk = find_jdk("17")
    assert "AsyncGetCallTrace" in exported_functions(jdk.libjvm)
    out = subprocess.run(["nm", "-D", "--defined-only", str(jdk.libjvm)], capture_output=True,
                         text=True, check=True).stdout
    line = next(ln for ln in out.splitlines() if ln.endswith(" AsyncGetCallTrace@@SUNWprivate_1.1"))
    offset = int(line.split()[0], 16)
    assert object_location(jdk.libjvm, offset + 4) == "AsyncGetCallTrace+0x4"
