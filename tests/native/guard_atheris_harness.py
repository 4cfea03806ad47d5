#!/usr/bin/env python3
"""A campaign in miniature for test_guard_atheris.py: atheris drives inputs, and every
GUARD_EVERY-th input makes a guarded read of a bad address. Each caught fault prints one line,
"fault CALLS FAULTS". Input number GUARD_ESCAPE_AT (if set) faults outside the guard instead.

The native flavour comes from $WALKFUZZ_NATIVE: `cov` loads atheris's libFuzzer first.
"""

import os
import sys

from walkfuzz.core import guard, native

ffi, lib = native.load_testing()  # the core, then its testing extension
import atheris  # noqa: E402  (after the core: the cov flavour has set libFuzzer up)

EVERY = int(os.environ["GUARD_EVERY"])
ESCAPE_AT = int(os.environ.get("GUARD_ESCAPE_AT", "0"))
calls = faults = 0


def test_one_input(data: bytes) -> None:
    global calls, faults
    calls += 1
    if calls == ESCAPE_AT:
        lib.wf_guard_test_read(ffi.cast("void *", 0x40))
    if calls % EVERY:
        assert guard.call("wf_guard_test_identity", len(data)) == guard.Returned(len(data))
        return
    address = 0x10 + 8 * (calls % 512)
    outcome = guard.read_word(address)
    assert isinstance(outcome, guard.Fault) and outcome.address == address, outcome
    faults += 1
    os.write(1, f"fault {calls} {faults}\n".encode())


atheris.Setup(sys.argv, test_one_input, internal_libfuzzer=True)
atheris.Fuzz()
