"""Findings carry time: every hit of a signature is counted with the seconds since the start
of the run and the wall time (walkfuzz.findings.hits: RunClock, HitStore, load_hits), the report
and each finding's description give count, first and last seen, and a resumed campaign keeps
the first-seen time of what it found before. Times come from fake clocks: nothing here
depends on how fast the machine is."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from walkfuzz.engine.run_report import write_run_report
from walkfuzz.engine.worker import WorkerEnv
from walkfuzz.findings.finding import Finding, FindingFileWarning
from walkfuzz.findings.hits import Hits, HitStore, RunClock, load_hits
from walkfuzz.findings.store import FindingSink, load_findings, save_finding
from walkfuzz.report.document import RunMeta, RunReport, group_findings

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "tests" / "fixtures" / "toy_harness.py"
WALKFUZZ = [sys.executable, "-m", "walkfuzz.cli"]
WALL0 = 1_700_000_000.0


def make(**overrides: object) -> Finding:
    fields: dict[str, object] = {"kind": "crash", "target": "minivm", "harness": "layouts",
                                 "location": "wf_ref_next+0x40", "shape": ("java", "native"),
                                 "data": b"\x01\x02", "details": {"signal": 11}}
    fields.update(overrides)
    return Finding(**fields)  # type: ignore[arg-type]


class FakeTime:
    """A monotonic and a wall clock that move only when told to."""

    def __init__(self, mono: float = 500.0, wall: float = WALL0) -> None:
        self.mono, self.wall = mono, wall

    def advance(self, seconds: float) -> None:
        self.mono += seconds
        self.wall += seconds

    def clock(self, offset: float = 0.0) -> RunClock:
        """A run starting now on these clocks, after `offset` seconds of earlier sessions."""
        return RunClock(self.mono, offset, monotonic=lambda: self.mono, wall=lambda: self.wall)


def test_the_sink_counts_every_hit_and_stores_a_few_examples(tmp_path: Path) -> None:
    time = FakeTime()
    sink = FindingSink(tmp_path, examples=2, clock=time.clock())
    for i in range(5):
        time.advance(1.5)
        sink.offer(make(data=f"input {i}".encode()))
    hits = load_hits(tmp_path)[make().signature]
    assert hits == Hits(5, 1.5, WALL0 + 1.5, 7.5, WALL0 + 7.5)
    descriptions = [json.loads(p.read_text()) for p in tmp_path.glob("findings/*/*.json")]
    assert len(descriptions) == 2  # examples stored; every hit counted
    assert sorted(d["hits"]["count"] for d in descriptions) == [1, 2]  # as known when saved
    assert all(d["hits"]["first_seen_s"] == 1.5 for d in descriptions)


def test_the_report_and_every_description_give_count_first_and_last_seen(
        tmp_path: Path) -> None:
    time = FakeTime()
    sink = FindingSink(tmp_path, examples=3, clock=time.clock())
    for step, finding in [(2.0, make(data=b"a")), (1.0, make(kind="hang", data=b"h")),
                          (4.0, make(data=b"b")), (3.0, make(data=b"c"))]:
        time.advance(step)
        sink.offer(finding)
    findings = load_findings(tmp_path)
    doc = RunReport(meta=RunMeta("fuzz", ["walkfuzz", "fuzz"], "minivm", "layouts", WALL0,
                                 WALL0 + 10.0),
                    findings=group_findings(tmp_path, findings))
    write_run_report(tmp_path, doc)
    groups = {g["kind"]: g for g in json.loads((tmp_path / "report.json").read_text())["findings"]}
    crash = groups["crash"]
    assert (crash["count"], crash["first_seen_s"], crash["last_seen_s"]) == (3, 2.0, 10.0)
    assert (crash["first_seen_at"], crash["last_seen_at"]) == (WALL0 + 2.0, WALL0 + 10.0)
    assert (groups["hang"]["count"], groups["hang"]["first_seen_s"]) == (1, 3.0)
    for description in tmp_path.glob(f"findings/{make().signature}/*.json"):
        stored = json.loads(description.read_text())
        assert stored["hits"] == {"count": 3, "first_seen_s": 2.0, "first_seen_at": WALL0 + 2.0,
                                  "last_seen_s": 10.0, "last_seen_at": WALL0 + 10.0}
        assert stored["reproducer"] == crash["reproducer"]
    md = (tmp_path / "report.md").read_text()
    assert "| kind | hits | first seen | last seen |" in md and "| 3 | +2.0 s (" in md
    html = (tmp_path / "report.html").read_text()
    assert "<dt>first seen</dt><dd>+2.0 s (" in html and "<dt>last seen</dt><dd>+10.0 s (" in html


def test_a_resumed_run_keeps_the_first_seen_time_and_moves_the_last(tmp_path: Path) -> None:
    time = FakeTime()
    first = FindingSink(tmp_path, clock=time.clock())
    time.advance(4.0)
    first.offer(make(data=b"a"))
    time.advance(6.0)  # the first session stops at t = 10 s ...
    time.advance(100.0)  # ... and the campaign is resumed 100 s later
    second = FindingSink(tmp_path, clock=time.clock(offset=10.0))
    time.advance(5.0)
    second.offer(make(data=b"b"))
    hits = load_hits(tmp_path)[make().signature]
    assert hits == Hits(2, 4.0, WALL0 + 4.0, 15.0, WALL0 + 115.0)


def test_a_process_killed_with_sigkill_loses_no_hit(tmp_path: Path) -> None:
    pid = os.fork()
    if pid == 0:  # the child counts three hits and is killed before it can close anything
        try:
            sink = FindingSink(tmp_path, examples=1, clock=FakeTime().clock())
            for i in range(3):
                sink.offer(make(data=bytes([i])))
        finally:
            os.kill(os.getpid(), signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert load_hits(tmp_path)[make().signature].count == 3


def test_a_forked_child_counts_in_a_file_of_its_own(tmp_path: Path) -> None:
    time = FakeTime()
    sink = FindingSink(tmp_path, clock=time.clock())
    sink.offer(make(data=b"parent"))
    pid = os.fork()
    if pid == 0:
        try:
            sink.offer(make(data=b"child"))
            sink.offer(make(data=b"child"))
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert len(list((tmp_path / "hits").iterdir())) == 2
    assert load_hits(tmp_path)[make().signature].count == 3


def test_a_store_grows_past_its_first_slots(tmp_path: Path) -> None:
    store = HitStore(tmp_path, FakeTime().clock())
    signatures = [make(location=f"f{i}+0x1").signature for i in range(150)]
    for signature in signatures:
        store.hit(signature)
    store.hit(signatures[0])
    loaded = load_hits(tmp_path)
    assert sorted(loaded) == sorted(signatures)
    assert loaded[signatures[0]].count == 2


def test_a_damaged_hits_file_is_skipped_naming_it(tmp_path: Path) -> None:
    HitStore(tmp_path, FakeTime().clock()).hit(make().signature)
    (tmp_path / "hits" / "1-bad.hits").write_bytes(b"garbage")
    with pytest.warns(FindingFileWarning, match="1-bad.hits"):
        loaded = load_hits(tmp_path)
    assert loaded[make().signature].count == 1


def test_hits_merge_by_wall_time_and_round_trip_through_json() -> None:
    early = Hits(2, 50.0, WALL0, 60.0, WALL0 + 10)  # an earlier run: seconds of its own axis
    late = Hits(3, 1.0, WALL0 + 100, 9.0, WALL0 + 108)
    assert early.merge(late) == late.merge(early) == Hits(5, 50.0, WALL0, 9.0, WALL0 + 108)
    assert Hits.from_json(early.to_json()) == early
    with pytest.raises(ValueError, match="count 0"):
        Hits.from_json({**early.to_json(), "count": 0})
    with pytest.raises(ValueError, match="last_seen_s None"):
        Hits.from_json({**early.to_json(), "last_seen_s": None})


def test_the_run_clock_travels_to_workers_through_the_environment() -> None:
    clock = RunClock(1234.5, 67.25)
    env = WorkerEnv(Path("out"), None, "minivm", "reference", "plain", clock)
    assert WorkerEnv.read(env.to_environ()).clock == clock
    assert WorkerEnv.read({}).clock is None  # run by hand: a run of its own
    with pytest.raises(ValueError, match="'12;3'"):
        RunClock.from_text("12;3")


def test_a_clock_places_earlier_monotonic_readings(tmp_path: Path) -> None:
    time = FakeTime()
    clock = time.clock(offset=5.0)
    time.advance(30.0)
    assert clock.at(time.mono - 20.0) == (15.0, WALL0 + 10.0)
    assert clock.span(7, time.mono - 20.0, time.mono) == Hits(7, 15.0, WALL0 + 10, 35.0,
                                                               WALL0 + 30)


def test_inputs_saved_without_hits_count_once_each_at_their_saved_time(tmp_path: Path) -> None:
    """A writer that saves findings directly (no sink) still gets times in its report."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        save_finding(tmp_path, make(data=b"x"))
        save_finding(tmp_path, make(data=b"y"))
    saved = [json.loads(p.read_text())["saved_at"] for p in tmp_path.glob("findings/*/*.json")]
    started = min(saved) - 3.0
    doc = RunReport(meta=RunMeta("stress", ["walkfuzz", "stress"], "minivm", "signal", started,
                                 max(saved) + 1.0),
                    findings=group_findings(tmp_path, load_findings(tmp_path)))
    group = doc.to_json()["findings"][0]  # type: ignore[index]
    assert group["count"] == 2
    assert group["first_seen_at"] == min(saved) and group["last_seen_at"] == max(saved)
    assert group["first_seen_s"] == 3.0


