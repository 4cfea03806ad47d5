"""The GitHub Actions workflows of docs/ci.md (.github/workflows/walkfuzz-*.yml): each parses,
has the triggers and jobs the page describes, gives the ClusterFuzzLite actions the inputs
their documentation names, and every walkfuzz command it runs exists and exits 0 here, with
its budgets cut to seconds (the matrix expanded), as the job would on a clean tree."""

from __future__ import annotations

import itertools
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
CFL = "google/clusterfuzzlite/actions/"
CFL_MODES = {"code-change", "batch", "prune", "coverage"}
# Budgets a job gives and what the local run takes instead.
SHORTER = {"--walks": "300", "--duration": "30s"}
TIMEOUT = 300


def workflow(name: str) -> dict[str, Any]:
    doc = yaml.safe_load((WORKFLOWS / name).read_text())
    assert isinstance(doc, dict), name
    # YAML 1.1 reads the key `on` as the boolean true
    doc["on"] = doc.pop(True, doc.get("on"))
    return doc


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job["steps"])


def action_steps(doc: dict[str, Any], action: str) -> list[tuple[str, dict[str, Any]]]:
    """(job name, step) of every step that uses `action` (any version)."""
    return [(name, step) for name, job in doc["jobs"].items() for step in steps(job)
            if str(step.get("uses", "")).startswith(action)]


def cfl_runs(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each job's run_fuzzers inputs, checked to follow a build_fuzzers step of that job."""
    runs = {}
    for name, job in doc["jobs"].items():
        uses = [str(s.get("uses", "")) for s in steps(job)]
        if any(u.startswith(CFL + "run_fuzzers@") for u in uses):
            built = next(i for i, u in enumerate(uses) if u.startswith(CFL + "build_fuzzers@"))
            ran = next(i for i, u in enumerate(uses) if u.startswith(CFL + "run_fuzzers@"))
            assert built < ran, name
            runs[name] = steps(job)[ran]["with"]
            build_inputs = steps(job)[built].get("with", {})
            assert build_inputs.get("language") == "python", name
            assert build_inputs.get("sanitizer", "address") == runs[name].get("sanitizer",
                                                                                "address"), name
    return runs


def expanded(command: str, job: dict[str, Any]) -> list[str]:
    """`command` once per combination of its job's matrix."""
    matrix = job.get("strategy", {}).get("matrix", {})
    keys = [k for k in matrix if f"matrix.{k}" in command]
    commands = []
    for values in itertools.product(*(matrix[k] for k in keys)):
        text = command
        for key, value in zip(keys, values, strict=True):
            text = re.sub(r"\$\{\{\s*matrix\." + key + r"\s*\}\}", str(value), text)
        commands.append(text)
    return commands


def walkfuzz_commands(doc: dict[str, Any]) -> list[list[str]]:
    found = []
    for job in doc["jobs"].values():
        for step in steps(job):
            run = str(step.get("run", "")).strip()
            if run.startswith(".venv/bin/walkfuzz "):
                found += [shlex.split(text) for text in expanded(run, job)]
    return found


def shortened(argv: list[str]) -> list[str]:
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg in SHORTER:
            out[i + 1] = SHORTER[arg]
    return out


def test_the_pull_request_workflow_has_its_jobs() -> None:
    doc = workflow("walkfuzz-pr.yml")
    assert "pull_request" in doc["on"]
    runs = cfl_runs(doc)
    assert [r["mode"] for r in runs.values()] == ["code-change"]
    (inputs,) = runs.values()
    assert int(inputs["fuzz-seconds"]) == 600
    assert "github-token" in inputs
    sarif = action_steps(doc, "github/codeql-action/upload-sarif@")
    junit = action_steps(doc, "mikepenz/action-junit-report@")
    assert len(sarif) == 1 and len(junit) == 1
    commands = [" ".join(c) for c in walkfuzz_commands(doc)]
    # what the reports show is what the commands write
    assert any(f"--sarif {sarif[0][1]['with']['sarif_file']}" in c for c in commands), commands
    assert any(f"--junit {junit[0][1]['with']['report_paths']}" in c for c in commands), commands
    assert doc["jobs"][sarif[0][0]]["permissions"]["security-events"] == "write"
    assert {c.split()[1] for c in commands} == {"regress", "triage", "stress"}
    stress = doc["jobs"]["stress"]["strategy"]["matrix"]
    assert len(stress["mode"]) * len(stress["workload"]) >= 4


def test_the_batch_workflow_runs_batch_prune_and_coverage_on_a_schedule() -> None:
    doc = workflow("walkfuzz-batch.yml")
    assert doc["on"]["schedule"][0]["cron"]
    runs = cfl_runs(doc)
    assert {r["mode"] for r in runs.values()} == CFL_MODES - {"code-change"}
    coverage = next(r for r in runs.values() if r["mode"] == "coverage")
    assert coverage["sanitizer"] == "coverage"
    assert all(int(r["fuzz-seconds"]) > 0 for r in runs.values())


@pytest.mark.parametrize("name", ["walkfuzz-pr.yml", "walkfuzz-batch.yml"])
def test_every_cfl_mode_is_one_clusterfuzzlite_knows(name: str) -> None:
    runs = cfl_runs(workflow(name))
    assert runs and {r["mode"] for r in runs.values()} <= CFL_MODES


COMMANDS = [c for name in ("walkfuzz-pr.yml", "walkfuzz-batch.yml")
            for c in walkfuzz_commands(workflow(name))]


def test_the_workflows_name_the_walkfuzz_commands_of_their_jobs() -> None:
    assert {c[1] for c in COMMANDS} == {"regress", "triage", "stress"}


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(c[1:]) for c in COMMANDS])
def test_each_walkfuzz_command_of_the_workflows_runs_clean_here(argv: list[str],
                                                               tmp_path: Path) -> None:
    # The job's checkout: the paths the commands name, outputs written beside them.
    for entry in ("corpora", "ci"):
        (tmp_path / entry).symlink_to(ROOT / entry)
    command = [str(WALKFUZZ), *shortened(argv)[1:]]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    assert done.returncode == 0, f"{shlex.join(command)}\n{done.stdout[-2000:]}{done.stderr}"
    for flag in ("--junit", "--sarif", "--out"):  # what the next steps upload is there
        if flag in argv:
            assert (tmp_path / argv[argv.index(flag) + 1]).exists(), flag
