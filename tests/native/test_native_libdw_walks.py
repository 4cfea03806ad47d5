"""The native target's libdw unwinder (wf_unw_libdw.c, remote-memory mode's Dwfl walker on live
memory): unperturbed chains walk to the known frames in every capture mode, and perturbed
contexts come back as data."""

from __future__ import annotations

import pytest

from tests.opt_outs import skip_if_opted_out

skip_if_opted_out("libunwind", module=True)

from walkfuzz.core import native  # noqa: E402
from walkfuzz.targets.native.inputs import INPUT_SIZE, unperturbed  # noqa: E402
from walkfuzz.targets.native.unwinders import UNWINDERS  # noqa: E402

LIBDW = UNWINDERS["libdw"]
# not built: an ImportError naming the module, never a skip
unwind = native.import_extension(
    LIBDW.asan_module if native.selected_flavour() in native.SANITIZED else LIBDW.module,
    global_symbols=False)
ffi, lib = unwind.ffi, unwind.lib


@pytest.mark.parametrize("flags", [0, 1, 2, 3])
@pytest.mark.parametrize("path", [[0, 2, 4, 6], [1, 3, 5, 7], list(range(16)), [5, 5, 5, 13]])
def test_unperturbed_walk_equals_known_chain(path: list[int], flags: int) -> None:
    out = ffi.new("wf_uw_result *")
    status = lib.wf_uw_fuzz_one(unperturbed(path, flags), INPUT_SIZE, out)
    expected = [32, *reversed(path), 33]  # bottom, innermost chain function first, root
    assert [out.frame[i].id for i in range(out.frames)] == expected
    assert (status, out.stop, out.first_diff) == (0, lib.WF_UW_STOP_ROOT, -1)


def test_perturbed_walks_end_with_a_named_stop_and_the_process_walks_on() -> None:
    stats, finding = ffi.new("wf_uw_batch_stats *"), ffi.new("wf_uw_result *")
    current = ffi.new(f"uint8_t[{INPUT_SIZE}]")
    lib.wf_uw_set_walk_budget_ns(1_000_000_000)
    done = 0
    while done < 2000:
        done += lib.wf_uw_fuzz_batch(5, done, 2000 - done, current, stats, finding)
    assert stats.walks == 2000 and sum(stats.stops) == stats.walks
    assert stats.invalid == 0 and stats.unperturbed > 0  # unperturbed walks stayed true
    assert len([s for s in stats.stops if s]) > 2  # the perturbations made a difference
    out = ffi.new("wf_uw_result *")
    assert lib.wf_uw_fuzz_one(unperturbed([1, 2], 0), INPUT_SIZE, out) == 0
