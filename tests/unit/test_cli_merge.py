"""`walkfuzz merge` as a user runs it: two short campaigns of one harness on a planted-bug
walker (findings of shared signatures in both) made one campaign folder; two stress runs of
two hosts made one stress folder; bad input refused with one line. Figures of the merged
folder are checked against the inputs' own, never against numbers typed in here."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.shared_runs import once
from walkfuzz.core.exit_status import BAD_INPUT, FINDINGS
from walkfuzz.report.document import HOST_LABEL_ENV
from walkfuzz.targets.minivm.planted import build, planted_bug

ROOT = Path(__file__).resolve().parents[2]
WALKFUZZ = [sys.executable, "-m", "walkfuzz.cli"]
TIMEOUT = 300.0  # a cap for a command that hangs, far above what any of these takes
# A short stress run: a walk budget the busiest machine finishes, no baseline phase.
SHORT_STRESS = ("--walks", "300", "--duration", "20s", "--baseline", "0")
HOSTS = ("host-a", "host-b")
SCHEMA = json.loads((ROOT / "reports" / "run.schema.json").read_text())


def walkfuzz(*args: str | Path, env: dict[str, str] | None = None,
             cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALKFUZZ, *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=cwd, env={**os.environ, **(env or {})})


def report(out: Path) -> Any:
    return json.loads((out / "report.json").read_text())


def groups(out: Path) -> dict[str, Any]:
    return {g["signature"]: g for g in report(out)["findings"]}


def stored_inputs(out: Path, signature: str) -> set[str]:
    return {p.name for p in (out / "findings" / signature).glob("*.bin")}


def contents(directory: Path) -> set[str]:
    return {hashlib.sha1(p.read_bytes()).hexdigest() for p in directory.iterdir() if p.is_file()}


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Two layouts campaigns (another libFuzzer seed each, on two "hosts") on a walker whose
    every compiled frame walks wrong, and their merge: made once per session, on whichever
    xdist worker asks first (tests/shared_runs.py); the tests only read them."""

    def make(base: Path) -> dict[str, list[str]]:
        walker = build(planted_bug("frame-size-off-by-one"), "cov")
        outs = []
        for seed, host in enumerate(HOSTS, start=1):
            out = base / host
            done = walkfuzz("fuzz", "--harness", "layouts", "--walker", walker, "--runs", "300",
                            "--out", out, "--", f"-seed={seed}", env={HOST_LABEL_ENV: host})
            assert done.returncode == FINDINGS, done.stderr[-2000:]
            outs.append(out)
        merged = base / "merged"
        done = walkfuzz("merge", *outs, "--out", merged)
        assert done.returncode == FINDINGS, done.stderr[-2000:]
        assert "Traceback" not in done.stderr
        return {"folders": [str(p) for p in (*outs, merged)]}

    a, b, merged = map(Path, once(tmp_path_factory, "merge-campaigns", make)["folders"])
    return a, b, merged


def features(corpus: Path, walker: str) -> int:
    """libFuzzer's feature count after it ran every input of `corpus` once (its INITED line)."""
    env = {**os.environ, "WALKFUZZ_WALKER": walker, "WALKFUZZ_OUT": str(corpus.parent / "scratch"),
           "WALKFUZZ_NATIVE": "cov",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, str(ROOT / "harnesses" / "layouts.py"), "-runs=0",
                           "-max_len=4096", str(corpus)], capture_output=True, text=True,
                          timeout=TIMEOUT, env=env, cwd=corpus.parent)
    found = re.search(r"INITED cov: \d+ ft: (\d+)", done.stderr)
    assert found, done.stderr[-2000:]
    return int(found.group(1))


def test_merged_corpus_keeps_every_feature_of_the_union_in_fewer_inputs(
        campaigns: tuple[Path, Path, Path], tmp_path: Path) -> None:
    a, b, merged = campaigns
    union = tmp_path / "union"
    union.mkdir()
    for source in (a / "corpus", b / "corpus"):
        for path in source.iterdir():
            shutil.copy(path, union / path.name)
    kept = contents(merged / "corpus")
    assert kept and kept <= contents(union)
    walker = json.loads((a / "campaign.json").read_text())["spec"]["walker"]
    # the same corpus reaches the same features on every run (test_harness_determinism.py);
    # run on a copy: the merged folder is the session's, which other workers read meanwhile
    kept_copy = shutil.copytree(merged / "corpus", tmp_path / "kept" / "corpus")
    assert features(kept_copy, walker) == features(union, walker)
    stats = [json.loads(line) for line in (merged / "stats.jsonl").read_text().splitlines()]
    assert stats[-1]["corpus"] == len(kept)


