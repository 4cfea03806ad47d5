"""The crash guard from Python: typed fault records and guarded calls of native functions.

The guard itself is C (native/include/wf_guard.h): `wf_guard_call` runs a function so that a
SIGSEGV, SIGBUS, SIGILL or SIGFPE inside it, or a hang past the thread's budget, comes back as a
fault record. This module turns that record into a `Fault` and lets Python run any exported
`intptr_t fn(void *)` of the core under the guard:

    outcome = guard.call("wf_guard_test_read", 0x10)
    if isinstance(outcome, Fault):
        print(outcome.describe())      # SIGSEGV (SEGV_MAPERR) at 0x10, pc 0x7f...
"""

from __future__ import annotations

import signal
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from walkfuzz.core import native
from walkfuzz.core.errors import UserError, WalkfuzzError
from walkfuzz.core.exit_status import signal_name

FaultKind = Literal["signal", "hang"]
# A fault's address in JSON: its key, then those older finding descriptions and reports used.
ADDRESS_KEYS = ("address", "addr", "fault_address")
_KINDS: dict[int, FaultKind] = {1: "signal", 2: "hang"}  # wf_fault_kind

# si_code names (<asm-generic/siginfo.h>); the positive ones depend on the signal.
_GENERIC_CODES = {0: "SI_USER", 0x80: "SI_KERNEL", -1: "SI_QUEUE", -6: "SI_TKILL"}
_SIGNAL_CODES: dict[int, dict[int, str]] = {
    signal.SIGSEGV: {1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR"},
    signal.SIGBUS: {1: "BUS_ADRALN", 2: "BUS_ADRERR", 3: "BUS_OBJERR", 4: "BUS_MCEERR_AR"},
    signal.SIGILL: {1: "ILL_ILLOPC", 2: "ILL_ILLOPN", 3: "ILL_ILLADR", 4: "ILL_ILLTRP",
                    5: "ILL_PRVOPC", 6: "ILL_PRVREG", 7: "ILL_COPROC", 8: "ILL_BADSTK"},
    signal.SIGFPE: {1: "FPE_INTDIV", 2: "FPE_INTOVF", 3: "FPE_FLTDIV", 4: "FPE_FLTOVF",
                    5: "FPE_FLTUND", 6: "FPE_FLTRES", 7: "FPE_FLTINV", 8: "FPE_FLTSUB"},
}


class GuardError(WalkfuzzError):
    """The guard could not do what was asked (e.g. the watchdog could not watch this thread)."""


def code_name(signo: int, si_code: int) -> str:
    """`SEGV_MAPERR` for (SIGSEGV, 1); the number itself when it has no name."""
    if si_code > 0 and si_code in _SIGNAL_CODES.get(signo, {}):
        return _SIGNAL_CODES[signo][si_code]
    return _GENERIC_CODES.get(si_code, str(si_code))


@dataclass(frozen=True)
class Fault:
    """A guarded call that faulted or hung, with how far the walk had got (the progress marker)."""

    kind: FaultKind
    signal: str          # "SIGSEGV"; for a hang the watchdog's signal, e.g. "SIGRTMAX-2"
    signo: int
    si_code: int
    address: int         # si_addr; 0 for a hang and for a non-canonical address on x86-64
    pc: int              # faulting instruction
    frames: int          # frames the walker had produced
    last_sp: int
    last_fp: int
    last_pc: int

    @classmethod
    def from_native(cls, record: Any) -> Fault:
        """From a `wf_fault` cdata record filled by the guard."""
        kind = _KINDS.get(int(record.kind))
        if kind is None:
            raise GuardError(f"fault record has kind {int(record.kind)}, not a fault")
        return cls(
            kind=kind,
            signal=signal_name(int(record.signo)),
            signo=int(record.signo),
            si_code=int(record.si_code),
            address=int(record.addr),
            pc=int(record.pc),
            frames=int(record.frames),
            last_sp=int(record.last_sp),
            last_fp=int(record.last_fp),
            last_pc=int(record.last_pc),
        )

    @property
    def code(self) -> str:
        """The si_code by name, e.g. `SEGV_ACCERR`."""
        return code_name(self.signo, self.si_code)

    def describe(self) -> str:
        """One line: what happened, where, and how far the walk had got."""
        if self.kind == "hang":
            head = f"hang (interrupted by {self.signal}) at pc {self.pc:#x}"
        else:
            head = f"{self.signal} ({self.code}) at {self.address:#x}, pc {self.pc:#x}"
        return f"{head}; {self.frames} frames, last sp {self.last_sp:#x} pc {self.last_pc:#x}"

    def to_json(self) -> dict[str, object]:
        """The one JSON form of a fault, in finding details, reports and replay output alike:
        every field of the record, addresses as hex strings, and the si_code by name."""
        doc: dict[str, object] = asdict(self)
        for key in _HEX_FIELDS:
            doc[key] = hex(getattr(self, key))
        return {**doc, "code": self.code}

    @classmethod
    def from_json(cls, doc: Mapping[str, object]) -> Fault:
        """Inverse of to_json; also reads the keys older finding descriptions and reports
        used (`addr`, `fault_address`, `frames_before_fault`, `signal` as a number).
        ValueError naming the field that is wrong."""
        given = doc.get("kind", "signal")
        kind = _KINDS.get(given) if isinstance(given, int) else _KIND_NAMES.get(str(given))
        if kind is None:
            raise ValueError(f"fault kind {given!r} is not one of {tuple(_KIND_NAMES)}")
        signo = _number(doc, ("signo",), 0)
        named = doc.get("signal")
        if isinstance(named, int) and not isinstance(named, bool):
            signo = signo or named
        elif isinstance(named, str) and not signo:
            signo = _signal_number(named)
        return cls(
            kind=kind,
            signal=named if isinstance(named, str) else signal_name(signo),
            signo=signo,
            si_code=_number(doc, ("si_code",), 0),
            address=_number(doc, ADDRESS_KEYS, 0),
            pc=_number(doc, ("pc",), 0),
            # before `frames`: in the flat details of older findings `frames` is the walk's
            frames=_number(doc, ("frames_before_fault", "frames"), 0),
            last_sp=_number(doc, ("last_sp",), 0),
            last_fp=_number(doc, ("last_fp",), 0),
            last_pc=_number(doc, ("last_pc",), 0),
        )


def native_fault(record: Any) -> Fault | None:
    """The fault a `wf_fault` record holds, None when it holds none (kind WF_FAULT_NONE: the
    call it belongs to returned)."""
    return Fault.from_native(record) if int(record.kind) in _KINDS else None


_HEX_FIELDS = ("address", "pc", "last_sp", "last_fp", "last_pc")  # written as hex strings
_KIND_NAMES: dict[str, FaultKind] = {name: name for name in _KINDS.values()}


def _number(doc: Mapping[str, object], keys: tuple[str, ...], default: int) -> int:
    """The first of `keys` in `doc` as an int: a JSON number or a hex string ("0x10")."""
    for key in keys:
        value = doc.get(key)
        if value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value, 0)
            except ValueError:
                pass
        raise ValueError(f"fault {key} {value!r} is not a number")
    return default


