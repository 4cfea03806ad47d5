"""walkfuzz.findings.finding: signatures group by origin, saving is atomic, idempotent and
concurrent."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import re
from pathlib import Path

import pytest

from walkfuzz.findings import store as findings_module
from walkfuzz.findings.finding import Finding, FindingFileWarning, normalize_location, shape_tail
from walkfuzz.findings.store import FindingSink, load_findings, save_finding


def make(**overrides: object) -> Finding:
    fields: dict[str, object] = {
        "kind": "crash",
        "target": "minivm",
        "harness": "layouts",
        "location": "wf_ref_next+0x40",
        "shape": ("java", "java", "inlined", "native"),
        "data": b"\x01\x02\x03",
        "details": {"signal": 11, "addr": "0x10"},
    }
    fields.update(overrides)
    return Finding(**fields)  # type: ignore[arg-type]


def test_signature_is_filesystem_safe_and_names_kind_and_location() -> None:
    sig = make(location="libjvm.so!frame::sender(RegisterMap*) const+0x1a").signature
    assert re.fullmatch(r"[A-Za-z0-9_.+-]+", sig), sig
    assert sig.startswith("crash.libjvm.so_frame_sender_RegisterMap_const+0x1a.")
    assert "/" not in sig and len(sig) < 120


def test_signature_ignores_input_bytes_details_and_deep_prefix_of_shape() -> None:
    a = make(data=b"a", details={"addr": 1}, shape=("java",) * 20 + ("inlined", "native"))
    b = make(data=b"bb", details={"addr": 2}, shape=("c", "java", "inlined", "native"))
    assert a.signature == b.signature


@pytest.mark.parametrize(
    "change",
    [{"kind": "hang"}, {"location": "wf_ref_next+0x44"}, {"shape": ("java", "inlined", "stub")}],
)
def test_signature_separates_different_origins(change: dict[str, object]) -> None:
    assert make().signature != make(**change).signature


def test_absolute_addresses_do_not_split_signatures() -> None:
    assert normalize_location("0x7f12ab345678") == normalize_location("0x7f99cd000010")
    assert make(location="0x7f12ab345678").signature == make(location="0x7fff00001234").signature
    assert normalize_location("f+0x1a") == "f+0x1a"


def test_shape_tail_collapses_repeats() -> None:
    shape = ["java", "java", "inlined", "inlined", "java", "native", "native"]
    assert shape_tail(shape, tail=3) == ("inlined", "java", "native")
    assert shape_tail(shape) == ("native",)  # the origin: the kind of the frame that failed
    assert shape_tail([]) == ()


def test_long_locations_stay_distinct_after_truncation() -> None:
    a = make(location="x" * 300 + "a").signature
    b = make(location="x" * 300 + "b").signature
    assert a != b and len(a) < 120


def test_unknown_kind_is_rejected_naming_it() -> None:
    with pytest.raises(ValueError, match="'explode'"):
        make(kind="explode")


def test_save_writes_bytes_description_and_crash_file(tmp_path: Path) -> None:
    finding = make()
    sha1 = hashlib.sha1(finding.data).hexdigest()
    directory = save_finding(tmp_path, finding)
    assert directory == tmp_path / "findings" / finding.signature
    assert (directory / f"{sha1}.bin").read_bytes() == finding.data
    doc = json.loads((directory / f"{sha1}.json").read_text())
    assert doc["signature"] == finding.signature and doc["kind"] == "crash"
    assert (tmp_path / f"crash-{sha1}").read_bytes() == finding.data
    assert not list(tmp_path.rglob("*.tmp")), "temporary files left behind"


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    findings = [make(), make(data=b"other"), make(kind="invalid-trace", location="check:bci")]
    for f in findings:
        save_finding(tmp_path, f)
        save_finding(tmp_path, f)  # idempotent
    loaded = load_findings(tmp_path)
    assert sorted(loaded, key=lambda f: f.data) == sorted(findings, key=lambda f: f.data)
    assert len({f.signature for f in loaded}) == 2


def test_live_sample_without_bytes_is_named_by_details(tmp_path: Path) -> None:
    a, b = make(data=b"", details={"sample": 1}), make(data=b"", details={"sample": 2})
    save_finding(tmp_path, a)
    save_finding(tmp_path, b)
    assert len(load_findings(tmp_path)) == 2
    assert not list(tmp_path.glob("crash-*"))


def test_corrupt_description_is_skipped_with_a_warning(tmp_path: Path) -> None:
    save_finding(tmp_path, make())
    bad = tmp_path / "findings" / "crash.x.y.00000000" / "deadbeef.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json")
    with pytest.warns(FindingFileWarning, match="deadbeef.json"):
        loaded = load_findings(tmp_path)
    assert loaded == [make()]


def test_sink_dedups_in_process_and_across_sinks(tmp_path: Path) -> None:
    first, second = FindingSink(tmp_path, examples=2), FindingSink(tmp_path, examples=2)
    assert first.offer(make(data=b"1")) is not None
    assert second.offer(make(data=b"2")) is not None
    assert first.offer(make(data=b"3")) is None  # directory already holds two
    assert second.offer(make(data=b"4")) is None
    assert first.offer(make(kind="hang", data=b"5")) is not None
    assert len(load_findings(tmp_path)) == 3


def test_sink_writes_an_input_it_already_stored_only_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writes: list[Path] = []
    real = findings_module.write_atomic

    def counted(path: Path, content: bytes) -> None:
        writes.append(path)
        real(path, content)

    monkeypatch.setattr(findings_module, "write_atomic", counted)
    sink = FindingSink(tmp_path, examples=3)
    assert sink.offer(make(data=b"same")) is not None
    assert [sink.offer(make(data=b"same")) for _ in range(100)] == [None] * 100
    assert FindingSink(tmp_path, examples=3).offer(make(data=b"same")) is None  # another worker
    assert len(writes) == 3  # .bin, .json, crash-<sha1>: once
    assert sink.offer(make(data=b"other")) is not None  # the signature still takes examples
    assert len(load_findings(tmp_path)) == 2


def _save_many(args: tuple[str, int]) -> int:
    out, worker = args
    for i in range(50):
        save_finding(Path(out), make(data=f"{worker}-{i % 10}".encode()))
        save_finding(Path(out), make(data=b"shared"))
    return worker


def test_concurrent_savers_lose_nothing_and_tear_nothing(tmp_path: Path) -> None:
    with multiprocessing.get_context("fork").Pool(4) as pool:
        pool.map(_save_many, [(str(tmp_path), w) for w in range(4)])
    loaded = load_findings(tmp_path)
    assert len(loaded) == 4 * 10 + 1
    for f in loaded:
        assert (tmp_path / f"crash-{f.sha1}").read_bytes() == f.data
    assert not list(tmp_path.rglob("*.tmp"))
