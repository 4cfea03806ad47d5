"""The native target's other unwinders through the CLI, as a user runs them: LLVM's libunwind
(`llvm`) and the frame-pointer walk (`fp`). Unperturbed walks of known chains are exact where
the unwinder can see every frame; a frame-pointer walk over a function without a frame record is
its known limit, not judged; a short generator run stores findings that name the unwinder, and
a printed reproducer replays one on that unwinder; `--target libunwind` is the alias it was.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.native.reproducers import (
    FUZZ_FOUND,
    REPLAY_FOUND,
    ROOT,
    TIMEOUT,
    WALKFUZZ,
    replayed_signatures,
    report_groups,
    run_reproducer,
    walkfuzz,
)
from tests.opt_outs import skip_if_opted_out
from walkfuzz.core.exit_status import CLEAN
from walkfuzz.findings.store import load_findings
from walkfuzz.targets.native import chaingen
from walkfuzz.targets.native.inputs import unperturbed

FP = [s.index for s in chaingen.chain_specs() if s.frame_pointer]
NOFP = [s.index for s in chaingen.chain_specs() if not s.frame_pointer]
ROUNDS = 4  # short runs tried before an unwinder that faults every few milliseconds is given up
REPLAYED_GROUPS = 4  # reproducers run per campaign (the most frequent groups come first)


def _needs(unwinder: str) -> None:
    skip_if_opted_out("libunwind")  # the native target's extensions come with libunwind's
    if unwinder == "llvm":
        skip_if_opted_out("llvm-libunwind")


def _input(tmp_path: Path, path: list[int], flags: int = 0) -> Path:
    """An unperturbed input: the chain `path`, captured and walked as `flags` say."""
    file = tmp_path / f"chain-{'-'.join(map(str, path))}-{flags}"
    file.write_bytes(unperturbed(path, flags))
    return file


def _replay(*args: str) -> tuple[int, dict[str, Any]]:
    """`walkfuzz replay ARGS` in the test's own environment: under make test's ASan run, on the
    unwinders' asan builds."""
    done = subprocess.run([str(WALKFUZZ), "replay", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=TIMEOUT, check=False)
    assert done.stdout.lstrip().startswith("{"), (done.stdout[-2000:], done.stderr[-2000:])
    doc: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, doc


def _functions(doc: dict[str, Any]) -> list[str]:
    """The walked frames' functions (`wf_uw_chain_3+0x12` -> `wf_uw_chain_3`)."""
    return [frame.split("+")[0] for frame in doc["frames"]]


def _chain(path: list[int]) -> list[str]:
    """The true chain, innermost first: the bottom, the chain functions, the root."""
    return ["wf_uw_bottom", *(f"wf_uw_chain_{i}" for i in reversed(path)), "wf_uw_chain_root"]


@pytest.mark.parametrize(("unwinder", "path", "flags"), [
    ("llvm", list(range(16)), 3), ("fp", FP[:6], 0)],
    ids=["llvm-mixed-getcontext", "fp-fp"])
def test_unperturbed_walk_is_the_known_chain(tmp_path: Path, unwinder: str, path: list[int],
                                             flags: int) -> None:
    _needs(unwinder)
    status, doc = _replay("--target", "native", "--unwinder", unwinder,
                          str(_input(tmp_path, path, flags)))
    assert (status, doc["unwinder"], doc["verdict"]) == (CLEAN, unwinder, "ok"), doc
    assert doc["known_limit"] is False
    assert _functions(doc) == _chain(path), doc["frames"]


def test_fp_walk_over_functions_without_frame_pointers_is_its_known_limit(
        tmp_path: Path) -> None:
    """The chain's -fomit-frame-pointer functions are invisible to an fp walk (or break it,
    reusing rbp): the walk is not the chain, and that is not judged a finding."""
    _needs("fp")
    status, doc = _replay("--target", "native", "--unwinder", "fp",
                          str(_input(tmp_path, NOFP[:6])))
    assert (status, doc["verdict"], doc["known_limit"]) == (CLEAN, "ok", True), doc
    assert _functions(doc) != _chain(NOFP[:6])


def test_libunwind_alias_is_the_native_target_with_libunwind(tmp_path: Path) -> None:
    _needs("libunwind")
    file = str(_input(tmp_path, FP[:2] + NOFP[:2]))
    status, alias = _replay("--target", "libunwind", file)
    assert (status, alias["unwinder"]) == (CLEAN, "libunwind")
    assert _functions(alias) == _chain(FP[:2] + NOFP[:2]), alias["frames"]


def _campaign(tmp_path: Path, unwinder: str) -> Path:
    """Short generator runs until one stores findings (the report names the unwinder)."""
    for round_ in range(ROUNDS):
        out = tmp_path / f"{unwinder}-{round_}"
        done = walkfuzz("fuzz", "--target", "native", "--unwinder", unwinder, "--time", "1",
                        "-j", "1", "--seed", str(round_ + 1), "--out", str(out))
        assert done.returncode in (CLEAN, FUZZ_FOUND), done.stderr[-2000:]
        assert done.stdout.startswith(f"{unwinder} fuzz: "), done.stdout
        report = json.loads((out / "report.json").read_text())
        assert report["meta"]["walker"] == unwinder and report["counters"]["walks"] > 0
        if done.returncode == FUZZ_FOUND:
            return out
    pytest.fail(f"no {unwinder} finding in {ROUNDS} runs of 1 s")


@pytest.mark.parametrize("unwinder", ["llvm", "fp"])
def test_generator_findings_name_the_unwinder_and_replay_on_it(tmp_path: Path,
                                                               unwinder: str) -> None:
    _needs(unwinder)
    out = _campaign(tmp_path, unwinder)
    groups = report_groups(out)
    prefix = f"walkfuzz replay --target native --harness perturb --unwinder {unwinder} "
    assert groups and all(g["reproducer"].startswith(prefix) for g in groups), groups
    findings = load_findings(out)
    assert findings
    for finding in findings:
        assert (finding.target, finding.details["unwinder"]) == ("native", unwinder), finding
        assert finding.location.startswith(f"{unwinder}:"), finding.location
        assert finding.details["library"], finding.details
    # a state-dependent perturbation may not come back in a fresh process (docs/native.md,
    # "Reproducers"): each reproducer run exits as documented, one brings its signature back
    for group in groups[:REPLAYED_GROUPS]:
        done = run_reproducer(group["reproducer"])
        assert done.returncode in (CLEAN, REPLAY_FOUND), done.stderr[-2000:]
        assert json.loads(done.stdout)["unwinder"] == unwinder
        if group["signature"] in replayed_signatures("native", done.stdout):
            return
    pytest.fail(f"none of {[g['signature'] for g in groups[:REPLAYED_GROUPS]]} came back")


def test_fp_stress_judges_frame_pointer_samples_and_counts_its_known_limit(
        tmp_path: Path) -> None:
    """Live samples of the half-fp workload: those with a function without frame pointers on
    the stack (or in a prologue's window) are counted, not judged; the others match."""
    _needs("fp")
    out = tmp_path / "stress-fp"
    done = walkfuzz("stress", "--target", "native", "--unwinder", "fp", "--duration", "1s",
                    "--baseline", "0", "--max-invalid-rate", "0.01", "--out", str(out))
    assert done.returncode == CLEAN, (done.stdout[-2000:], done.stderr[-2000:])
    report = json.loads((out / "report.json").read_text())
    counters = report["counters"]
    assert report["meta"]["walker"] == "fp"
    assert counters["known_limit"] > 0 and counters["matched"] > 0, counters
    assert counters["faults"] == 0, counters
