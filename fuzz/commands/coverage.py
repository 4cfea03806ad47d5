"""`walkfuzz coverage CORPUS`: line coverage of the native code reached by a corpus.

Replays every input of CORPUS once through the harness, on the source-coverage build
(`walkfuzz._native_srccov`, clang -fprofile-instr-generate -fcoverage-mapping, built here if it
is missing or older than the sources), then merges the raw profiles with llvm-profdata and
renders them with llvm-cov: an HTML tree and one summary line.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from walkfuzz.core.errors import MissingDependencyError, UserError
from walkfuzz.core.paths import ROOT, output_dir, require_corpus_dir
from walkfuzz.engine.worker import WorkerEnv
from walkfuzz.targets.minivm.walker_library import check_walker_library
from walkfuzz.targets.table import (
    DEFAULT_TARGET,
    default_out,
    find_harness,
    target_arg,
    target_help,
)

LLVM_VERSIONS = ("-14", "")  # Debian names the tools llvm-cov-14; plain names as a fallback
REPLAY_TIMEOUT = 600  # seconds for one replay of a whole corpus
# Generated cffi glue and build trees are not the code under test.
IGNORE = r"(_native_srccov\.c|/build/|/usr/)"
_TOTAL = re.compile(r"^TOTAL\s+(.*)$", re.M)
WALKER_DIR = ROOT / "native" / "walkers" / "reference"


# What --help shows under "examples" (walkfuzz.commands._help).
EXAMPLES = (
    ("walkfuzz coverage reports/fuzz-layouts/corpus",
     "line coverage a campaign's corpus reaches, HTML in reports/coverage-layouts"),
    ("walkfuzz coverage corpora/bytes --harness bytes --walker my.so --out cov",
     "the shipped bytes seeds on your walker"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "coverage", help="line coverage of the native walker reached by a corpus",
        description="Replay CORPUS on the source-coverage build; write HTML and print a summary.",
    )
    p.add_argument("corpus", type=Path, metavar="CORPUS", help="corpus directory")
    p.add_argument("--target", type=target_arg, default=DEFAULT_TARGET, help=target_help())
    p.add_argument("--harness", default="layouts", help="harness that replays the inputs")
    p.add_argument("--walker", metavar="PATH.so", help="walker library (default: reference)")
    p.add_argument("--out", type=Path, help="output directory (default reports/coverage-HARNESS "
                   "for minivm, reports/coverage-TARGET otherwise; created if missing)")
    p.set_defaults(func=run)


def llvm_tool(name: str) -> str:
    for suffix in LLVM_VERSIONS:
        path = shutil.which(f"{name}{suffix}")
        if path:
            return path
    raise MissingDependencyError(f"{name}-14 not found on PATH (install llvm-14)")


def srccov_module() -> Path:
    """The srccov extension, (re)built when missing or older than any native source."""
    built = sorted((ROOT / "fuzz").glob("_native_srccov*.so"))
    sources = [*ROOT.glob("native/include/*.h"), *ROOT.glob("native/src/**/*.[ch]"),
               *ROOT.glob("native/walkers/reference/*.[ch]"), ROOT / "fuzz" / "core" / "_build.py"]
    newest = max((p.stat().st_mtime for p in sources), default=0.0)
    if built and built[-1].stat().st_mtime >= newest:
        return built[-1]
    if shutil.which("clang") is None:
        raise MissingDependencyError("clang not found on PATH (needed for the srccov build)")
    env = {**os.environ, "CC": "clang", "LDSHARED": "clang -shared"}
    build = subprocess.run([sys.executable, str(ROOT / "fuzz" / "core" / "_build.py"), "srccov"],
                           env=env, capture_output=True, text=True)
    if build.returncode != 0:
        raise UserError(f"srccov build failed: {build.stderr.strip().splitlines()[-1:]}")
    return sorted((ROOT / "fuzz").glob("_native_srccov*.so"))[-1]


def replay(args: argparse.Namespace, corpus: Path, profiles: Path) -> None:
    """Run each input once (libFuzzer -runs=0 executes the corpus and exits)."""
    harness = find_harness(args.target, args.harness)
    walker = str(check_walker_library(args.walker)) if args.walker else "reference"
    env = WorkerEnv(profiles.parent / "replay", None, args.target, walker, "srccov")
    result = subprocess.run(
        [sys.executable, str(harness.script), "-runs=0", str(corpus)],
        env={**os.environ, **env.to_environ(),
             "LLVM_PROFILE_FILE": str(profiles / "%p-%m.profraw")},
        capture_output=True, text=True, timeout=REPLAY_TIMEOUT,
    )
    if not list(profiles.glob("*.profraw")):
        tail = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"replaying {str(corpus)!r} produced no coverage profile: {tail}")


def run(args: argparse.Namespace) -> int:
    corpus: Path = args.corpus
    require_corpus_dir(corpus)
    kind = args.harness if args.target == DEFAULT_TARGET else None  # as a campaign's folder
    out = output_dir(args.out or default_out("coverage", args.target, kind))
    profiles = out / "profraw"
    shutil.rmtree(profiles, ignore_errors=True)
    profiles.mkdir(parents=True)
    module = srccov_module()
    profdata, cov = llvm_tool("llvm-profdata"), llvm_tool("llvm-cov")
    replay(args, corpus.resolve(), profiles)
    merged = out / "merged.profdata"
    subprocess.run([profdata, "merge", "-sparse", *map(str, profiles.glob("*.profraw")),
                    "-o", str(merged)], check=True)
    common = [str(module), f"-instr-profile={merged}", f"-ignore-filename-regex={IGNORE}"]
    subprocess.run([cov, "show", *common, "-format=html", f"-output-dir={out / 'html'}"],
                   check=True, capture_output=True)
    report = llvm_report(cov, common, [])
    walker = llvm_report(cov, common, sorted(map(str, WALKER_DIR.glob("*.c"))))
    (out / "summary.txt").write_text(report)
    print(f"walkfuzz coverage: reference walker: {summary(walker)}; all native code: "
          f"{summary(report)}; html: {out / 'html' / 'index.html'}")
    return 0


def llvm_report(cov: str, common: list[str], sources: list[str]) -> str:
    """`llvm-cov report`, restricted to `sources` if any are given."""
    return subprocess.run([cov, "report", *common, *sources], check=True, capture_output=True,
                          text=True).stdout


def summary(report: str) -> str:
    """'lines 812/1034 (78.5%), branches ...' from llvm-cov report's TOTAL row."""
    m = _TOTAL.search(report)
    if m is None:
        return "no TOTAL line in llvm-cov report"
    cells = m.group(1).split()
    # Columns: regions, missed, cover%, functions, missed, executed%, lines, missed, cover%,
    # branches, missed, cover%.
    names = ("regions", "functions", "lines", "branches")
    parts = []
    for i, name in enumerate(names):
        group = cells[3 * i: 3 * i + 3]
        if len(group) == 3 and group[0] != "0":
            total, missed, percent = int(group[0]), int(group[1]), group[2]
            parts.append(f"{name} {total - missed}/{total} ({percent})")
    return ", ".join(parts)
