"""One million guarded walks of perturbed layouts by the reference walker: no fault, no hang,
no contract violation (issue 3). Opt-in (WALKFUZZ_MILLION=1, `make million-walker`): it takes
a few tens of seconds. Each input is fresh random bytes: the generator builds a layout from
them and the bytes it leaves drive 1-4 mutation operators of every class."""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest

from walkfuzz.targets.minivm.walk import MUTATE_ALL, Runner, Walker

WALKS = int(os.environ.get("WALKFUZZ_MILLION_WALKS", "1000000"))
WATCHDOG_NS = 200_000_000

pytestmark = [
    pytest.mark.quality,
    pytest.mark.slow,
    pytest.mark.million,  # opt-in: WALKFUZZ_MILLION=1 (tests/conftest.py deselects it otherwise)
]


def test_a_million_perturbed_walks_never_fault_or_hang() -> None:
    from walkfuzz.core.native import load

    load().lib.wf_guard_set_budget_ns(WATCHDOG_NS)
    runner = Runner(Walker.reference())
    rng = random.Random(20260101)
    end_codes: Counter[int] = Counter()
    findings: Counter[str] = Counter()
    mutated = 0
    for _ in range(WALKS):
        data = rng.randbytes(rng.randrange(16, 1024))
        result = runner.run_generated(data, mutate=MUTATE_ALL)
        end_codes[result.end_code] += 1
        mutated += result.mutations > 0
        if result.finding is not None:
            findings[f"{result.finding}:{result.location}"] += 1
    print(f"\n{WALKS} walks, {mutated} mutated, end codes {dict(end_codes.most_common())}")
    assert not findings, f"findings in {WALKS} walks: {dict(findings)}"
    assert mutated > WALKS // 2
    assert len(end_codes) >= 8, f"too few distinct outcomes: {dict(end_codes)}"
