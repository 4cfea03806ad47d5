"""The native target's replay part as the table hands it out: the package's own
(walkfuzz.targets.native.replay) with the one case it does not take yet, a differential
finding. Such a finding is judged across several unwinders' processes at once (its replay is
`walkfuzz replay --target native --unwinder A,B FILE`, one fresh process per unwinder): not a
replay of one process, so triage groups it by the description stored beside its input
(walkfuzz.targets.protocol.stored_replay). Once native's Replayer returns that itself, the
table names walkfuzz.targets.native.replay and this module goes.
"""

from __future__ import annotations

from collections.abc import Mapping

from walkfuzz.findings.classify import fault_class
from walkfuzz.targets.native import TARGET
from walkfuzz.targets.native import replay as native_replay
from walkfuzz.targets.native.finding import DIFFERENTIAL
from walkfuzz.targets.native.replay import alternatives as alternatives
from walkfuzz.targets.native.replay import process_key as process_key
from walkfuzz.targets.native.replay import replay as replay
from walkfuzz.targets.protocol import Replay, StoredInput, stored_replay

DEATH_CLASS = "process-death"  # a native worker died on it: no fault address was kept


def _fault_class(doc: Mapping[str, object]) -> str:
    details = doc.get("details")
    address = details.get("fault_address") if isinstance(details, dict) else None
    if not isinstance(address, str):
        return DEATH_CLASS
    si_code = details.get("si_code") if isinstance(details, dict) else 0
    # the regions are those of the process that found it, gone: the address alone
    return fault_class(int(address, 16), si_code if isinstance(si_code, int) else 0, ())[0]


class Replayer:
    """native's Replayer, a differential finding given as stored."""

    def __init__(self, hang_ns: int, key: str) -> None:
        self._replayer = native_replay.Replayer(hang_ns, key)

    def run(self, data: bytes, stored: StoredInput) -> Replay:
        if stored.target == TARGET and stored.harness == DIFFERENTIAL:
            return stored_replay(stored, _fault_class)
        return self._replayer.run(data, stored)
