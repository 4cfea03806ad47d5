"""Stacks past the depth limit: the generator's deep runs (wf_gen.h), STACK with RUNS
(docs/case-format.md §2) and the limit itself (§4.2 step b).

A deep layout walks to its truth and the Python spec agrees, at WF_WALK_MAX_DEPTH - 1, at it
and past it; the C and Python codecs write and read the repeat alike, and a deep case file is
a few KiB; a malformed RUNS payload gets the same status from both decoders."""

from __future__ import annotations

import dataclasses
import functools
import random
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from walkfuzz.core.native import load
from walkfuzz.targets.minivm import spec
from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import encode as enc
from walkfuzz.targets.minivm.case import native as case_native
from walkfuzz.targets.minivm.case.stack_runs import SECTION_RUNS
from walkfuzz.targets.minivm.case.status import Section
from walkfuzz.targets.minivm.case.strategies import deep_cases, profile
from walkfuzz.targets.minivm.vm_model import WalkCode

sys.path.insert(0, str(Path(__file__).parent))
from test_walker_vs_spec import assert_truth, walk_both

ffi, lib = load()
LIMIT = vm.MAX_DEPTH


@functools.cache
def deep_seed(depth: int) -> int:
    """The first seed whose deep layout a walk without a limit would take `depth` frames."""
    for seed in range(400):
        case_native.generate(seed=seed, deep=2)
        if lib.wf_gen_walk_depth() == depth:
            return seed
    raise AssertionError(f"no seed of 400 lays a walk of {depth} physical frames")


def stack_section(data: bytes) -> tuple[int, bytes]:
    """(flags, payload) of the STACK section of a case's bytes."""
    offset = 8
    while True:
        stype, flags, length = struct.unpack_from("<HHI", data, offset)
        if stype == Section.STACK:
            return flags, data[offset + 8:offset + 8 + length]
        offset += 8 + length


@pytest.mark.parametrize("depth", [LIMIT - 2, LIMIT - 1, LIMIT, LIMIT + 1, LIMIT + 2])
def test_a_walk_near_the_limit_is_its_truth_and_the_spec(depth: int) -> None:
    data = case_native.generate(seed=deep_seed(depth), deep=2)
    case, native, want = walk_both(data)
    assert_truth(case, native, want)
    assert want.end_code == (WalkCode.DEPTH_LIMIT if depth > LIMIT else WalkCode.NO_FRAME)
    visited = {(s.frame.sp, s.frame.pc) for s in want.steps if s.kind is not None}
    assert len(visited) == min(depth, LIMIT)


@profile(0.1)
@given(deep_cases())
def test_deep_layouts_walk_to_the_truth(data: bytes) -> None:
    depth = lib.wf_gen_walk_depth()
    case, native, want = walk_both(data)
    assert_truth(case, native, want)
    if depth > LIMIT:
        assert want.end_code == WalkCode.DEPTH_LIMIT


@profile(0.1)
@given(deep_cases())
def test_a_deep_stack_is_a_repeat_both_codecs_write_and_read_alike(data: bytes) -> None:
    case = dec.decode(data)
    assert case.stack_run is not None and case.stack_run.times > 2
    flags, payload = stack_section(data)
    assert flags == SECTION_RUNS
    assert len(payload) < len(case.stack) // 8  # the repeat, not the image
    assert enc.encode(case) == data
    assert case_native.decode(data).status == 0
    assert case_native.encode_mapped() == data
    assert dec.decode(enc.encode(case)) == case


def test_a_deep_case_file_without_truth_is_small_and_walks_to_the_limit() -> None:
    data = case_native.generate(seed=deep_seed(LIMIT + 2), deep=2)
    small = enc.encode(dataclasses.replace(dec.decode(data), truth=None))
    assert len(small) < 16384  # fits the bytes harness's inputs
    assert case_native.decode(small).status == 0
    run = case_native.run_mapped()
    assert run.end_code == WalkCode.DEPTH_LIMIT and run.finding == "none"
    assert spec.walk(dec.decode(small)).end_code == WalkCode.DEPTH_LIMIT


def test_a_mutated_deep_stack_is_written_whole() -> None:
    """A stack word changed inside the copies: the repeat no longer holds, and the encoders
    write the image as it is rather than a repeat that would hide the change."""
    data = case_native.generate(seed=deep_seed(LIMIT + 1), deep=2)
    case = dec.decode(data)
    assert case.stack_run is not None
    stack = bytearray(case.stack)
    at = case.stack_run.offset - case.stack_run.size  # the first copy below the pattern
    stack[at] ^= 0x40
    changed = dataclasses.replace(case, stack=bytes(stack))
    flags, payload = stack_section(enc.encode(changed))
    assert (flags, payload) == (0, bytes(stack))
    assert dec.decode(enc.encode(changed)).stack == bytes(stack)


@functools.cache
def small_deep_case() -> bytes:
    """A deep case file without its truth (a few KiB)."""
    return enc.encode(dataclasses.replace(
        dec.decode(case_native.generate(seed=deep_seed(LIMIT), deep=2)), truth=None))


@profile(0.5)
@given(st.randoms(use_true_random=False))
def test_both_decoders_agree_on_a_damaged_repeat(rng: random.Random) -> None:
    data = small_deep_case()
    _, payload = stack_section(data)
    start = data.index(payload)
    edits = bytearray(data)
    i = start + rng.randrange(min(len(payload), 64))  # the size and the chunk headers
    edits[i] = rng.choice([0, 1, 2, 0xFF, edits[i] ^ 1, edits[i] ^ 0x80])
    native = case_native.decode(bytes(edits))
    python = dec.decode_status(bytes(edits))
    assert (python[0], python[1], python[2]) == (native.status, native.section, native.offset)


def deep_seeds() -> list[Path]:
    """The deep seeds tools/make_seeds.py wrote (not the inputs campaigns grew, which may be
    any bytes)."""
    corpora = Path(__file__).resolve().parents[2] / "corpora"
    grown = set((corpora / "grown.txt").read_text().splitlines())
    return [p for p in sorted((corpora / "bytes").iterdir())
            if p.is_file() and f"bytes/{p.name}" not in grown
            and dec.decode(p.read_bytes()).stack_run is not None]


def test_the_shipped_deep_seeds_replay_from_the_cli_at_and_past_the_limit() -> None:
    """`walkfuzz replay` of each deep `bytes` seed: the reference walker and the spec agree,
    and between them the seeds end both before the limit and at it."""
    ends = set()
    seeds = deep_seeds()
    assert len(seeds) >= 4
    for path in seeds:
        run = subprocess.run([sys.executable, "-m", "walkfuzz.cli", "replay", str(path)],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        assert "native == spec" in run.stdout
        summary = re.search(r"native \(reference\): run 1, (\d+) frames, end (-?\d+)", run.stdout)
        assert summary is not None, run.stdout[-2000:]
        ends.add(int(summary.group(2)))
    assert ends == {WalkCode.NO_FRAME, WalkCode.DEPTH_LIMIT}
