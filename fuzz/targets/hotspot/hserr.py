"""Reading a HotSpot crash report (hs_err_pid*.log) and the control run's flight file.

From hs_err: the signal line ("#  SIGSEGV (0xb) at pc=0x..., pid=..., tid=...") and the
problematic frame ("# V  [libjvm.so+0x6c60ee]  frame::safe_for_sender(JavaThread*)+0x16e").
From the flight file: the perturbation record the crashing thread was trying (slot layout in
native/agents/hotspot/wf_hs_output.c).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.targets.hotspot.inputs import record_size

FLIGHT_SLOT = 64
FLIGHT_RECORD_AT = 16
_SIGNAL = re.compile(
    r"^#\s+(SIG[A-Z]+) \(0x([0-9a-f]+)\) at pc=(0x[0-9a-f]+), pid=(\d+), tid=(\d+)", re.M)
_FRAME = re.compile(r"^# Problematic frame:\n#\s+(\S)\s+\[([^\]+]+)\+(0x[0-9a-f]+)\]\s*(.*)$", re.M)


@dataclass(frozen=True)
class CrashReport:
    signal: str
    signo: int
    pc: int
    tid: int
    library: str
    offset: int
    function: str  # "frame::safe_for_sender(JavaThread*)+0x16e", or "" if hs_err has none

    @property
    def location(self) -> str:
        return f"{self.library}!{self.function or f'+{self.offset:#x}'}"


def parse_hs_err(path: Path) -> CrashReport | None:
    text = path.read_text(errors="replace")
    sig = _SIGNAL.search(text)
    frame = _FRAME.search(text)
    if not sig or not frame:
        return None
    return CrashReport(sig.group(1), int(sig.group(2), 16), int(sig.group(3), 16),
                       int(sig.group(5)), frame.group(2), int(frame.group(3), 16),
                       frame.group(4).strip())


def flight_record(path: Path, tid: int) -> tuple[int, bytes] | None:
    """(strategy, record bytes) of the slot of thread `tid`, or None if it has none."""
    data = path.read_bytes() if path.exists() else b""
    for base in range(0, len(data) - FLIGHT_SLOT + 1, FLIGHT_SLOT):
        slot_tid, = struct.unpack_from("<I", data, base)
        if slot_tid == tid and slot_tid != 0:
            at = base + FLIGHT_RECORD_AT
            return data[base + 8], data[at:at + record_size(data[at])]
    return None
