"""libunwind fuzz target: unperturbed walks equal the known chain, perturbed ones come back."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.opt_outs import skip_if_opted_out

skip_if_opted_out("libunwind", module=True)

from walkfuzz.targets.native.extension import load  # noqa: E402

unwind = load()  # not built: an error naming the module and how to build it, never a skip
ffi, lib = unwind.ffi, unwind.lib

from walkfuzz.targets.native import chaingen  # noqa: E402
from walkfuzz.targets.native.inputs import INPUT_SIZE, decode, unperturbed  # noqa: E402

FP = [s.index for s in chaingen.chain_specs() if s.frame_pointer]
NOFP = [s.index for s in chaingen.chain_specs() if not s.frame_pointer]
# alloca forces a frame pointer even under -fomit-frame-pointer
NOFP_STATIC = [s.index for s in chaingen.chain_specs()
               if not s.frame_pointer and not s.uses_alloca]
MOV_RSP_RBP = b"\x48\x89\xe5"


def walk(data: bytes) -> tuple[int, object]:
    out = ffi.new("wf_uw_result *")
    status = lib.wf_uw_fuzz_one(data, len(data), out)
    return status, out


def code(index: int) -> bytes:
    start, end, fp = ffi.new("uintptr_t *"), ffi.new("uintptr_t *"), ffi.new("int *")
    assert lib.wf_uw_id_range(index, start, end, fp) == 1
    return bytes(ffi.buffer(ffi.cast("char *", start[0]), end[0] - start[0]))


def test_generated_functions_really_differ_in_frame_pointer_use() -> None:
    """The per-file flags took: fp functions set up rbp early, the others never do."""
    assert FP and NOFP_STATIC, (FP, NOFP_STATIC)
    assert all(MOV_RSP_RBP in code(i)[:16] for i in FP)
    assert not any(MOV_RSP_RBP in code(i) for i in NOFP_STATIC)


@pytest.mark.parametrize("flags", [0, 1, 2, 3], ids=["unw_getcontext", "getcontext",
                                                     "no-sigflag", "getcontext-no-sigflag"])
@pytest.mark.parametrize("path", [FP[:6], NOFP[:6], [0, 1, 2, 3, 4, 5, 6, 7], [5, 5, 5, 13],
                                  list(range(16))], ids=["fp", "nofp", "mixed", "alloca-rec",
                                                         "deep"])
def test_unperturbed_walk_equals_known_chain(path: list[int], flags: int) -> None:
    status, out = walk(unperturbed(path, flags))
    expected = [32, *reversed(path), 33]  # bottom, innermost chain function first, root
    assert list(out.expected)[: out.expected_count] == expected
    assert [out.frame[i].id for i in range(out.frames)] == expected
    assert (status, out.stop, out.invalid, out.first_diff) == (0, lib.WF_UW_STOP_ROOT, 0, -1)


def test_python_decoder_agrees_with_c() -> None:
    for seed in range(200):
        data = ffi.new(f"uint8_t[{INPUT_SIZE}]")
        lib.wf_uw_generate(7, seed, data)
        raw = bytes(data)
        case = decode(raw)
        _, out = walk(raw)
        assert list(out.expected)[1 : out.expected_count - 1] == list(reversed(case.path))
        assert out.perturbations == len(case.perturbations)


@pytest.mark.parametrize(
    ("walked", "expected", "cycle", "kind", "first_diff"),
    [
        ([1, 2, 3], [1, 2, 3], 0, "valid", -1),
        ([1, 3], [1, 2, 3], 0, "missing", 1),
        ([1, 2, 9, 3], [1, 2, 3], 0, "extra", 2),
        ([1, 4, 3], [1, 2, 3], 0, "wrong-function", 1),
        ([1, 2], [1, 2, 3], 0, "truncated", 2),
        ([1, 2, 2], [1, 2, 3], 1, "cycle", 2),
    ],
)
def test_classify(walked, expected, cycle, kind, first_diff) -> None:
    from walkfuzz.targets.native.outcome import INVALID_NAMES

    diff = ffi.new("int32_t *")
    got = lib.wf_uw_classify(walked, len(walked), expected, len(expected), cycle, diff)
    assert (INVALID_NAMES[got], diff[0]) == (kind, first_diff)


BATCH_CHILD = """
import json, sys
from walkfuzz.targets.native.extension import load
unwind = load()
ffi, lib = unwind.ffi, unwind.lib
stats = ffi.new("wf_uw_batch_stats *"); fin = ffi.new("wf_uw_result *")
cur = ffi.new("uint8_t[64]"); lib.wf_uw_set_walk_budget_ns(500_000_000)
i, n, statuses = 0, int(sys.argv[1]), {}
while i < n:
    i += lib.wf_uw_fuzz_batch(3, i, n - i, cur, stats, fin)
    if fin.status:
        statuses[fin.status] = statuses.get(fin.status, 0) + 1
        fin.status = 0
good = ffi.new("wf_uw_result *")
after = lib.wf_uw_fuzz_one(bytes(59), 59, good)
print(json.dumps({"inputs": stats.inputs, "walks": stats.walks, "faults": stats.faults,
                  "hangs": stats.hangs, "invalid": stats.invalid, "stops": list(stats.stops),
                  "statuses": statuses, "after": after, "unperturbed": stats.unperturbed}))
"""


def test_perturbed_batch_returns_with_counts() -> None:
    done = subprocess.run([sys.executable, "-c", BATCH_CHILD, "20000"], capture_output=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    doc = json.loads(done.stdout)
    assert doc["inputs"] == doc["walks"] == 20000
    assert sum(doc["stops"]) == doc["walks"]
    assert doc["faults"] > 0  # wide perturbations fault inside libunwind (~0.4%)
    assert doc["statuses"].get("1", 0) == doc["faults"]
    assert doc["invalid"] == 0 and doc["unperturbed"] > 0
    assert doc["after"] == 0  # the process still walks correctly after caught faults
