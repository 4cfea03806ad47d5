#!/usr/bin/env python3
"""Regenerate the shipped seed corpora of the minivm harnesses: corpora/<harness>/<sha1>.

    .venv/bin/python tools/make_seeds.py [--count 32]

Deterministic: the same sources give the same files. `registers` and `layouts` inputs drive the
C generator, so their seeds are pseudo-random bytes of varied lengths (for `layouts`, half with
byte 0's mutate bit clear, half set); `bytes` seeds are case files encoded from generated
layouts (wf_gen_from_seed + wf_case_encode), among them deep ones whose walk ends just before,
at and past WF_WALK_MAX_DEPTH (a repeated run, STACK with RUNS; no TRUTH, which the harness
ignores, so each stays a few KiB); `queue` seeds are generator bytes followed by
program bytes (half with byte 0's wild bit set), up to 1 KiB; `api` seeds likewise generator
bytes followed by operation bytes (half with byte 0's arbitrary-handles bit set). Files of a
harness that the script no longer generates are removed, but for the inputs campaigns grew
(corpora/grown.txt, `<harness>/<sha1>` a line: kept as files, they cannot be regenerated);
`regressions/` subdirectories are left alone.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "corpora"
ENCODE_CAPACITY = 1 << 20
CASE_FRAMES = 12  # Java frames at most in a `bytes` seed: small files mutate faster
DEPTH_LIMIT = 8192  # WF_WALK_MAX_DEPTH
# Deep `bytes` seeds: walks of these many physical frames without the limit
DEEP_SEED_DEPTHS = (DEPTH_LIMIT - 1, DEPTH_LIMIT, DEPTH_LIMIT + 1, DEPTH_LIMIT + 2)
IN_JAVA = 2
GROWN = CORPORA / "grown.txt"  # campaign-grown inputs (docs/fuzzing.md, "Coverage of corpora")


GENERATOR_LENGTHS = (16, 32, 64, 128, 256, 512)
# `queue` inputs hold a layout and then a program: longer, so the program is not cut short.
QUEUE_LENGTHS = (128, 256, 512, 1024)
# `api` inputs: the generator takes 100-470 bytes of a layout of 16 Java frames; operations follow.
API_LENGTHS = (384, 512, 768, 1024)


def generator_inputs(count: int, seed: int, control: bool,
                     lengths: tuple[int, ...] = GENERATOR_LENGTHS) -> list[bytes]:
    rng = random.Random(seed)
    inputs = []
    for i in range(count):
        body = rng.randbytes(rng.choice(lengths))
        inputs.append((bytes([i % 2]) + body) if control else body)
    return inputs


def case_files(count: int) -> list[bytes]:
    from walkfuzz.core import native

    ffi, lib = native.load("plain")

    case = lib.wf_case_new()
    params = ffi.new("wf_gen_params *")
    lib.wf_gen_default_params(params)
    params.max_frames = CASE_FRAMES
    buffer = ffi.new("uint8_t[]", ENCODE_CAPACITY)
    files = []
    for seed in range(1, count + 1):
        if lib.wf_gen_from_seed(seed, params, case) != 0:
            raise SystemExit(f"make_seeds: generating case {seed} failed")
        length = lib.wf_case_encode(case, buffer, ENCODE_CAPACITY)
        if length <= 0:
            raise SystemExit(f"make_seeds: encoding case {seed} failed ({length})")
        files.append(bytes(ffi.buffer(buffer, length)))
    lib.wf_case_free(case)
    return files


def deep_case_files() -> list[bytes]:
    """One case file per depth of DEEP_SEED_DEPTHS: the first generator seed whose deep run
    gives a walk that long, encoded without its truth."""
    from walkfuzz.core import native

    ffi, lib = native.load("plain")
    case = lib.wf_case_new()
    params = ffi.new("wf_gen_params *")
    lib.wf_gen_default_params(params)
    params.max_frames, params.deep, params.state, params.consistent = CASE_FRAMES, 2, IN_JAVA, 1
    params.entry = 0  # ASGST_RunWithIterator(ucontext)
    buffer = ffi.new("uint8_t[]", ENCODE_CAPACITY)
    files: dict[int, bytes] = {}
    for seed in range(1, 1000):
        if len(files) == len(DEEP_SEED_DEPTHS):
            break
        if lib.wf_gen_from_seed(seed, params, case) != 0:
            raise SystemExit(f"make_seeds: generating deep case {seed} failed")
        depth = lib.wf_gen_walk_depth()
        if depth in DEEP_SEED_DEPTHS and depth not in files:
            case.has_truth = 0
            length = lib.wf_case_encode(case, buffer, ENCODE_CAPACITY)
            if length <= 0:
                raise SystemExit(f"make_seeds: encoding deep case {seed} failed ({length})")
            files[depth] = bytes(ffi.buffer(buffer, length))
    lib.wf_case_free(case)
    if len(files) != len(DEEP_SEED_DEPTHS):
        raise SystemExit(f"make_seeds: no seed below 1000 for depths "
                         f"{sorted(set(DEEP_SEED_DEPTHS) - set(files))}")
    return [files[d] for d in DEEP_SEED_DEPTHS]


def grown(harness: str) -> set[str]:
    """The names of the campaign-grown inputs of `harness` (corpora/grown.txt)."""
    lines = GROWN.read_text().splitlines() if GROWN.is_file() else []
    return {line.split("/", 1)[1] for line in lines if line.startswith(f"{harness}/")}


def write_corpus(harness: str, inputs: list[bytes]) -> int:
    directory = CORPORA / harness
    directory.mkdir(parents=True, exist_ok=True)
    names = {hashlib.sha1(data).hexdigest(): data for data in inputs}
    kept = grown(harness)
    for stale in directory.iterdir():
        if stale.is_file() and stale.name not in names and stale.name not in kept:
            stale.unlink()
    for name, data in names.items():
        (directory / name).write_bytes(data)
    return len(names)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=32, help="seeds per harness")
    args = parser.parse_args()
    corpora = {
        "registers": generator_inputs(args.count, 1, control=False),
        "layouts": generator_inputs(args.count, 2, control=True),
        "bytes": case_files(args.count) + deep_case_files(),
        "queue": generator_inputs(args.count, 4, control=True, lengths=QUEUE_LENGTHS),
        "api": generator_inputs(args.count, 5, control=True, lengths=API_LENGTHS),
    }
    for harness, inputs in corpora.items():
        print(f"corpora/{harness}: {write_corpus(harness, inputs)} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
