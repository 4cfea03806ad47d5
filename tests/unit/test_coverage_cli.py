"""`walkfuzz coverage CORPUS...` run as a user runs it, on small corpora in temporary folders
(a few shipped seeds each: a coverage run replays whole corpora): the union of several corpora
per walker file, its figures against llvm-cov's own, the harness each folder is replayed by,
and coverage.json beside the HTML."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from walkfuzz.core.exit_status import BAD_INPUT
from walkfuzz.coverage.llvm import llvm_tool

ROOT = Path(__file__).resolve().parents[2]
WALKFUZZ = [sys.executable, "-m", "walkfuzz.cli"]
TIMEOUT = 600  # the first run may build the srccov extension
SEEDS_PER_CORPUS = 4
MEASURES = ("lines", "branches", "functions")


def small_corpus(harness: str, folder: Path) -> Path:
    """A few of the shipped seeds of `harness`, in `folder`."""
    folder.mkdir(parents=True)
    for seed in sorted((ROOT / "corpora" / harness).iterdir())[:SEEDS_PER_CORPUS]:
        shutil.copy(seed, folder / seed.name)
    return folder


def coverage(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALKFUZZ, "coverage", *map(str, args)], capture_output=True,
                          text=True, timeout=TIMEOUT, cwd=ROOT, check=False)


def coverage_json(*corpora: Path, out: Path) -> dict[str, Any]:
    done = coverage(*corpora, "--out", out)
    assert done.returncode == 0, done.stderr[-2000:]
    for name in ("ref_walker.c", "ref_queue.c", "ref_info.c"):
        assert re.search(rf"^  {re.escape(name)}\s+\d+/\d+ \(", done.stdout, re.M), done.stdout
    assert (out / "html" / "index.html").is_file()
    document: dict[str, Any] = json.loads((out / "coverage.json").read_text())
    return document


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("corpora")
    return {h: small_corpus(h, root / h) for h in ("layouts", "queue")}


def test_the_union_of_two_corpora_covers_what_each_covers_alone(corpora: dict[str, Path],
                                                                tmp_path: Path) -> None:
    alone = {h: coverage_json(c, out=tmp_path / h) for h, c in corpora.items()}
    both = coverage_json(*corpora.values(), out=tmp_path / "both")
    assert sorted(both["harnesses"]) == sorted(corpora)
    assert [c["harness"] for c in both["corpora"]] == list(corpora)
    for name in both["walker_files"]:
        for measure in MEASURES:
            union = both["union"][name][measure]["covered"]
            each = [alone[h]["union"][name][measure]["covered"] for h in corpora]
            assert union >= max(each), (name, measure, union, each)
        for harness in corpora:  # a harness's own figures are the same with others beside it
            assert both["harnesses"][harness][name] == alone[harness]["union"][name]
    walker = "native/walkers/reference/ref_walker.c"
    assert both["union"][walker]["lines"]["covered"] > 0


def llvm_report_rows(document: dict[str, Any]) -> dict[str, list[int]]:
    """`llvm-cov report` of the run's own profile: file -> its counts, as llvm-cov prints them
    (regions, missed, functions, missed, lines, missed, branches, missed)."""
    objects = document["llvm"]["objects"]
    done = subprocess.run(
        [llvm_tool("llvm-cov"), "report", objects[0], *(f"-object={o}" for o in objects[1:]),
         f"-instr-profile={document['llvm']['profdata']}",
         *(str(ROOT / f) for f in document["walker_files"])],
        capture_output=True, text=True, timeout=TIMEOUT, check=True)
    rows = {}
    for line in done.stdout.splitlines():
        cells = line.split()
        if cells and cells[0].endswith(".c"):
            rows[Path(cells[0]).name] = [int(c) for c in cells[1:] if not c.endswith("%")]
    return rows


def test_a_campaign_s_corpus_is_replayed_by_its_harness_with_llvm_cov_s_own_figures(
        corpora: dict[str, Path], tmp_path: Path) -> None:
    campaign = tmp_path / "fuzz-mine"
    shutil.copytree(corpora["layouts"], campaign / "corpus")
    (campaign / "campaign.json").write_text(json.dumps(
        {"spec": {"target": "minivm", "harness": "layouts"}, "sessions": []}))
    document = coverage_json(campaign / "corpus", out=tmp_path / "out")
    assert [c["harness"] for c in document["corpora"]] == ["layouts"]
    rows = llvm_report_rows(document)
    assert sorted(rows) == sorted(Path(f).name for f in document["walker_files"])
    for name in document["walker_files"]:
        _, _, functions, missed_functions, lines, missed_lines, branches, missed_branches = \
            rows[Path(name).name]
        figures = document["union"][name]
        assert (figures["lines"]["count"], figures["lines"]["covered"]) == (
            lines, lines - missed_lines)
        assert (figures["branches"]["count"], figures["branches"]["covered"]) == (
            branches, branches - missed_branches)
        assert (figures["functions"]["count"], figures["functions"]["covered"]) == (
            functions, functions - missed_functions)


def test_a_folder_no_harness_is_named_after_is_one_error_line_naming_it(
        corpora: dict[str, Path], tmp_path: Path) -> None:
    mystery = tmp_path / "my-seeds"
    shutil.copytree(corpora["layouts"], mystery)
    done = coverage(corpora["queue"], mystery, "--out", tmp_path / "out")
    lines = done.stderr.splitlines()
    assert done.returncode == BAD_INPUT
    assert len(lines) == 1, lines
    assert str(mystery) in lines[0] and "--harness" in lines[0]
    assert not (tmp_path / "out").exists()  # refused before any replay


def test_harness_given_replays_every_folder_with_it(corpora: dict[str, Path],
                                                    tmp_path: Path) -> None:
    mystery = tmp_path / "my-seeds"
    shutil.copytree(corpora["layouts"], mystery)
    done = coverage(mystery, "--harness", "layouts", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads((tmp_path / "out" / "coverage.json").read_text())
    assert [c["harness"] for c in document["corpora"]] == ["layouts"]
    assert document["corpora"][0]["inputs"] == SEEDS_PER_CORPUS


def test_a_user_walker_built_for_source_coverage_is_covered_file_by_file(
        corpora: dict[str, Path], tmp_path: Path) -> None:
    walker = tmp_path / "example-srccov.so"
    built = subprocess.run(
        [*WALKFUZZ, "build-walker", str(ROOT / "examples" / "walker" / "example_walker.c"),
         "-o", str(walker), "--flavour", "srccov"],
        capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path, check=False)
    assert built.returncode == 0, built.stderr
    assert not list(tmp_path.glob("*.profraw"))  # its load check leaves no profile behind
    done = coverage(corpora["layouts"], "--walker", walker, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads((tmp_path / "out" / "coverage.json").read_text())
    [source] = [f for f in document["walker_files"] if f.endswith("example_walker.c")]
    assert document["union"][source]["lines"]["covered"] > 0
    assert re.search(r"^  example_walker\.c\s+\d+/\d+ \(", done.stdout, re.M), done.stdout
    assert str(walker) in document["llvm"]["objects"]


def test_a_target_without_a_source_coverage_build_is_one_error_line(tmp_path: Path) -> None:
    done = coverage(ROOT / "corpora" / "libunwind_perturb", "--target", "libunwind",
                    "--out", tmp_path / "out")
    lines = done.stderr.splitlines()
    assert done.returncode == BAD_INPUT
    assert len(lines) == 1 and "--target libunwind" in lines[0], lines
    assert not (tmp_path / "out").exists()


def shipped_minivm_corpora() -> list[Path]:
    """corpora/<harness> of each minivm harness, as `make coverage` picks them
    (mk/coverage.mk): harnesses/<name>.py not private and not another target's."""
    names = [p.stem for p in sorted((ROOT / "harnesses").glob("*.py"))
             if not p.stem.startswith(("_", "libunwind_", "hotspot_"))]
    return [ROOT / "corpora" / n for n in names if (ROOT / "corpora" / n).is_dir()]


def test_the_shipped_corpora_cover_the_reference_walker_as_far_as_docs_say(
        tmp_path: Path) -> None:
    """docs/fuzzing.md "What the shipped corpora cover": together at least 98% of the lines and
    90% of the branches of each reference walker file (what is left is listed there)."""
    corpora = shipped_minivm_corpora()
    assert {c.name for c in corpora} >= {"api", "bytes", "layouts", "queue", "registers"}
    union = coverage_json(*corpora, out=tmp_path / "cov")["union"]
    for name in ("ref_walker.c", "ref_queue.c", "ref_info.c"):
        [key] = [k for k in union if k.endswith(f"/walkers/reference/{name}")]
        lines, branches = union[key]["lines"], union[key]["branches"]
        assert lines["percent"] >= 98.0 and branches["percent"] >= 90.0, (name, lines, branches)
