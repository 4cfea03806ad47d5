"""walkfuzz triage: bad inputs, classification, clustering, SARIF, regress/JUnit."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from walkfuzz.findings import classify
from walkfuzz.targets.minivm import planted
from walkfuzz.targets.minivm.case import encode as enc
from walkfuzz.targets.minivm.regions import MINIVM_REGIONS
from walkfuzz.triage import regress
from walkfuzz.triage.cluster import Member, cluster
from walkfuzz.triage.driver import table, triage
from walkfuzz.triage.inputs import Defaults, discover
from walkfuzz.triage.sarif import to_sarif

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
import planted_corpus

WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
STACK_TOP = 0x3E0003100000


@pytest.fixture(scope="module")
def nested_walker() -> str:
    return str(planted.build(planted.planted_bug("nested-condition"), "plain"))


@pytest.fixture(scope="module")
def good_case(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A case that crashes the nested-condition walker and walks clean on the reference."""
    path = tmp_path_factory.mktemp("case") / "nested.case"
    path.write_bytes(enc.encode(planted_corpus.nested_condition_case(random.Random(1))))
    return path


def bad_files(directory: Path) -> dict[str, Path]:
    files = {
        "empty": b"",
        "garbage": b"\x00\xffnot a case at all",
        "truncated": b"WFCS\x01\x00\x00\x00\x01\x00\x00\x00\x40\x00",
        "version": b"WFCS\x09\x00\x00\x00",
    }
    paths = {}
    for name, data in files.items():
        paths[name] = directory / f"crash-{name}"
        paths[name].write_bytes(data)
    return paths


def test_bad_inputs_each_get_an_error_and_triage_goes_on(tmp_path: Path, good_case: Path,
                                                         nested_walker: str) -> None:
    bad = bad_files(tmp_path)
    (tmp_path / "crash-good").write_bytes(good_case.read_bytes())
    outcome = triage(discover([tmp_path]), Defaults(walker=nested_walker), runs=1, jobs=2)
    messages = {Path(e.path).name: e.message for e in outcome.errors}
    assert sorted(messages) == sorted(p.name for p in bad.values())
    assert "empty" in messages["crash-empty"]
    assert "not a case file" in messages["crash-garbage"]
    assert "truncated" in messages["crash-truncated"]
    assert "bad-version" in messages["crash-version"] and "version 9" in messages["crash-version"]
    assert all(str(tmp_path) in m for m in messages.values())
    assert [len(c.members) for c in outcome.clusters] == [1]
    assert outcome.clusters[0].classes == ["wild-read"]


