"""walkfuzz.targets.minivm.walk: the typed hot path gives the C result's facts and names bad
input."""

from __future__ import annotations

import pytest

from walkfuzz.core.errors import CaseFormatError, WalkerLibraryError
from walkfuzz.targets.minivm.walk import MUTATE_ALL, Runner, Walker


def test_generated_case_walks_clean_against_its_truth() -> None:
    runner = Runner(Walker.reference())
    result = runner.run_generated(bytes(range(256)) * 4)
    assert (result.finding, result.check, result.oracle) == (None, "none", "truth")
    assert result.frames == len(runner.frames()) > 0
    assert result.shape and set(result.shape) <= {"interpreted", "compiled", "inlined",
                                                  "native", "non-java"}


def test_mutated_cases_have_no_truth_oracle_for_the_reference() -> None:
    runner = Runner(Walker.reference())
    results = [runner.run_generated(bytes([i, 7, 3]) * 300, mutate=MUTATE_ALL)
               for i in range(200)]
    assert all(r.finding is None for r in results)
    assert {r.oracle for r in results if r.mutations} == {"none"}


def test_undecodable_case_names_its_problem() -> None:
    with pytest.raises(CaseFormatError, match=r"case\.bin: bad-magic at byte 0"):
        Runner(Walker.reference()).run_case(b"NOPE\x01\x00\x00\x00", "case.bin")


def test_missing_walker_library_is_named() -> None:
    with pytest.raises(WalkerLibraryError, match=r"no-such-walker\.so"):
        Walker.library("/nonexistent/no-such-walker.so")
