"""The native target's Replayer (walkfuzz.targets.native.replay), as triage's replay processes
and `walkfuzz replay`'s child run it: a perturb input and a snapshot walked again in this
process, the same finding whichever target name the stored input carries (`native`, or
`libunwind` as findings of libunwind's walks stored before said), the snapshot beside an input
its alternative, and each unwinder's inputs a process of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.opt_outs import skip_if_opted_out
from walkfuzz.targets.native.extension import load
from walkfuzz.targets.native.inputs import INPUT_SIZE, unperturbed
from walkfuzz.targets.native.replay import Replayer, alternatives, process_key
from walkfuzz.targets.native.snapshot.capture import capture_chain
from walkfuzz.targets.protocol import ReplayError, StoredInput

skip_if_opted_out("libunwind", module=True)

MAX_INPUTS = 200_000  # libunwind faults within the first thousands of generated inputs


def _stored(path: str, target: str = "native", harness: str = "",
            unwinder: str = "") -> StoredInput:
    return StoredInput(path, target, harness, unwinder=unwinder)


def _finding_input() -> bytes:
    """The first generated input whose walk is a finding (seed 1)."""
    native = load()
    lib, ffi = native.lib, native.ffi
    stats, result = ffi.new("wf_uw_batch_stats *"), ffi.new("wf_uw_result *")
    current = ffi.new(f"uint8_t[{INPUT_SIZE}]")
    done = 0
    while result.status == 0 and done < MAX_INPUTS:
        done += int(lib.wf_uw_fuzz_batch(1, done, 1000, current, stats, result))
    assert result.status != 0, f"no finding in {done} inputs"
    data = ffi.new(f"uint8_t[{INPUT_SIZE}]")
    lib.wf_uw_generate(1, done - 1, data)
    return bytes(data)


def test_an_input_replays_to_the_same_finding_under_either_target_name() -> None:
    replayer = Replayer()
    data = _finding_input()
    now = replayer.run(data, _stored("in.bin", harness="perturb"))
    before = replayer.run(data, _stored("in.bin", target="libunwind"))
    assert now.finding is not None and before.finding is not None
    assert now.finding.signature == before.finding.signature
    assert (now.finding.target, now.finding.harness) == ("native", "perturb")
    assert now.finding.details["unwinder"] == "libunwind" and now.klass and now.why
    assert now.extra["signature"] == now.finding.signature


def test_a_clean_walk_is_no_finding_and_says_what_it_walked() -> None:
    done = Replayer().run(unperturbed([0, 1, 2]), _stored("in.bin"))
    assert done.finding is None and done.extra["verdict"] == "ok"
    assert done.extra["case"]["path"] == [0, 1, 2]


def test_a_snapshot_is_known_by_its_bytes_and_walked_remotely() -> None:
    data = capture_chain([0, 1, 2]).encode()
    done = Replayer(key="snapshot").run(data, _stored("chain.wfsnap", unwinder="libdw"))
    assert done.finding is None
    with pytest.raises(ReplayError, match="'fp' walks no snapshot"):
        Replayer().run(data, _stored("chain.bin", unwinder="fp"))


def test_an_input_of_another_process_key_is_refused() -> None:
    with pytest.raises(ReplayError, match="process of key 'libunwind'"):
        Replayer(key="llvm").run(unperturbed([0]), _stored("in.bin"))
    replayer = Replayer()
    replayer.run(unperturbed([0]), _stored("in.bin"))
    with pytest.raises(ReplayError, match="'fp' replays in a process of its own"):
        replayer.run(unperturbed([0]), _stored("in.bin", unwinder="fp"))


def test_process_keys_and_the_snapshot_beside_an_input(tmp_path: Path) -> None:
    data = tmp_path / "0123.bin"
    snapshot = tmp_path / "0123.wfsnap"
    data.write_bytes(unperturbed([0]))
    assert process_key(_stored(str(data))) == "libunwind"
    assert process_key(_stored(str(data), unwinder="llvm")) == "llvm"
    assert process_key(_stored(str(snapshot))) == "snapshot"
    assert process_key(_stored(str(data), harness="snapshot")) == "snapshot"
    assert alternatives(_stored(str(data), harness="perturb")) == []  # none saved beside it
    snapshot.write_bytes(capture_chain([0]).encode())
    assert alternatives(_stored(str(data), harness="perturb", unwinder="libdw")) == [
        StoredInput(str(snapshot), "native", "snapshot", "reference", "libdw")]
    assert alternatives(_stored(str(data), harness="perturb", unwinder="fp")) == []
