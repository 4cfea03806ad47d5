"""Source coverage with clang's own tools: the srccov build of the core, llvm-profdata to merge
raw profiles, llvm-cov for figures (`export -summary-only`, per source file) and the HTML tree.

The figures are llvm-cov's, read from its JSON export, never counted here: a line, branch or
function is covered when llvm-cov says so, so `walkfuzz coverage` and `llvm-cov report` on the
same profile agree.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from walkfuzz.core.errors import MissingDependencyError, UserError
from walkfuzz.core.paths import ROOT
from walkfuzz.engine.child import python_command, run_child

LLVM_VERSIONS = ("-14", "")  # Debian names the tools llvm-cov-14; plain names as a fallback
# Generated cffi glue and build trees are not the code under test.
IGNORE = r"(_native_srccov\.c|/build/|/usr/)"
BUILD_LOCK = ROOT / "build" / "srccov.lock"
MEASURES = ("lines", "branches", "functions")


@dataclass(frozen=True)
class Figure:
    """One measure of one file: `covered` of `count` (llvm-cov's numbers)."""

    covered: int
    count: int

    @property
    def percent(self) -> float:
        # llvm-cov's convention: nothing to cover is nothing missed.
        return 100.0 * self.covered / self.count if self.count else 100.0

    def text(self) -> str:
        return f"{self.covered}/{self.count} ({self.percent:.1f}%)"


@dataclass(frozen=True)
class FileFigures:
    lines: Figure
    branches: Figure
    functions: Figure

    def to_json(self) -> dict[str, dict[str, float]]:
        return {m: {**asdict(getattr(self, m)), "percent": round(getattr(self, m).percent, 2)}
                for m in MEASURES}


def llvm_tool(name: str) -> str:
    for suffix in LLVM_VERSIONS:
        path = shutil.which(f"{name}{suffix}")
        if path:
            return path
    raise MissingDependencyError(f"{name}-14 not found on PATH (install llvm-14)")


def _built() -> list[Path]:
    return sorted((ROOT / "fuzz").glob("_native_srccov*.so"))


def srccov_module() -> Path:
    """The srccov extension, (re)built when missing or older than any native source. One build
    at a time (a lock file): two coverage runs at once would write the same files."""
    sources = [*ROOT.glob("native/include/**/*.h"), *ROOT.glob("native/src/**/*.[ch]"),
               *ROOT.glob("native/walkers/reference/*.[ch]"), ROOT / "fuzz" / "core" / "_build.py"]
    newest = max((p.stat().st_mtime for p in sources), default=0.0)
    BUILD_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with BUILD_LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = _built()
        if built and built[-1].stat().st_mtime >= newest:
            return built[-1]
        if shutil.which("clang") is None:
            raise MissingDependencyError("clang not found on PATH (needed for the srccov build)")
        env = {**os.environ, "CC": "clang", "LDSHARED": "clang -shared"}
        build = run_child(python_command(str(ROOT / "fuzz" / "core" / "_build.py"), "srccov"),
                          env=env)
        if build.returncode != 0:
            raise UserError(f"srccov build failed: {build.stderr.strip().splitlines()[-1:]}")
        return _built()[-1]


def merge(profiles: Sequence[Path], out: Path) -> Path:
    """llvm-profdata merge of raw or indexed profiles into `out`."""
    subprocess.run([llvm_tool("llvm-profdata"), "merge", "-sparse", *map(str, profiles),
                    "-o", str(out)], check=True, capture_output=True)
    return out


def _object_args(objects: Sequence[Path], profdata: Path) -> list[str]:
    first, *rest = objects
    return [str(first), *(f"-object={o}" for o in rest), f"-instr-profile={profdata}",
            f"-ignore-filename-regex={IGNORE}"]


def sources_of(library: Path, profdata: Path) -> list[str] | None:
    """The source files of `library` llvm-cov knows, or None: it was built without
    -fcoverage-mapping (llvm-cov finds no coverage data in it)."""
    done = subprocess.run([llvm_tool("llvm-cov"), "export", "-summary-only",
                           *_object_args([library], profdata)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return None
    return sorted(parse_export(json.loads(done.stdout)))


def per_file(objects: Sequence[Path], profdata: Path) -> dict[str, FileFigures]:
    """Every source file of `objects` -> its figures under `profdata` (llvm-cov export)."""
    done = subprocess.run([llvm_tool("llvm-cov"), "export", "-summary-only",
                           *_object_args(objects, profdata)],
                          check=True, capture_output=True, text=True)
    return parse_export(json.loads(done.stdout))


def parse_export(document: dict[str, Any]) -> dict[str, FileFigures]:
    """The per-file summaries of an `llvm-cov export -summary-only` document."""
    files = {}
    for export in document.get("data", []):
        for entry in export.get("files", []):
            summary = entry["summary"]
            files[entry["filename"]] = FileFigures(*(
                Figure(int(summary[m]["covered"]), int(summary[m]["count"])) for m in MEASURES))
    return files


def write_html(objects: Sequence[Path], profdata: Path, out: Path) -> Path:
    """llvm-cov's HTML tree of every source file; returns its index."""
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([llvm_tool("llvm-cov"), "show", *_object_args(objects, profdata),
                    "-format=html", f"-output-dir={out}"], check=True, capture_output=True)
    return out / "index.html"


def report_text(objects: Sequence[Path], profdata: Path) -> str:
    """`llvm-cov report`: llvm-cov's own table of every file."""
    return subprocess.run([llvm_tool("llvm-cov"), "report", *_object_args(objects, profdata)],
                          check=True, capture_output=True, text=True).stdout
