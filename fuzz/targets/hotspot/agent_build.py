"""Building the JVMTI agent (native/agents/hotspot/*.c plus the project's guard, contracts §1)
into a shared library, cached under build/hotspot/agent-<hash>/ by a hash of its sources, the
JDK headers it is compiled against and the flags.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from walkfuzz.core.errors import MissingDependencyError, UserError
from walkfuzz.core.paths import ROOT

AGENT_DIR = ROOT / "native" / "agents" / "hotspot"
GUARD_DIR = ROOT / "native" / "src" / "guard"
CFLAGS = ["-shared", "-fPIC", "-O2", "-g", "-std=gnu11", "-Wall", "-Wextra", "-Werror",
          "-Wno-unused-parameter", "-fno-strict-aliasing"]
LIBS = ["-lpthread", "-ldl", "-lrt"]
LIBRARY = "libwfhotspot.so"


class AgentBuildError(UserError):
    """The C compiler rejected the agent; the message carries its first error."""


def sources() -> list[Path]:
    return sorted(AGENT_DIR.glob("*.c")) + sorted(GUARD_DIR.glob("*.c"))


def _headers() -> list[Path]:
    return sorted(AGENT_DIR.glob("*.h")) + sorted((ROOT / "native" / "include").rglob("*.h")) + \
        sorted(GUARD_DIR.glob("*.h"))


def _digest(include: Path, cc: str) -> str:
    h = hashlib.sha256()
    for p in [*sources(), *_headers(), include / "jni.h", include / "jvmti.h"]:
        h.update(str(p.name).encode() + b"\0" + p.read_bytes())
    h.update(" ".join([cc, *CFLAGS, *LIBS]).encode())
    return h.hexdigest()[:16]


def build_agent(include: Path, build_dir: Path | None = None) -> Path:
    """Path of the agent library built against `include` (a JDK's include/), building it once."""
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        raise MissingDependencyError(f"C compiler {cc!r} not found (set CC or install gcc)")
    out_dir = (build_dir or ROOT / "build" / "hotspot") / f"agent-{_digest(include, cc)}"
    library = out_dir / LIBRARY
    if library.exists():
        return library
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".{LIBRARY}.{os.getpid()}.tmp"
    argv = [cc, *CFLAGS, f"-I{ROOT / 'native' / 'include'}", f"-I{ROOT / 'native' / 'src'}",
            f"-I{include}", f"-I{include / 'linux'}", *map(str, sources()), "-o", str(tmp), *LIBS]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        errors = [ln for ln in proc.stderr.splitlines() if "error" in ln] or [proc.stderr.strip()]
        raise AgentBuildError(f"building the HotSpot agent failed: {errors[0]}")
    tmp.replace(library)
    return library
