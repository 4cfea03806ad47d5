"""`walkfuzz fuzz|stress|replay --target T`: the one target table, dispatch to the targets'
runners with every option mapped, the one rule for default output folders, and the one-line
refusal of flags a target does not take. The runners are replaced where a real run would take
seconds (tests/native/test_targets_e2e.py runs them for real)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from walkfuzz import cli
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.store import FindingSink
from walkfuzz.targets import campaign_run
from walkfuzz.targets.table import (
    CORPORA_DIR,
    HARNESS_DIR,
    TARGET_FLAGS,
    TARGETS,
    default_out,
    find_harness,
)
from walkfuzz.triage.driver import table, triage
from walkfuzz.triage.inputs import discover


class Calls:
    """Stands in for a runner: records its keyword arguments, returns a chosen status."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.kwargs: list[dict[str, Any]] = []

    def __call__(self, out: Path, **kwargs: Any) -> int:
        self.kwargs.append({"out": out, **kwargs})
        return self.status


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = cli.main(argv)
    return status, capsys.readouterr().err.strip()


@pytest.mark.parametrize(("argv", "flag", "target"), [
    (["fuzz", "--target", "hotspot", "--walker", "w.so"], "--walker", "hotspot"),
    (["fuzz", "--target", "hotspot", "--runs", "5"], "--runs", "hotspot"),
    (["fuzz", "--target", "hotspot", "--max-len", "64"], "--max-len", "hotspot"),
    (["fuzz", "--target", "libunwind", "--jdk", "17"], "--jdk", "libunwind"),
    (["fuzz", "--target", "libunwind", "--walker", "w.so"], "--walker", "libunwind"),
    (["fuzz", "--target", "libunwind", "--build", "plain"], "--build", "libunwind"),
    (["fuzz", "--target", "minivm", "--harness", "layouts", "--seed", "3"], "--seed", "minivm"),
    (["stress", "--target", "hotspot", "--mode", "signal"], "--mode", "hotspot"),
    (["stress", "--target", "hotspot", "--walk-budget", "1s"], "--walk-budget", "hotspot"),
    (["stress", "--target", "libunwind", "--workload", "deep"], "--workload", "libunwind"),
    (["stress", "--target", "libunwind", "--walker", "w.so"], "--walker", "libunwind"),
    (["stress", "--target", "minivm", "--jdk", "25"], "--jdk", "minivm"),
    (["stress", "--target", "minivm", "--max-depth", "3"], "--max-depth", "minivm"),
    (["stress", "--target", "libunwind", "--no-debug-nonsafepoints"], "--no-debug-nonsafepoints",
     "libunwind"),
    (["fuzz", "--target", "minivm", "--harness", "layouts", "--control"], "--control", "minivm"),
    (["fuzz", "--target", "minivm", "--harness", "layouts", "--engine", "generator"], "--engine",
     "minivm"),
    (["fuzz", "--target", "libunwind", "--batch", "9"], "--batch", "libunwind"),
    (["fuzz", "--target", "libunwind", "--seed", "3"], "--seed", "libunwind --engine libfuzzer"),
    (["fuzz", "--target", "libunwind", "--walk-budget", "1s"], "--walk-budget",
     "libunwind --engine libfuzzer"),
    (["fuzz", "--target", "libunwind", "--engine", "generator", "--runs", "5"], "--runs",
     "libunwind --engine generator"),
    (["fuzz", "--target", "hotspot", "--walk-budget", "1s"], "--walk-budget", "hotspot"),
    (["replay", "--target", "hotspot", "--walker", "w.so", "f"], "--walker", "hotspot"),
    (["replay", "--target", "libunwind", "--json", "f"], "--json", "libunwind"),
    (["replay", "--target", "libunwind", "--unwinder", "llvm", "f"], "--unwinder", "libunwind"),
    (["fuzz", "--target", "hotspot", "--unwinder", "fp"], "--unwinder", "hotspot"),
    (["stress", "--target", "minivm", "--unwinder", "fp"], "--unwinder", "minivm"),
    (["fuzz", "--target", "native", "--walker", "x.so"], "--walker", "native"),
])
def test_a_flag_the_target_does_not_take_is_refused_in_one_line(
        argv: list[str], flag: str, target: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, err = run_cli(argv, capsys)
    assert status == 2
    assert len(err.splitlines()) == 1
    assert f"{flag} does not apply to target {target!r}" in err


def test_libfuzzer_flags_are_refused_for_hotspot(capsys: pytest.CaptureFixture[str]) -> None:
    status, err = run_cli(["fuzz", "--target", "hotspot", "--", "-seed=1"], capsys)
    assert status == 2 and "libFuzzer flags" in err and "'hotspot'" in err


def test_fuzz_hotspot_dispatches_with_j_as_threads(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    import walkfuzz.targets.hotspot.runs as runs

    calls = Calls(status=1)
    monkeypatch.setattr(runs, "fuzz_and_judge", calls)
    corpus = tmp_path / "records"
    corpus.mkdir()
    status = cli.main(["fuzz", "--target", "hotspot", "--jdk", "25", "--time", "2m", "-j", "3",
                       "--seed", "7", "--corpus", str(corpus), "--out", str(tmp_path / "o")])
    assert status == 1  # the runner's verdict is the command's
    [kw] = calls.kwargs
    assert (kw["out"], kw["jdk"], kw["duration_s"], kw["threads"], kw["seed"], kw["corpus"]) == (
        tmp_path / "o", "25", 120.0, 3, 7, corpus)


def test_fuzz_hotspot_defaults_and_harness(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    import walkfuzz.targets.hotspot.runs as runs

    calls = Calls(status=0)
    monkeypatch.setattr(runs, "fuzz_and_judge", calls)
    assert cli.main(["fuzz", "--target", "hotspot", "--harness", "perturb"]) == 0
    [kw] = calls.kwargs
    assert kw["out"] == Path("reports") / "fuzz-hotspot"
    assert (kw["jdk"], kw["threads"], kw["seed"], kw["corpus"]) == (None, 2, 1, None)
    status, err = run_cli(["fuzz", "--target", "hotspot", "--harness", "layouts"], capsys)
    assert status == 2 and "unknown harness 'layouts' for target 'hotspot'" in err
    status, err = run_cli(["fuzz", "--target", "hotspot", "-j", "2", "--threads", "4"], capsys)
    assert status == 2 and "-j 2 and --threads 4 disagree" in err


def test_fuzz_libunwind_is_a_campaign_on_its_only_harness() -> None:
    args = cli.build_parser().parse_args(["fuzz", "--target", "libunwind", "--time", "5"])
    spec = campaign_run.build_spec(args, ["walkfuzz"])
    assert (spec.target, spec.harness) == ("libunwind", "perturb")
    assert spec.script == str(HARNESS_DIR / "libunwind_perturb.py")
    assert campaign_run.campaign_out(spec.target, spec.harness) == Path("reports/fuzz-libunwind")


def test_one_rule_for_default_output_folders() -> None:
    assert campaign_run.campaign_out("minivm", "layouts") == Path("reports/fuzz-layouts")
    assert [default_out(a, t.name) for a in ("fuzz", "stress") for t in TARGETS] == [
        Path(f"reports/{a}-{t.name}") for a in ("fuzz", "stress") for t in TARGETS]
    assert default_out("stress", "minivm", "queue") == Path("reports/stress-queue")


def test_every_target_names_runners_that_exist_and_flags_the_commands_have() -> None:
    parsers = {name: child for action in cli.build_parser()._actions
               if isinstance(action, argparse._SubParsersAction)
               for name, child in action.choices.items()}
    for action_name, flags in TARGET_FLAGS.items():
        dests = {opt: a.dest for a in parsers[action_name]._actions for opt in a.option_strings}
        dests["-- (libFuzzer flags)"] = "libfuzzer_flags"
        assert {f: dests.get(f) for f in flags} == flags
        for target in TARGETS:
            step = target.action(action_name)
            assert callable(step.runner()), step.run
            assert set(step.flags) <= set(flags), (target.name, action_name)


def test_seeds_are_named_after_the_harness_script() -> None:
    assert find_harness("libunwind", "perturb").seeds == CORPORA_DIR / "libunwind_perturb"
    assert find_harness("minivm", "layouts").seeds == CORPORA_DIR / "layouts"


def test_fuzz_minivm_without_harness_names_the_choices(
        capsys: pytest.CaptureFixture[str]) -> None:
    status, err = run_cli(["fuzz", "--target", "minivm"], capsys)
    assert status == 2 and "--harness is required for target 'minivm'" in err
    assert "layouts" in err


def test_stress_hotspot_maps_the_common_options(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    import walkfuzz.targets.hotspot.runs as runs

    calls = Calls(status=0)
    monkeypatch.setattr(runs, "stress_and_judge", calls)
    assert cli.main(["stress", "--target", "hotspot", "--jdk", "17", "--interval", "50us",
                     "--threads", "3", "--duration", "4s", "--seed", "9",
                     "--max-invalid-rate", "0.01", "--out", str(tmp_path)]) == 0
    [kw] = calls.kwargs
    assert (kw["out"], kw["jdk"], kw["interval_us"], kw["threads"], kw["duration_s"], kw["seed"],
            kw["max_invalid_rate"]) == (tmp_path, "17", 50, 3, 4.0, 9, 0.01)


def test_stress_libunwind_maps_the_common_options(monkeypatch: pytest.MonkeyPatch) -> None:
    import walkfuzz.targets.native.runs as runs

    calls = Calls(status=1)
    monkeypatch.setattr(runs, "stress_and_judge", calls)
    assert cli.main(["stress", "--target", "libunwind", "--mode", "sigframe", "--interval",
                     "20us", "--duration", "2s", "--baseline", "0", "--walk-budget", "5ms"]) == 1
    [kw] = calls.kwargs
    assert kw["out"] == Path("reports") / "stress-libunwind"
    assert (kw["mode"], kw["interval_us"], kw["seconds"], kw["baseline_seconds"],
            kw["budget_ms"], kw["threads"]) == ("sigframe", 20.0, 2.0, 0.0, 5.0, 2)


def test_fuzz_hotspot_takes_every_option_of_its_runner(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    import walkfuzz.targets.hotspot.runs as runs

    calls = Calls(status=0)
    monkeypatch.setattr(runs, "fuzz_and_judge", calls)
    assert cli.main(["fuzz", "--target", "hotspot", "--corpus", str(tmp_path), "--corpus-only",
                     "--control", "--batch", "50", "--interval", "2ms"]) == 0
    [kw] = calls.kwargs
    assert (kw["corpus"], kw["corpus_only"], kw["control"], kw["batch"], kw["interval_us"]) == (
        tmp_path, True, True, 50, 2000)
    assert (kw["duration_s"], kw["out"]) == (60.0, Path("reports/fuzz-hotspot"))


def test_fuzz_libunwind_generator_engine_maps_its_options(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import walkfuzz.targets.native.runs as runs

    calls = Calls(status=1)
    monkeypatch.setattr(runs, "fuzz_and_judge", calls)
    assert cli.main(["fuzz", "--target", "libunwind", "--engine", "generator", "--time", "3",
                     "-j", "1", "--seed", "4", "--walk-budget", "250ms"]) == 1
    assert cli.main(["fuzz", "--target", "libunwind", "--engine", "generator"]) == 1
    given, defaults = calls.kwargs
    assert (given["seconds"], given["jobs"], given["seed"], given["budget_ms"]) == (
        3.0, 1, 4, 250.0)
    assert (defaults["seconds"], defaults["jobs"], defaults["seed"], defaults["budget_ms"]) == (
        60.0, 2, 1, 500.0)
    assert defaults["out"] == Path("reports/fuzz-libunwind-generator")


def test_native_target_runs_the_named_unwinder(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """--target native --unwinder NAME reaches each runner with NAME (default libunwind) and
    writes reports/ACTION-native-NAME; a bad name or the libFuzzer engine is one line, exit 2."""
    import walkfuzz.targets.native.runs as runs

    fuzz, stress = Calls(status=1), Calls(status=0)
    replayed: list[tuple[Path, str]] = []
    monkeypatch.setattr(runs, "fuzz_and_judge", fuzz)
    monkeypatch.setattr(runs, "stress_and_judge", stress)
    monkeypatch.setattr(runs, "replay_and_judge",
                        lambda path, unwinder: replayed.append((path, unwinder)) or 1)
    assert cli.main(["fuzz", "--target", "native", "--unwinder", "llvm", "--time", "3"]) == 1
    assert cli.main(["fuzz", "--target", "native"]) == 1
    assert [(kw["unwinder"], kw["out"]) for kw in fuzz.kwargs] == [
        ("llvm", Path("reports/fuzz-native-llvm")),
        ("libunwind", Path("reports/fuzz-native-libunwind"))]
    assert cli.main(["stress", "--target", "native", "--unwinder", "fp", "--max-depth", "5"]) == 0
    [kw] = stress.kwargs
    assert (kw["unwinder"], kw["out"], kw["max_depth"]) == (
        "fp", Path("reports/stress-native-fp"), 5)
    assert cli.main(["replay", "--target", "native", "--unwinder", "fp", "some-file"]) == 1
    assert replayed == [(Path("some-file"), "fp")]
    status, err = run_cli(["fuzz", "--target", "native", "--engine", "libfuzzer"], capsys)
    assert status == 2 and len(err.splitlines()) == 1 and "--engine libfuzzer" in err
    with pytest.raises(SystemExit) as exit_:
        cli.main(["replay", "--target", "native", "--unwinder", "nosuch", "f"])
    assert exit_.value.code == 2 and "unknown unwinder 'nosuch'" in capsys.readouterr().err


def test_stress_takes_the_targets_own_options(monkeypatch: pytest.MonkeyPatch) -> None:
    import walkfuzz.targets.hotspot.runs as hs_runs
    import walkfuzz.targets.native.runs as lu_runs

    hotspot, libunwind = Calls(status=1), Calls(status=0)
    monkeypatch.setattr(hs_runs, "stress_and_judge", hotspot)
    monkeypatch.setattr(lu_runs, "stress_and_judge", libunwind)
    assert cli.main(["stress", "--target", "hotspot", "--duration", "3", "--interval", "80",
                     "--no-debug-nonsafepoints"]) == 1
    assert cli.main(["stress", "--target", "libunwind", "--max-depth", "5"]) == 0
    assert (hotspot.kwargs[0]["interval_us"], hotspot.kwargs[0]["duration_s"]) == (80, 3.0)
    assert hotspot.kwargs[0]["debug_non_safepoints"] is False
    assert hotspot.kwargs[0]["out"] == Path("reports/stress-hotspot")
    assert libunwind.kwargs[0]["max_depth"] == 5


def test_replay_dispatches_by_target(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import walkfuzz.targets.hotspot.runs as hs_runs
    import walkfuzz.targets.native.runs as lu_runs

    seen: list[tuple[str, Path]] = []
    monkeypatch.setattr(hs_runs, "replay_and_judge", lambda p: seen.append(("hotspot", p)) or 1)
    monkeypatch.setattr(lu_runs, "replay_and_judge", lambda p: seen.append(("libunwind", p)) or 0)
    record = tmp_path / "record.bin"
    assert cli.main(["replay", "--target", "hotspot", "--harness", "perturb", str(record)]) == 1
    assert cli.main(["replay", "--target", "libunwind", str(record)]) == 0
    assert seen == [("hotspot", record), ("libunwind", record)]


def _stored_hotspot_finding(out: Path, location: str, record: bytes) -> None:
    FindingSink(out).offer(Finding(
        kind="crash", target="hotspot", harness="perturb", location=location,
        shape=("java",), data=record, details={"jdk": "17", "perturbation": "fp set 0x1"}))


def test_triage_groups_hotspot_findings_by_their_descriptions(tmp_path: Path) -> None:
    _stored_hotspot_finding(tmp_path, "libjvm.so!frame::safe_for_sender+0x16e", b"\1" * 27)
    _stored_hotspot_finding(tmp_path, "libjvm.so!frame::safe_for_sender+0x16e", b"\2" * 27)
    _stored_hotspot_finding(tmp_path, "libjvm.so!pd_get_top_frame+0x1f6", b"\3" * 27)
    outcome = triage(discover([tmp_path]), runs=1, jobs=1)
    assert not outcome.errors
    assert sorted(len(c.members) for c in outcome.clusters) == [1, 2]
    assert all(c.reliability == "not replayed" for c in outcome.clusters)
    assert "walkfuzz replay --target hotspot --harness perturb" in table(outcome)
    stored = json.loads(next(tmp_path.glob("findings/*/*.json")).read_text())
    assert stored["target"] == "hotspot"