def test_a_finding_without_input_bytes_is_reproduced_by_its_run(tmp_path: Path) -> None:
    live = make(data=b"", details={"sample": 1})
    save_finding(tmp_path, live)
    run = ["walkfuzz", "stress", "--target", "libunwind", "--out", "my dir"]
    (group,) = group_findings(tmp_path, [live], run_command=run)
    assert group.reproducer == "walkfuzz stress --target libunwind --out 'my dir'"
    (with_bytes,) = group_findings(tmp_path, [make()], run_command=run)
    assert with_bytes.reproducer.startswith("walkfuzz replay --target minivm --harness layouts ")


def _toy_campaign(out: Path, seeds: Path) -> dict[str, object]:
    run = subprocess.run([*WALKFUZZ, "fuzz", "--harness", str(TOY), "--out", str(out),
                          "--runs", "3000", "--corpus", str(seeds)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT,
                         env={**os.environ, "WALKFUZZ_TOY_DEATHS": "0"})
    assert run.returncode == 1, run.stderr[-2000:]
    (group,) = json.loads((out / "report.json").read_text())["findings"]
    return dict(group)


def test_a_resumed_campaign_keeps_first_seen_and_updates_last_seen(tmp_path: Path) -> None:
    """A real campaign (the toy harness, a budget in inputs): libFuzzer replays the seed FUZ
    first, so each session hits the finding at least once."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "f").write_bytes(b"FUZ")
    out = tmp_path / "out"
    first = _toy_campaign(out, seeds)
    assert isinstance(first["count"], int) and first["count"] >= 1
    assert 0 <= first["first_seen_s"] <= first["last_seen_s"]  # type: ignore[operator]
    second = _toy_campaign(out, seeds)
    assert (second["first_seen_s"], second["first_seen_at"]) == \
        (first["first_seen_s"], first["first_seen_at"])
    assert second["last_seen_at"] > first["last_seen_at"]  # type: ignore[operator]
    assert second["last_seen_s"] > first["last_seen_s"]  # type: ignore[operator]
    assert second["count"] > first["count"]  # type: ignore[operator]
    sessions = json.loads((out / "campaign.json").read_text())["sessions"]
    assert len(sessions) == 2
    stored = [json.loads(p.read_text())["hits"] for p in out.glob("findings/*/*.json")]
    assert stored and all(h["count"] == second["count"] for h in stored)


def test_hotspot_hits_count_every_invalid_trace_the_agent_counted() -> None:
    """The agent writes only the first invalid traces and disagreements as events; the
    summary counts them all, with the first and last time of each class and kind."""
    from walkfuzz.targets.hotspot import finding as results
    from walkfuzz.targets.hotspot.jdk import Jdk
    from walkfuzz.targets.hotspot.jvm_run import JvmRun

    classes = [0] * len(results.CLASS_NAMES)
    first, last = [0.0] * len(classes), [0.0] * len(classes)
    missing = results.CLASS_NAMES.index("missing")
    classes[missing], first[missing], last[missing] = 900, 510.0, 540.0
    events: list[dict[str, object]] = [
        {"type": "invalid", "class": "missing", "mono": 510.0},
        {"type": "invalid", "class": "missing", "mono": 511.0},
        {"type": "check", "kind": "bottom", "mono": 520.0},
        {"type": "fault", "lib": "?", "offset": 16, "mono": 505.0},
        {"type": "fault", "lib": "?", "offset": 16, "mono": 530.0},
        {"type": "summary", "classes": classes, "class_first_mono": first,
         "class_last_mono": last, "bottom_checks": 50, "bottom_agree": 47,
         "bottom_disagree_mono": [520.0, 525.0]},
    ]
    run = JvmRun(0, events, "", "", 40.0, None, None, started_mono=500.0)
    jdk = Jdk("17", Path("/nonexistent"), "17")
    findings = [*results.fault_findings(jdk, run, "stress"),
                *results.invalid_findings(jdk, run, "stress")]
    spans = {f.location: results.hit_spans(run, findings)[f.signature] for f in findings}
    assert spans["check:shadow:missing"] == (900, 510.0, 540.0)
    assert spans["check:gst-bottom"] == (3, 520.0, 525.0)
    assert spans["?!+0x10"] == (2, 505.0, 530.0)
    hang = results.watchdog_finding(jdk, JvmRun(None, [], "", "", 12.0, None, None,
                                                  "unresponsive", started_mono=500.0),
                                     "stress")
    assert hang is not None
    assert results.hit_spans(JvmRun(None, [], "", "", 12.0, None, None, started_mono=500.0),
                             [hang]) == {hang.signature: (1, 512.0, 512.0)}


def test_libunwind_stress_counts_every_invalid_sample_by_signature() -> None:
    from walkfuzz.targets.native.stress_run import StressConfig, StressResult

    counts = [{"invalid": "missing", "kind": "work-fp", "count": 40, "first_ns": 501_000_000_000,
               "last_ns": 509_000_000_000},
              {"invalid": "missing", "kind": "work-fp", "count": 2, "first_ns": 500_500_000_000,
               "last_ns": 502_000_000_000},
              {"invalid": "extra", "kind": None, "count": 1, "first_ns": 503_000_000_000,
               "last_ns": 503_000_000_000}]
    result = StressResult(StressConfig(), {}, [], [], [], 0.0,
                                   signature_counts=counts)
    time = FakeTime(mono=500.0)
    clock = time.clock()
    time.advance(10.0)
    hits = result.signature_hits(clock)
    found = {f.location: f for f in result.all_findings()}
    assert set(found) == {"check:missing", "check:extra"}
    assert hits[found["check:missing"].signature] == Hits(42, 0.5, WALL0 + 0.5, 9.0, WALL0 + 9.0)
    assert hits[found["check:extra"].signature].count == 1


def test_the_same_input_offered_again_is_counted_but_stored_once(tmp_path: Path) -> None:
    sink = FindingSink(tmp_path, examples=3, clock=FakeTime().clock())
    for _ in range(50):  # a replayed perturbation record faults again and again
        sink.offer(make(data=b"same"))
    assert sink.offer(make(data=b"other")) is not None  # room for other examples remains
    assert len(list(tmp_path.glob("findings/*/*.json"))) == 2
    assert load_hits(tmp_path)[make().signature].count == 51
