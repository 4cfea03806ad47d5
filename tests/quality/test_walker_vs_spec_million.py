"""Opt-in: at least 1,000,000 guarded walks of generated + mutated layouts by the reference
walker, none faulting or hanging, and a sample compared with the Python spec.
Run: WALKFUZZ_MILLION=1 pytest -m quality tests/quality/test_walker_vs_spec_million.py -s"""

from __future__ import annotations

import collections
import os
import random
import time

import pytest

from walkfuzz.core.native import load
from walkfuzz.targets.minivm import spec
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import native as case_native

WALKS = int(os.environ.get("WALKFUZZ_MILLION_WALKS", "1000000"))
SAMPLE_EVERY = 1000
# opt-in: WALKFUZZ_MILLION=1 (tests/conftest.py deselects it otherwise)
pytestmark = [pytest.mark.quality, pytest.mark.million]


def test_a_million_guarded_walks_without_fault_and_sampled_agreement() -> None:
    ffi, lib = load()
    walker, c = lib.wf_walker_reference(), case_native.mapped_case()
    result = ffi.new("wf_run_result *")
    lib.wf_guard_set_budget_ns(case_native.HANG_BUDGET_NS)
    findings: collections.Counter[int] = collections.Counter()
    codes: collections.Counter[int] = collections.Counter()
    compared = 0
    rng = random.Random(2024)
    started = time.monotonic()
    for i in range(WALKS):
        data = rng.randbytes(rng.randrange(16, 256))
        assert lib.wf_run_generated(walker, data, len(data), ffi.NULL, 15, c, result) == 0
        findings[result.finding] += 1
        codes[result.end_code] += 1
        assert result.finding not in (1, 2), (i, result.fault.signo, hex(result.fault.pc))
        if i % SAMPLE_EVERY == 0:
            case = dec.decode(case_native.encode_mapped())
            want = spec.walk(case)
            native = case_native.run_mapped()
            assert (native.run_result, native.frames, native.end_code) == (
                want.run_result, want.frames, want.end_code), (i, want.reason)
            compared += 1
    elapsed = time.monotonic() - started
    print(f"\n{WALKS} guarded walks in {elapsed:.1f}s, {compared} compared with the spec; "
          f"findings {dict(findings)}; end codes {dict(codes)}")
