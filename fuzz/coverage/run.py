"""`walkfuzz coverage CORPUS...`: the source coverage several corpora reach together, each
replayed by its own harness, per walker source file, and per harness.

Each corpus is replayed once, input by input, by its harness script on the source-coverage
build of the core (libFuzzer `-runs=0` executes a corpus and exits), each replay writing its
own raw profiles. llvm-profdata merges them per harness and then into the union; llvm-cov gives
the per-file figures of each (coverage.llvm) and the HTML tree of the union. Everything lands
in the output folder:

    html/index.html      llvm-cov's HTML of the union
    coverage.json        per file: lines, branches, functions of the union and of each harness
    summary.txt          `llvm-cov report` of the union (llvm-cov's own table)
    merged.profdata      the union's profile; profdata/<harness>.profdata each harness's
    profraw/, replay/    the replays' raw profiles, and what a replay saved (a finding's input)

A user walker (--walker) is covered file by file when its library carries coverage mapping
(`walkfuzz build-walker --flavour srccov`); otherwise its figures are missing and the result
says why.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import ROOT, output_dir
from walkfuzz.coverage import llvm
from walkfuzz.coverage.inputs import CorpusInput, corpus_inputs
from walkfuzz.coverage.llvm import FileFigures
from walkfuzz.engine.child import python_command, run_child
from walkfuzz.engine.progress import Progress
from walkfuzz.engine.worker import WorkerEnv
from walkfuzz.targets.minivm.walker_library import check_walker_library
from walkfuzz.targets.table import DEFAULT_TARGET, TARGETS, default_out, lookup

REPLAY_TIMEOUT = 600  # seconds for one replay of a whole corpus
REFERENCE_DIR = ROOT / "native" / "walkers" / "reference"
JSON_FILE = "coverage.json"
UNION = "union"


@dataclass(frozen=True)
class CoverageRequest:
    corpora: list[Path]
    target: str = DEFAULT_TARGET
    harness: str | None = None  # --harness: every corpus replayed by it
    walker: str | None = None  # --walker: a library path; None is the reference walker
    out: Path | None = None


@dataclass
class CoverageResult:
    out: Path
    corpora: list[CorpusInput]
    walker: str
    walker_files: list[str]  # the walker's source files, as keys of `union`
    union: dict[str, FileFigures]
    harnesses: dict[str, dict[str, FileFigures]]
    html: Path
    notes: list[str] = field(default_factory=list)

    @property
    def json_file(self) -> Path:
        return self.out / JSON_FILE


def shown_name(path: str) -> str:
    """A source file as the results name it: relative to the checkout when inside it."""
    try:
        return str(Path(path).relative_to(ROOT))
    except ValueError:
        return path


def replay(corpus: CorpusInput, target: str, walker: str, profiles: Path) -> None:
    """Run each input of `corpus` once on the srccov build, raw profiles into `profiles`."""
    profiles.mkdir(parents=True)
    env = WorkerEnv(profiles.parent.parent / "replay", None, target, walker, "srccov")
    done = run_child(
        python_command(str(corpus.harness.script), "-runs=0", str(corpus.folder.resolve())),
        env={**os.environ, **env.to_environ(),
             "LLVM_PROFILE_FILE": str(profiles / "%p-%m.profraw")},
        timeout=REPLAY_TIMEOUT,
    )
    if not list(profiles.glob("*.profraw")):
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"replaying {str(corpus.folder)!r} with harness "
                        f"{corpus.harness.name!r} produced no coverage profile: {tail}")


def _replay_all(corpora: list[CorpusInput], target: str, walker: str,
                out: Path) -> dict[str, list[Path]]:
    """Replays every corpus; each harness's raw profiles."""
    raw = out / "profraw"
    shutil.rmtree(raw, ignore_errors=True)
    by_harness: dict[str, list[Path]] = {}
    started = time.monotonic()
    with Progress() as progress:
        for index, corpus in enumerate(corpora):
            progress.update(time.monotonic() - started,
                            f"coverage: replaying {index + 1}/{len(corpora)} {corpus.folder} "
                            f"({corpus.harness.name}, {corpus.inputs} inputs)", key=index)
            profiles = raw / f"{index}-{corpus.harness.name}"
            replay(corpus, target, walker, profiles)
            by_harness.setdefault(corpus.harness.name, []).extend(profiles.glob("*.profraw"))
    return by_harness


def _walker_files(walker: str, objects: list[Path], union: Path,
                  notes: list[str]) -> list[str]:
    """The walker's source files, and its library added to `objects` when it has any."""
    if walker == "reference":
        return sorted(str(p) for p in REFERENCE_DIR.glob("*.c"))
    sources = llvm.sources_of(Path(walker), union)
    if sources is None:
        notes.append(f"{walker} carries no coverage mapping: build it with `walkfuzz "
                     "build-walker --flavour srccov` for per-file figures of its sources")
        return []
    objects.append(Path(walker))
    return sources


def measure_coverage(request: CoverageRequest) -> CoverageResult:
    """Replay every corpus, merge, and write the union's HTML and coverage.json."""
    if not lookup(request.target).source_coverage:
        # the native harnesses load walkfuzz._unwind and hotspot's a JVM: neither has a
        # source-coverage build, so a replay would write no profile.
        which = ", ".join(t.name for t in TARGETS if t.source_coverage)
        raise UserError(f"walkfuzz coverage measures the {which} target's walkers; "
                        f"--target {request.target} has no source-coverage build")
    corpora = corpus_inputs(request.corpora, request.target, request.harness)
    names = sorted({c.harness.name for c in corpora})
    single = names[0] if len(names) == 1 else None
    out = output_dir(request.out or default_out("coverage", request.target, single))
    walker = str(check_walker_library(request.walker)) if request.walker else "reference"
    objects = [llvm.srccov_module()]
    by_harness = _replay_all(corpora, request.target, walker, out)
    (out / "profdata").mkdir(exist_ok=True)
    harness_data = {name: llvm.merge(profiles, out / "profdata" / f"{name}.profdata")
                    for name, profiles in by_harness.items()}
    union = llvm.merge(list(harness_data.values()), out / "merged.profdata")
    notes: list[str] = []
    walker_files = _walker_files(walker, objects, union, notes)
    result = CoverageResult(
        out=out, corpora=corpora, walker=walker, walker_files=walker_files,
        union=llvm.per_file(objects, union),
        harnesses={name: llvm.per_file(objects, data) for name, data in harness_data.items()},
        html=llvm.write_html(objects, union, out / "html"), notes=notes)
    (out / "summary.txt").write_text(llvm.report_text(objects, union))
    result.json_file.write_text(json.dumps(to_json(result, objects, union), indent=1) + "\n")
    return result


def to_json(result: CoverageResult, objects: list[Path], union: Path) -> dict[str, object]:
    """coverage.json: what was replayed, and llvm-cov's per-file figures."""
    def files(figures: dict[str, FileFigures]) -> dict[str, object]:
        return {shown_name(name): f.to_json() for name, f in sorted(figures.items())}

    return {
        "walker": result.walker,
        "walker_files": [shown_name(f) for f in result.walker_files],
        "corpora": [{"folder": str(c.folder), "harness": c.harness.name, "inputs": c.inputs}
                    for c in result.corpora],
        UNION: files(result.union),
        "harnesses": {name: files(f) for name, f in sorted(result.harnesses.items())},
        "llvm": {"objects": [str(o) for o in objects], "profdata": str(union)},
        "notes": result.notes,
    }
