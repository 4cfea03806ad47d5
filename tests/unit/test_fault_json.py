"""The one JSON form of a fault (walkfuzz.core.guard.Fault.to_json) reads back, and so do the
keys findings and reports stored before it: `addr`, `fault_address`, `signal` as a number."""

from __future__ import annotations

import pytest

from walkfuzz.core.guard import Fault

FAULT = Fault(kind="signal", signal="SIGSEGV", signo=11, si_code=1, address=0x10, pc=0x7F00,
              frames=3, last_sp=0x1000, last_fp=0x1010, last_pc=0x7E00)


def test_to_json_reads_back() -> None:
    doc = FAULT.to_json()
    assert (doc["address"], doc["pc"], doc["code"]) == ("0x10", "0x7f00", "SEGV_MAPERR")
    assert Fault.from_json(doc) == FAULT


@pytest.mark.parametrize("old", [
    {"signal": 11, "si_code": 1, "addr": "0x10", "pc": "0x7f00", "frames_before_fault": 3},
    {"signal": "SIGSEGV", "si_code": 1, "fault_address": "0x10", "frames_before_fault": 3,
     "frames": ["walk", "frames"], "pc": "0x7f00"},
    {"kind": 1, "signo": 11, "si_code": 1, "addr": 16, "pc": 0x7F00, "frames": 3},
], ids=["minivm", "native", "hotspot-event"])
def test_older_keys_read(old: dict[str, object]) -> None:
    fault = Fault.from_json(old)
    assert (fault.kind, fault.signal, fault.signo, fault.si_code, fault.address, fault.pc,
            fault.frames) == ("signal", "SIGSEGV", 11, 1, 0x10, 0x7F00, 3)


def test_a_bad_field_is_named() -> None:
    with pytest.raises(ValueError, match="fault addr 'near'"):
        Fault.from_json({"addr": "near"})
    with pytest.raises(ValueError, match="fault kind 'crash'"):
        Fault.from_json({"kind": "crash"})
