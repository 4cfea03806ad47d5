"""The libgcc backend: _Unwind_Backtrace made to walk a given ucontext through a fake signal
frame walks the known chain exactly, and starts from the ucontext's registers."""

from __future__ import annotations

import pytest

from walkfuzz.targets.native import chaingen
from walkfuzz.targets.native.extension import load
from walkfuzz.targets.native.inputs import INPUT_SIZE, unperturbed

libgcc = load("libgcc")  # not built: an error naming the module and how to build it
ffi, lib = libgcc.ffi, libgcc.lib

FP = [s.index for s in chaingen.chain_specs() if s.frame_pointer]
NOFP = [s.index for s in chaingen.chain_specs() if not s.frame_pointer]


def walk(data: bytes) -> tuple[int, object]:
    out = ffi.new("wf_uw_result *")
    status = lib.wf_uw_fuzz_one(data, len(data), out)
    return status, out


@pytest.mark.parametrize("flags", [0, 1, 2], ids=["capture", "getcontext", "no-sigflag"])
@pytest.mark.parametrize("path", [FP[:6], NOFP[:6], [0, 1, 2, 3, 4, 5, 6, 7], [5, 5, 5, 13],
                                  list(range(16))],
                         ids=["fp", "nofp", "mixed", "alloca-rec", "deep"])
def test_unperturbed_walk_equals_known_chain(path: list[int], flags: int) -> None:
    status, out = walk(unperturbed(path, flags))
    expected = [32, *reversed(path), 33]  # bottom, innermost chain function first, root
    assert [out.frame[i].id for i in range(out.frames)] == expected
    assert (status, out.stop, out.invalid) == (0, lib.WF_UW_STOP_ROOT, 0)


def test_the_walk_starts_from_the_given_registers() -> None:
    """Frame 0 is the (perturbed) context's pc, flagged interrupted: libgcc met our ucontext
    through __restore_rt's CFI, not its own stack."""
    started = 0
    for index in range(300):
        data = ffi.new(f"uint8_t[{INPUT_SIZE}]")
        lib.wf_uw_generate(11, index, data)
        _, out = walk(bytes(data))
        if out.frames == 0:
            continue
        started += 1
        assert out.frame[0].pc == out.walked_from[0], index
        assert out.frame[0].signal_frame == 1, index
    assert started > 100