def test_findings_are_one_per_signature_with_hits_summed_and_the_first_sighting_kept(
        campaigns: tuple[Path, Path, Path]) -> None:
    a, b, merged = campaigns
    ga, gb, gm = groups(a), groups(b), groups(merged)
    assert set(gm) == set(ga) | set(gb)
    shared = set(ga) & set(gb)
    assert shared  # the planted bug is found from the seeds in both
    for signature, group in gm.items():
        inputs = [g[signature] for g in (ga, gb) if signature in g]
        assert group["count"] == sum(g["count"] for g in inputs)
        assert group["first_seen_at"] == min(g["first_seen_at"] for g in inputs)
        assert group["last_seen_at"] == max(g["last_seen_at"] for g in inputs)
        assert stored_inputs(merged, signature) == \
            stored_inputs(a, signature) | stored_inputs(b, signature)
    counters = report(merged)["counters"]
    assert {f"host {h}" for h in HOSTS} <= set(counters)
    assert counters["sessions"] == 2


def test_the_merged_report_renders_and_triage_and_replay_read_its_findings(
        campaigns: tuple[Path, Path, Path]) -> None:
    _, _, merged = campaigns
    jsonschema.validate(report(merged), SCHEMA)
    for name in ("report.md", "report.html"):
        text = (merged / name).read_text()
        assert all(signature in text for signature in groups(merged)), name
    triaged = walkfuzz("triage", merged, "--runs", "1")
    assert triaged.returncode == FINDINGS, triaged.stderr[-2000:]
    assert "Traceback" not in triaged.stderr
    signature = sorted(groups(merged))[0]
    example = sorted((merged / "findings" / signature).glob("*.bin"))[0]
    replayed = walkfuzz("replay", "--harness", "layouts", "--walker",
                        json.loads(example.with_suffix(".json").read_text())["details"]["walker"],
                        example)
    assert replayed.returncode == FINDINGS, replayed.stderr[-2000:]


def test_merged_campaign_time_is_the_longest_wall_and_the_summed_fuzzing(
        campaigns: tuple[Path, Path, Path]) -> None:
    a, b, merged = campaigns
    lasts = [report(p)["series"]["execs"][-1] for p in (a, b)]  # (t, execs) at each end
    summed = report(merged)["counters"]["campaign_seconds"]
    assert summed == pytest.approx(sum(t for t, _ in lasts), abs=0.01)
    md = (merged / "report.md").read_text()
    assert f"| wall time, longest campaign | {max(t for t, _ in lasts):.0f} s |" in md
    assert f"| fuzzing time, campaigns summed | {summed:.0f} s |" in md
    execs = sum(e for _, e in lasts)  # all campaigns' inputs over their summed time
    assert f"| exec/s, mean per campaign | {execs / summed:,.0f} |" in md
    assert "| exec/s, mean |" not in md and "fuzzing time, all sessions" not in md


def test_an_input_of_the_merged_corpus_replays_on_the_campaigns_harness(
        campaigns: tuple[Path, Path, Path]) -> None:
    """Where an input lies says its harness: the merged folder's campaign.json."""
    _, _, merged = campaigns
    example = sorted((merged / "corpus").iterdir())[0]
    replayed = walkfuzz("replay", example)
    assert replayed.returncode in (0, FINDINGS), replayed.stderr[-2000:]
    assert f"input of the layouts harness ({merged / 'campaign.json'} says so)" in \
        replayed.stderr, replayed.stderr[-2000:]


@pytest.fixture(scope="module")
def stress_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path]:
    """Two stress runs, one per host label, on a walker that walks compiled frames wrong,
    and their merge: made once per session, as `campaigns`."""

    def make(base: Path) -> dict[str, list[str]]:
        walker = build(planted_bug("frame-size-off-by-one"), "plain")
        outs = []
        for seed, host in enumerate(HOSTS, start=1):
            out = base / host
            done = walkfuzz("stress", "--walker", walker, *SHORT_STRESS, "--seed", str(seed),
                            "--out", out, env={HOST_LABEL_ENV: host})
            assert done.returncode == FINDINGS, done.stderr[-2000:]
            outs.append(out)
        merged = base / "merged"
        done = walkfuzz("merge", *outs, "--out", merged)
        assert done.returncode == FINDINGS, done.stderr[-2000:]
        return {"folders": [str(p) for p in (*outs, merged)]}

    a, b, merged = map(Path, once(tmp_path_factory, "merge-stress-runs", make)["folders"])
    return [a, b], merged


def test_stress_figures_are_summed_and_kept_per_host(
        stress_runs: tuple[list[Path], Path]) -> None:
    outs, merged = stress_runs
    inputs = {report(o)["meta"]["host"]["label"]: report(o)["counters"]
              for o in outs}
    assert set(inputs) == set(HOSTS)
    counters = report(merged)["counters"]
    for key in ("requested", "delivered", "walked", "invalid", "faults", "hangs"):
        assert counters[key] == sum(c[key] for c in inputs.values()), key
        for host, own in inputs.items():
            assert counters[f"host {host}"][key] == own[key], (host, key)
    classes = {k for c in inputs.values() for k in c["invalid_by_class"]}
    for klass in classes:
        assert counters["invalid_by_class"][klass] == \
            sum(c["invalid_by_class"].get(klass, 0) for c in inputs.values())
        for host, own in inputs.items():
            assert counters[f"host {host}"][f"invalid {klass}"] == own["invalid_by_class"][klass]
    assert counters["invalid"] > 0  # the planted bug: a sum of nothing would prove nothing
    assert counters["invalid_rate"] == round(counters["invalid"] / counters["walked"], 6)
    by_signature = [groups(o) for o in outs]
    for signature, group in groups(merged).items():
        seen = [g[signature] for g in by_signature if signature in g]
        assert group["count"] == sum(g["count"] for g in seen)
        assert group["first_seen_at"] == min(g["first_seen_at"] for g in seen)
        assert all(Path(e).is_relative_to(merged) and Path(e).is_file()
                   for e in group["examples"])
    assert "host host-a" in (merged / "report.md").read_text()
    jsonschema.validate(report(merged), SCHEMA)


