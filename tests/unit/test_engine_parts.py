"""The campaign engine's parts: libFuzzer log parsing, the current-input journal, corpus import,
libFuzzer flag checks, target and harness lookup."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from walkfuzz.core.errors import UserError, WalkerLibraryError
from walkfuzz.core.native import Native
from walkfuzz.engine.corpus import import_seeds
from walkfuzz.engine.journal import HEADER, JournalWriter, read_execs, read_journal
from walkfuzz.engine.libfuzzer_log import LogTail, parse_error, parse_status
from walkfuzz.targets.campaign_run import libfuzzer_flags
from walkfuzz.targets.minivm.walker_library import check_walker_library
from walkfuzz.targets.table import find_harness


def test_status_line_numbers() -> None:
    s = parse_status("#10577\tNEW    cov: 190 ft: 410 corp: 52/1402b lim: 43 exec/s: 3525 "
                     "rss: 61Mb L: 9/43 MS: 2 ChangeBit-")
    assert s is not None
    assert (s.execs, s.event, s.coverage, s.features, s.corpus, s.exec_per_sec, s.rss_mb) == (
        10577, "NEW", 190, 410, 52, 3525, 61)
    pulse = parse_status("#65536\tpulse  cov: 7 ft: 9 corp: 4/1.7Kb lim: 4096 exec/s: 21845 "
                         "rss: 45Mb")
    assert pulse is not None and pulse.corpus == 4 and pulse.exec_per_sec == 21845
    assert parse_status("INFO: Seed: 12345") is None


def test_error_lines() -> None:
    assert parse_error("==123== ERROR: libFuzzer: deadly signal") == "deadly signal"
    assert parse_error("==9== ERROR: libFuzzer: timeout after 25 seconds") == (
        "timeout after 25 seconds")
    assert parse_error("#1 NEW cov: 1") is None


def test_log_tail_returns_only_complete_new_lines(tmp_path: Path) -> None:
    log = tmp_path / "log"
    tail = LogTail(log)
    assert tail.new_lines() == []
    log.write_text("one\ntw")
    assert tail.new_lines() == ["one"]
    with log.open("a") as f:
        f.write("o\nthree\n")
    assert tail.new_lines() == ["two", "three"]


def test_journal_keeps_the_last_input_and_counts(tmp_path: Path) -> None:
    path = tmp_path / "current-input"
    writer = JournalWriter(path, capacity=8)
    assert read_journal(path).data is None
    writer.record(b"first")
    writer.record(b"a much longer input than the capacity")
    writer.record(b"xyz")
    state = read_journal(path)
    assert state == read_journal(path)
    assert (state.execs, state.data) == (3, b"xyz")
    assert read_execs(path) == 3
    writer.close()


def test_journal_survives_its_writer(tmp_path: Path) -> None:
    import os

    path = tmp_path / "current-input"
    pid = os.fork()
    if pid == 0:
        JournalWriter(path).record(b"dying input")
        os._exit(0)  # no close, no flush: like a crash
    os.waitpid(pid, 0)
    assert read_journal(path).data == b"dying input"


def test_corpus_import_skips_corrupt_entries_with_warnings(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "good").write_bytes(b"good input")
    (seeds / "empty").write_bytes(b"")
    (seeds / "huge").write_bytes(b"x" * 100)
    (seeds / "bad").write_bytes(b"BAD!")
    (seeds / ".hidden").write_bytes(b"ignored")
    dest = tmp_path / "corpus"

    def check(data: bytes) -> str | None:
        return "bad magic" if data.startswith(b"BAD") else None

    result = import_seeds([seeds], dest, max_len=50, check=check)
    assert result.imported == 1
    assert [p.name for p in dest.iterdir()] == [hashlib.sha1(b"good input").hexdigest()]
    assert len(result.warnings) == 3
    assert any("'" + str(seeds / "empty") + "' skipped: empty file" in w for w in result.warnings)
    assert any("huge" in w and "100 bytes" in w for w in result.warnings)
    assert any("bad magic" in w for w in result.warnings)
    assert import_seeds([seeds], dest, max_len=50, check=check).present == 1


def test_unreadable_corpus_entry_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "locked").write_bytes(b"x")

    def deny(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", deny)
    with pytest.raises(UserError, match="locked' is unreadable: Permission denied"):
        import_seeds([seeds], tmp_path / "corpus", max_len=10)


def test_missing_corpus_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="nowhere' does not exist"):
        import_seeds([tmp_path / "nowhere"], tmp_path / "corpus", max_len=10)


@pytest.mark.parametrize("flag,problem", [
    ("corpus_dir", "not of the form"), ("-max_total_time=5", "use --time"),
    ("-jobs=4", "use -j"), ("-artifact_prefix=/x", "--out"),
])
def test_libfuzzer_flags_are_checked(flag: str, problem: str) -> None:
    with pytest.raises(UserError, match=problem):
        libfuzzer_flags(["--", flag])
    assert libfuzzer_flags(["--", "-dict=x.dict", "-seed=3"]) == ["-dict=x.dict", "-seed=3"]


def test_unknown_target_and_harness_are_named() -> None:
    with pytest.raises(UserError, match="unknown target 'jvm'"):
        find_harness("jvm", "layouts")
    with pytest.raises(UserError, match="unknown harness 'nope' for target 'minivm'"):
        find_harness("minivm", "nope")


def test_walker_library_without_api_symbols_is_named(tmp_path: Path) -> None:
    libm = next(Path(p) for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib64/libm.so.6")
                if Path(p).exists())
    with pytest.raises(WalkerLibraryError, match="lacks: ASGST_RunWithIterator ASGST_Run"):
        check_walker_library(str(libm))
    text = tmp_path / "walker.so"
    text.write_text("not a library")
    with pytest.raises(WalkerLibraryError, match="is not an ELF shared library"):
        check_walker_library(str(text))
    with pytest.raises(WalkerLibraryError, match=r"missing\.so' does not exist"):
        check_walker_library(str(tmp_path / "missing.so"))


def test_native_journal_writes_the_format_the_supervisor_reads(
        tmp_path: Path, native_core: Native) -> None:
    _, lib = native_core
    assert HEADER.size == lib.WF_JOURNAL_HEADER_SIZE  # the two sides of one format
    path = tmp_path / "current-input"
    assert lib.wf_journal_open(str(path).encode(), 4) == 0
    lib.wf_journal_record(b"ab", 2)
    big = bytes(range(200))
    lib.wf_journal_record(big, len(big))  # grows the file
    assert lib.wf_journal_execs() == 2
    assert read_journal(path).data == big and read_execs(path) == 2
    lib.wf_journal_close()
    lib.wf_journal_record(b"ignored", 7)
    assert read_journal(path).data == big
    assert lib.wf_journal_open(str(tmp_path / "no" / "dir").encode(), 4) < 0