def test_cli_prints_one_line_per_bad_file_and_the_table(tmp_path: Path, good_case: Path,
                                                        nested_walker: str) -> None:
    bad_files(tmp_path)
    (tmp_path / "crash-good").write_bytes(good_case.read_bytes())
    done = subprocess.run([str(WALKFUZZ), "triage", str(tmp_path), "--walker", nested_walker,
                           "--runs", "2", "--json", str(tmp_path / "t.json"), "--sarif",
                           str(tmp_path / "t.sarif")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1, done.stderr  # a finding
    # one line per bad file (the rest of stderr is the progress line, walkfuzz.engine.progress)
    assert len([ln for ln in done.stderr.splitlines() if ln.startswith("walkfuzz triage:")]) == 4
    assert "crash" in done.stdout and "wild-read" in done.stdout and "reliable" in done.stdout
    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc["findings"] == 1 and len(doc["errors"]) == 4
    assert doc["groups"][0]["reproducer"].startswith("walkfuzz replay --target minivm")


def test_reference_walker_replays_clean(tmp_path: Path, good_case: Path) -> None:
    outcome = triage(discover([good_case]), runs=1, jobs=1)
    assert outcome.clean == [str(good_case)] and not outcome.clusters


def test_unknown_path_is_a_user_error(tmp_path: Path) -> None:
    done = subprocess.run([str(WALKFUZZ), "triage", str(tmp_path / "nope")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "nope" in done.stderr


# ---- classification ----------------------------------------------------------------------------


@pytest.mark.parametrize(("addr", "si_code", "expected"), [
    (0x0, 1, "near-null-read"),
    (0x18, 1, "near-null-read"),
    (STACK_TOP, 1, "guard-page-overrun"),
    (STACK_TOP + 0xFF8, 2, "guard-page-overrun"),
    (0x3E0000020000 - 8, 1, "guard-page-overrun"),
    (STACK_TOP + 0x10000, 1, "wild-read"),
    (0x7F0012345679, 1, "misaligned-access"),
    (0x0, 0x80, "wild-read"),
])
def test_fault_classes(addr: int, si_code: int, expected: str) -> None:
    assert classify.fault_class(addr, si_code, MINIVM_REGIONS)[0] == expected


# Frames (type, comp_level, bci, method, pc, sp, fp), older frames at higher sp.
A = (1, 0, 3, 1, 0x10, 0x1000, 0)
B = (1, 0, 3, 2, 0x11, 0x1020, 0)
C_ = (1, 0, 3, 3, 0x12, 0x1040, 0)
X = (1, 0, 3, 9, 0x13, 0x1010, 0)


@pytest.mark.parametrize(("got", "want", "expected"), [
    ([A, B], [A, B, C_], "truncated"),
    ([A, B, C_], [A, B], "extra"),
    ([A, X, B], [A, B], "extra"),
    ([A, C_], [A, B, C_], "missing"),
    ([A, (*B[:3], 5, *B[4:])], [A, B], "wrong-method"),
    ([A, (*B[:2], 4, *B[3:])], [A, B], "wrong-bci"),
    ([A, (*B[:1], 2, *B[2:])], [A, B], "wrong-type"),
    ([A, (*B[:5], 4136, *B[6:])], [A, B], "wrong-sender"),
    ([A, (*B[:3], 5, 0x11, 4136, *B[6:])], [A, B], "wrong-sender"),
    ([A, (*B[:6], 4136)], [A, B], "wrong-frame"),
    ([A, (*B[:4], 0x99, *B[5:])], [A, B], "wrong-frame"),
    ([A, B, A], [A, B], "cycle"),
    ([A, B], [A, B], "wrong-result"),
])
def test_invalid_trace_classes(got: list[classify.FrameTuple], want: list[classify.FrameTuple],
                               expected: str) -> None:
    assert classify.invalid_trace_class(got, want, -17, 0)[0] == expected


def test_a_walk_cut_at_the_frame_limit_is_a_hang_or_cycle() -> None:
    assert classify.contract_class("end-code", classify.FRAME_LIMIT) == classify.HANG_CLASS
    assert classify.contract_class("frame-limit", 10) == classify.HANG_CLASS
    assert classify.contract_class("bci-range", 3) == "contract:bci-range"


# ---- clustering --------------------------------------------------------------------------------


def member(signature: str, kind: str = "crash", location: str = "w.so!f+0x1",
           klass: str = "wild-read", walker: str = "w.so", shape: tuple[str, ...] = ()) -> Member:
    return Member(f"/in/{signature}-{len(shape)}", 10 + len(shape), walker, "minivm", "bytes",
                  signature, kind, location, shape, klass, "why", True, 1, 1)


def test_shapes_do_not_split_a_cause_but_walkers_and_locations_do() -> None:
    members = [
        member("a", shape=("interpreted",)), member("b", shape=("compiled", "interpreted")),
        member("a", shape=("interpreted",)),
        member("c", location="w.so!g+0x8"),
        member("d", walker="other.so"),
        member("e", kind="hang", location="w.so!f", klass="hang-or-cycle"),
        member("f", kind="contract", location="check:end-code", klass="hang-or-cycle"),
        member("g", kind="invalid-trace", location="check:oracle-frame", klass="truncated"),
        member("h", kind="invalid-trace", location="check:oracle-frame", klass="missing"),
        member("i", kind="invalid-trace", location="check:oracle-frame", klass="wrong-method"),
    ]
    clusters = cluster(members)
    sizes = {tuple(sorted(g.signature for g in c.groups)): len(c.members) for c in clusters}
    assert sizes == {("a", "b"): 3, ("c",): 1, ("d",): 1, ("e", "f"): 2, ("g", "h"): 2,
                     ("i",): 1}
    assert [c.number for c in clusters] == list(range(1, 7))
    assert clusters[0].smallest.size == 11


# ---- SARIF -------------------------------------------------------------------------------------

# The parts of the SARIF 2.1.0 schema that walkfuzz emits, with the spec's required properties.
SARIF_SUBSET = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "$schema": {"type": "string", "format": "uri"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["tool"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {
                    "driver": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"},
                        "rules": {"type": "array", "items": {
                            "type": "object", "required": ["id"],
                            "properties": {"id": {"type": "string"},
                                           "shortDescription": {"$ref": "#/$defs/message"}}}}}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["message"],
                    "properties": {
                        "ruleId": {"type": "string"},
                        "ruleIndex": {"type": "integer", "minimum": -1},
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "message": {"$ref": "#/$defs/message"},
                        "locations": {"type": "array", "items": {"type": "object", "properties": {
                            "physicalLocation": {"type": "object", "properties": {
                                "artifactLocation": {"type": "object", "properties": {
                                    "uri": {"type": "string"}}}}},
                            "logicalLocations": {"type": "array", "items": {
                                "type": "object", "properties": {
                                    "name": {"type": "string"},
                                    "fullyQualifiedName": {"type": "string"},
                                    "kind": {"type": "string"}}}}}}},
                        "partialFingerprints": {"type": "object",
                                                "additionalProperties": {"type": "string"}},
                        "properties": {"type": "object"}}}},
                "invocations": {"type": "array", "items": {
                    "type": "object", "required": ["executionSuccessful"]}}}}}},
    "$defs": {"message": {"type": "object", "anyOf": [{"required": ["text"]},
                                                      {"required": ["id"]}]}},
}