def test_a_merge_of_merged_folders_keeps_every_host(stress_runs: tuple[list[Path], Path],
                                                     tmp_path: Path) -> None:
    (a, b), merged = stress_runs
    again = tmp_path / "again"
    done = walkfuzz("merge", merged, a, "--out", again)
    assert done.returncode == FINDINGS, done.stderr[-2000:]
    counters = report(again)["counters"]
    own = {h: report(o)["counters"] for h, o in zip(HOSTS, (a, b), strict=True)}
    assert counters["host host-a"]["reports"] == 2 and counters["host host-b"]["reports"] == 1
    assert counters["host host-a"]["walked"] == 2 * own["host-a"]["walked"]
    assert counters["host host-b"]["walked"] == own["host-b"]["walked"]
    assert counters["walked"] == 2 * own["host-a"]["walked"] + own["host-b"]["walked"]


def test_without_out_the_merge_goes_where_the_output_rule_says(
        stress_runs: tuple[list[Path], Path], tmp_path: Path) -> None:
    (a, b), _ = stress_runs
    done = walkfuzz("merge", a, b, cwd=tmp_path)
    assert done.returncode == FINDINGS, done.stderr[-2000:]
    mode = report(a)["meta"]["mode"]
    assert report(tmp_path / "reports" / f"merge-{mode}")["meta"]["run_type"] == "stress"


def one_error_line(done: subprocess.CompletedProcess[str], *named: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == BAD_INPUT, done.stderr[-2000:]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert all(text in lines[0] for text in named), lines[0]


def test_bad_input_is_one_line_naming_it(stress_runs: tuple[list[Path], Path],
                                         tmp_path: Path) -> None:
    (a, b), merged = stress_runs
    out = tmp_path / "out"
    campaign = tmp_path / "campaign"
    campaign.mkdir()
    (campaign / "campaign.json").write_text(json.dumps({"spec": {}, "sessions": []}))
    one_error_line(walkfuzz("merge", a, campaign, "--out", out), str(campaign), "kind")
    one_error_line(walkfuzz("merge", a, tmp_path / "gone", "--out", out), "gone")
    one_error_line(walkfuzz("merge", a, tmp_path, "--out", out), str(tmp_path))
    one_error_line(walkfuzz("merge", a, b, "--out", a), str(a))
    one_error_line(walkfuzz("merge", a, b, "--out", merged), str(merged), "not empty")
    one_error_line(walkfuzz("merge", a, a / "report.json", "--out", out), "report.json")
    one_error_line(walkfuzz("merge", a, a, "--out", out), "twice")
    a_file = tmp_path / "file"
    a_file.write_text("")
    one_error_line(walkfuzz("merge", a, b, "--out", a_file / "out"), str(a_file))
    other = tmp_path / "other-target"
    shutil.copytree(b, other)
    doc = report(other)
    doc["meta"]["target"] = "libunwind"
    (other / "report.json").write_text(json.dumps(doc))
    one_error_line(walkfuzz("merge", a, other, "--out", out), str(other), "target")
    assert not out.exists()  # nothing was merged, nothing was made


def test_campaigns_given_by_relative_paths_merge(campaigns: tuple[Path, Path, Path],
                                                 tmp_path: Path) -> None:
    a, b, merged = campaigns
    assert a.parent == b.parent
    out = tmp_path / "relative"
    done = walkfuzz("merge", a.name, b.name, "--out", os.path.relpath(out, a.parent),
                    cwd=a.parent)
    assert done.returncode == FINDINGS, done.stderr[-2000:]
    assert contents(out / "corpus") == contents(merged / "corpus")
    assert groups(out).keys() == groups(merged).keys()


def test_a_failed_merge_leaves_no_partial_out_and_a_retry_is_not_refused(
        campaigns: tuple[Path, Path, Path], tmp_path: Path) -> None:
    a, b, _ = campaigns
    copies = []
    for campaign in (a, b):  # a spec this walkfuzz cannot read: the merge fails late
        copy = tmp_path / campaign.name
        shutil.copytree(campaign, copy)
        doc = json.loads((copy / "campaign.json").read_text())
        doc["spec"]["from_a_newer_walkfuzz"] = 1
        (copy / "campaign.json").write_text(json.dumps(doc))
        copies.append(copy)
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (tmp_path / "new", empty):
        for _ in range(2):  # the retry fails alike: never "not empty"
            one_error_line(walkfuzz("merge", *copies, "--out", out), "unreadable spec")
        assert not out.exists() if out != empty else not any(out.iterdir())