def _signal_number(name: str) -> int:
    """SIGSEGV -> 11; 0 for a name this machine does not know (e.g. `SIGRTMAX-2`)."""
    try:
        return int(signal.Signals[name])
    except KeyError:
        return 0


@dataclass(frozen=True)
class Returned:
    """A guarded call that returned normally, with its `intptr_t` result."""

    value: int


Outcome = Returned | Fault


def call(function: str | int, arg: int = 0, *, masked: bool = False) -> Outcome:
    """Run a native `intptr_t fn(void *arg)` of the core under the guard, on this thread.

    `function` is the name of a function the core exports, or its address. `masked` uses
    `wf_guard_call_masked`, which restores the signal mask after a fault.
    """
    ffi, lib = native.load()
    address = native.function_address(function) if isinstance(function, str) else function
    result = ffi.new("intptr_t *")
    record = ffi.new("wf_fault *")
    guarded = lib.wf_guard_call_masked if masked else lib.wf_guard_call
    status = guarded(
        ffi.cast("wf_guarded_fn", address), ffi.cast("void *", arg & _WORD), result, record
    )
    return Fault.from_native(record) if status else Returned(int(result[0]))


def read_word(address: int) -> Outcome:
    """A guarded read of the 8-byte word at `address`."""
    return call("wf_guard_test_read", address)


def set_budget_ns(budget_ns: int) -> None:
    """Watch this thread: a guarded call running longer than `budget_ns` becomes a hang fault.

    0 stops watching. The budget belongs to the calling thread.
    """
    if budget_ns < 0:
        raise UserError(f"hang budget must be >= 0 ns, got {budget_ns}")
    if native.load().lib.wf_guard_set_budget_ns(budget_ns) != 0:
        raise GuardError(f"the watchdog cannot watch this thread (budget {budget_ns} ns)")


def budget_ns() -> int:
    """This thread's hang budget in ns, 0 when it is not watched."""
    return int(native.load().lib.wf_guard_budget_ns())


def hang_signal() -> int:
    """The real-time signal the watchdog uses to interrupt a hung call."""
    return int(native.load().lib.wf_guard_hang_signal())


def depth() -> int:
    """Guarded calls active on this thread (0 from Python, outside any)."""
    return int(native.load().lib.wf_guard_depth())


_WORD = (1 << 64) - 1