def test_sarif_has_the_structure_of_sarif_2_1_0(tmp_path: Path, good_case: Path,
                                                 nested_walker: str) -> None:
    bad_files(tmp_path)
    (tmp_path / "crash-good").write_bytes(good_case.read_bytes())
    outcome = triage(discover([tmp_path]), Defaults(walker=nested_walker), runs=1, jobs=1)
    log = to_sarif(outcome)
    jsonschema.validate(log, SARIF_SUBSET)
    run = log["runs"][0]  # type: ignore[index]
    result = run["results"][0]
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    # Placed in the walker's source (planted walkers are built from this checkout), the input
    # a related location; every path relative to the repository root.
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "native/walkers/reference/ref_walker.c"
    assert physical["region"]["startLine"] > 0
    related = result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert related.endswith("crash-good") and not related.startswith("/")
    # Four inputs could not be replayed: not a successful execution, and it says why.
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    levels = [n["level"] for n in invocation["toolExecutionNotifications"]]
    assert levels == ["error"] + ["warning"] * 4
    assert "4 of 5 inputs could not be replayed" in \
        invocation["toolExecutionNotifications"][0]["message"]["text"]
    assert "wild-read" in table(outcome)


# ---- regress -----------------------------------------------------------------------------------


def test_regress_fails_on_a_new_signature_and_writes_junit(tmp_path: Path, good_case: Path,
                                                           nested_walker: str) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "crash-good").write_bytes(good_case.read_bytes())
    baseline, junit = tmp_path / "baseline.json", tmp_path / "junit.xml"
    common = [str(WALKFUZZ), "regress", "--baseline", str(baseline), "--walker", nested_walker,
              "--runs", "1", str(corpus)]
    missing = subprocess.run(common, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "--update-baseline" in missing.stderr
    empty = {"version": regress.BASELINE_VERSION, "signatures": {}}
    baseline.write_text(json.dumps(empty))
    failed = subprocess.run([*common, "--junit", str(junit)], capture_output=True, text=True,
                            timeout=60)
    assert failed.returncode == 1 and "NEW crash." in failed.stderr
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1" and suite.get("tests") == "1"
    updated = subprocess.run([*common, "--update-baseline"], capture_output=True, text=True,
                             timeout=60)
    assert updated.returncode == 0
    assert len(regress.load_baseline(baseline)) == 1
    passed = subprocess.run([*common, "--junit", str(junit)], capture_output=True, text=True,
                            timeout=60)
    assert passed.returncode == 0, passed.stdout
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0" and suite.get("tests") == "1"


def test_regress_refuses_a_missing_path_or_a_folder_without_inputs(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"version": regress.BASELINE_VERSION, "signatures": {}}))
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "run.log").write_text("a log is no input\n")
    for path, says in ((tmp_path / "missing", "does not exist"), (plain, "holds no input")):
        done = subprocess.run([str(WALKFUZZ), "regress", "--baseline", str(baseline), str(path)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stdout
        assert done.stderr.strip().count("\n") == 0 and says in done.stderr, done.stderr
        assert "pass" not in done.stdout


def test_regress_writes_one_passing_case_per_input_and_per_clean_run(
        tmp_path: Path, good_case: Path, nested_walker: str) -> None:
    corpus, clean_run = tmp_path / "corpus", tmp_path / "clean-run"
    corpus.mkdir()
    clean_run.mkdir()
    (clean_run / "campaign.json").write_text("{}")  # a campaign that found nothing
    for name in ("crash-a", "crash-b"):
        (corpus / name).write_bytes(good_case.read_bytes())
    baseline, junit = tmp_path / "baseline.json", tmp_path / "junit.xml"
    common = [str(WALKFUZZ), "regress", "--baseline", str(baseline), "--walker", nested_walker,
              "--runs", "1"]
    accepted = subprocess.run([*common, "--update-baseline", str(corpus)], capture_output=True,
                              text=True, timeout=120)
    assert accepted.returncode == 0, accepted.stderr
    for paths, cases in (([corpus], {"crash-a", "crash-b"}), ([clean_run], {"clean-run"}),
                         ([corpus, clean_run], {"crash-a", "crash-b", "clean-run"})):
        passed = subprocess.run([*common, "--junit", str(junit), *map(str, paths)],
                                capture_output=True, text=True, timeout=120)
        assert passed.returncode == 0, passed.stderr
        suite = ET.parse(junit).getroot().find("testsuite")
        assert suite is not None and suite.get("failures") == "0", passed.stdout
        checked = [case for case in suite.iter("testcase") if case.get("classname") != "baseline"]
        assert {Path(case.get("name", "")).name for case in checked} == cases
        assert len(checked) == len(cases)
        assert suite.get("tests") == str(len(list(suite.iter("testcase"))))
