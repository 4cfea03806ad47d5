"""Signatures depend on the walker's code, not its file name or build flavour; every walker
flavour loads in every command that takes --walker; build-walker leaves nothing that does not
load; wrong paths say what is wrong; SARIF places a fault in the walker's source.

Run as a user runs them: `walkfuzz build-walker` builds the reference walker's sources with two
planted bugs' patches applied (a wild read through an unvalidated mdp slot, a stack read past
the stack top; the compiler's file-prefix map names the reference files, as planted.py's own
builds do) as the plain build, the cov build and a byte-identical copy of the plain one under
another name; `walkfuzz triage`, `regress`, `fuzz`, `stress` run on them.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared_runs import once
from walkfuzz.core.paths import ROOT
from walkfuzz.core.symbolize import Frame, Place
from walkfuzz.findings.finding import FINDINGS_DIR
from walkfuzz.findings.store import load_findings
from walkfuzz.targets.minivm import planted, planted_sources
from walkfuzz.targets.minivm.case import encode as enc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
import planted_corpus

WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
PLANTED = ("nested-condition", "missing-bounds-check")
# The sanitizer run's preload and flavour are not the CLI's (tests/native/test_user_walker_load).
USER_ENV = {k: v for k, v in os.environ.items()
            if k not in ("LD_PRELOAD", "WALKFUZZ_NATIVE", "PYTHONMALLOC")}


def cli(*args: str, env: dict[str, str] | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(WALKFUZZ), *args], capture_output=True, text=True,
                          timeout=timeout, env=env or USER_ENV, cwd=ROOT)


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.fixture(scope="module")
def walkers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The planted walker as plain, as cov, and the plain one copied under another name:
    built once per session on whichever xdist worker asks first (tests/shared_runs.py)."""

    def make(folder: Path) -> dict[str, str]:
        sources = planted_sources.write(PLANTED, folder / "src", planted.WALKER_FILES)
        # $CC and $CLANG are the plain and cov flavours' compiler commands
        env = {**USER_ENV, **{variable: shlex.join([os.environ.get(variable) or "clang",
                                                    *planted.source_flags(folder / "src")])
                              for variable in ("CC", "CLANG")}}
        built = {}
        for flavour in ("plain", "cov"):
            out = folder / f"planted-{flavour}.so"
            done = cli("build-walker", *map(str, sources), "-D", "WF_REF_EXPORT", "--flavour",
                       flavour, "-o", str(out), env=env)
            assert done.returncode == 0, done.stderr
            built[flavour] = str(out)
        built["copy"] = str(folder / "someone-elses-name.so")
        shutil.copyfile(built["plain"], built["copy"])
        return built

    made = once(tmp_path_factory, "signatures-walkers", make)
    return {name: Path(path) for name, path in made.items()}


@pytest.fixture(scope="module")
def crashes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Case files (the bytes harness's inputs) of both planted bugs, two each."""
    folder = tmp_path_factory.mktemp("crashes")
    for seed in range(2):
        nested = planted_corpus.nested_condition_case(random.Random(seed))
        (folder / f"crash-nested-{seed}").write_bytes(enc.encode(nested))
        bounds = planted_corpus.missing_bounds_case(random.Random(seed))
        (folder / f"crash-bounds-{seed}").write_bytes(enc.encode(bounds))
    return folder


def triage_signatures(inputs: Path, walker: Path, json_out: Path) -> dict[str, str]:
    """Input file name -> the signature triage replays it as on `walker`."""
    done = cli("triage", str(inputs), "--walker", str(walker), "--runs", "1",
               "--json", str(json_out))
    assert done.returncode in (0, 1), done.stderr  # 1: findings, once triage says so
    doc = json.loads(json_out.read_text())
    assert not doc["errors"], doc["errors"]
    return {Path(i["path"]).name: i["signature"] for g in doc["groups"] for i in g["inputs"]}


def test_copies_and_flavours_of_one_walker_give_one_signature_per_bug(
        walkers: dict[str, Path], crashes: Path, tmp_path: Path) -> None:
    seen = {name: triage_signatures(crashes, path, tmp_path / f"{name}.json")
            for name, path in walkers.items()}
    assert len(seen["plain"]) == 4  # every input is a finding
    assert seen["cov"] == seen["plain"] and seen["copy"] == seen["plain"]
    nested = {s for name, s in seen["plain"].items() if "nested" in name}
    bounds = {s for name, s in seen["plain"].items() if "bounds" in name}
    assert nested.isdisjoint(bounds)  # the two bugs stay apart
    for signature in seen["plain"].values():
        assert "planted" not in signature and "someone" not in signature
        assert "ref_walker.c" in signature and "0x" not in signature


def test_regress_knows_the_bugs_on_a_copy_and_on_the_cov_build(
        walkers: dict[str, Path], crashes: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    made = cli("regress", str(crashes), "--baseline", str(baseline), "--update-baseline",
               "--walker", str(walkers["plain"]), "--runs", "1")
    assert made.returncode == 0, made.stderr
    assert json.loads(baseline.read_text())["signatures"]
    for name in ("copy", "cov"):
        done = cli("regress", str(crashes), "--baseline", str(baseline),
                   "--walker", str(walkers[name]), "--runs", "1")
        assert done.returncode == 0, (name, done.stderr)
        assert "NEW" not in done.stderr


def test_a_campaign_fuzzed_with_the_cov_walker_triages_into_sarif_placed_in_the_source(
        walkers: dict[str, Path], crashes: Path, tmp_path: Path) -> None:
    campaign = tmp_path / "campaign"
    fuzzed = cli("fuzz", "--target", "minivm", "--harness", "bytes", "--walker",
                 str(walkers["cov"]), "--corpus", str(crashes), "--no-seeds", "--runs", "50",
                 "-j", "1", "--out", str(campaign))
    assert fuzzed.returncode in (0, 1), fuzzed.stderr
    assert (campaign / FINDINGS_DIR).is_dir(), fuzzed.stderr
    (campaign / "crash-garbage").write_bytes(b"not a case")  # one input that cannot replay
    sarif = tmp_path / "t.sarif"
    done = cli("triage", str(campaign), "--runs", "1", "--sarif", str(sarif))
    assert done.returncode in (0, 1), done.stderr
    assert "undefined symbol" not in done.stderr
    run = json.loads(sarif.read_text())["runs"][0]
    assert run["results"]
    for result in run["results"]:
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == "native/walkers/reference/ref_walker.c"
        assert physical["region"]["startLine"] > 0
        related = result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert not related.startswith("/") and (ROOT / related).resolve().is_file()
        assert str(walkers["cov"]) not in json.dumps(result["partialFingerprints"])
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "crash-garbage" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_stress_runs_the_cov_walker(walkers: dict[str, Path], tmp_path: Path) -> None:
    done = cli("stress", "--walker", str(walkers["cov"]), "--duration", "1s",
               "--out", str(tmp_path / "stress"))
    assert done.returncode in (0, 1), done.stderr
    assert "undefined symbol" not in done.stderr
    report = json.loads((tmp_path / "stress" / "report.json").read_text())
    assert report["counters"]["walked"] > 0  # the walker walked, in the child that dlopens it


def test_build_walker_leaves_no_library_that_does_not_load(tmp_path: Path) -> None:
    good = tmp_path / "mine.so"
    done = cli("build-walker", str(ROOT / "examples" / "walker" / "example_walker.c"),
               "-o", str(good))
    assert done.returncode == 0, done.stderr
    before = good.read_bytes()
    empty = tmp_path / "nothing.c"
    empty.write_text("int not_a_walker = 1;\n")
    for out in (good, tmp_path / "new.so"):
        failed = cli("build-walker", str(empty), "-o", str(out))
        assert failed.returncode == 2
        line = one_error_line(failed)
        assert str(out) in line and "ASGST_NextFrame" in line and ".tmp" not in line
    assert good.read_bytes() == before  # the library that loaded is still there
    assert not (tmp_path / "new.so").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.so", "nothing.c"]


@pytest.mark.parametrize(("variable", "flavour"), [("CC", "plain"), ("CLANG", "cov")])
def test_build_walker_names_the_compiler_it_tried(variable: str, flavour: str,
                                                  tmp_path: Path) -> None:
    done = cli("build-walker", str(ROOT / "examples" / "walker" / "example_walker.c"),
               "-o", str(tmp_path / "w.so"), "--flavour", flavour,
               env={**USER_ENV, variable: "nosuchcc -O1"})
    assert done.returncode == 3
    line = one_error_line(done)
    assert "'nosuchcc'" in line and f"${variable}" in line
    assert not (tmp_path / "w.so").exists()


@pytest.mark.parametrize("command", [
    ["fuzz", "--target", "minivm", "--runs", "1"],
    ["stress", "--duration", "1s"],
    ["triage", "CASE"],
    ["minimize", "CASE"],
    ["replay", "CASE"],
])
def test_a_folder_as_walker_is_said_to_be_a_folder(command: list[str], crashes: Path,
                                                   tmp_path: Path) -> None:
    case = str(crashes / "crash-nested-0")
    argv = [case if a == "CASE" else a for a in command]
    done = cli(*argv, "--walker", str(tmp_path))
    assert done.returncode == 2
    line = one_error_line(done)
    assert str(tmp_path) in line and "is a directory, not a shared library" in line
    assert "build-walker" in line


@pytest.mark.parametrize("command", [
    ["fuzz", "--target", "minivm", "--runs", "1", "--corpus", "FILE"],
    ["coverage", "FILE"],
])
def test_a_file_as_corpus_is_said_to_be_a_file(command: list[str], crashes: Path,
                                               tmp_path: Path) -> None:
    case = str(crashes / "crash-nested-0")
    done = cli(*[case if a == "FILE" else a for a in command], "--out", str(tmp_path / "o"))
    assert done.returncode == 2
    line = one_error_line(done)
    assert case in line and "is a file, not a folder" in line


def test_a_finding_stored_by_an_older_walkfuzz_still_loads(tmp_path: Path) -> None:
    folder = tmp_path / FINDINGS_DIR / "crash.w.so_f_0x1a.compiled.1234abcd"
    folder.mkdir(parents=True)
    data = b"WFCS old input"
    sha1 = hashlib.sha1(data).hexdigest()
    (folder / f"{sha1}.bin").write_bytes(data)
    (folder / f"{sha1}.json").write_text(json.dumps({
        "version": 1, "kind": "crash", "target": "minivm", "harness": "bytes",
        "location": "w.so!f+0x1a", "shape": ["compiled"], "details": {"walker": "/x/w.so"}}))
    [finding] = load_findings(tmp_path)
    assert finding.location == "w.so!f+0x1a" and finding.data == data


@pytest.mark.parametrize(("place", "fault", "hang"), [
    (Place(0x457C, (Frame("stack_pair", "/src/w.c", 98, 90), Frame("ASGST_NextFrame", "/src/w.c",
                                                                   559, 553)), 0x4230),
     "stack_pair@w.c:98", "ASGST_NextFrame"),
    (Place(0x457C, (Frame("step", "/src/w.c", 0, 359), Frame("ASGST_NextFrame", "/src/w.c",
                                                             559, 553)), 0x4230),
     "step@w.c", "ASGST_NextFrame"),
    (Place(0x457C, (Frame("ASGST_NextFrame"),), 0x4230), "ASGST_NextFrame+0x34c",
     "ASGST_NextFrame"),
    (Place(0x457C), "+0x457c", "unknown"),
])
def test_locations_name_code_never_a_file_name_or_address(place: Place, fault: str,
                                                          hang: str) -> None:
    assert place.fault_location == fault and place.hang_location == hang
