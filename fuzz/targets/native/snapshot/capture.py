"""Snapshots of known chains, sampled live in this process (wf_snap_capture_chain: a signal
to its own thread at the chain's bottom, registers and stack copied in the handler), with the
module map of this process's modules the stack points into."""

from __future__ import annotations

import random
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.findings.store import write_atomic
from walkfuzz.targets.native.snapshot import format as fmt
from walkfuzz.targets.native.snapshot.native import load

CHAIN_FUNCTIONS = 16
MAX_DEPTH = 16


def capture_chain(path: list[int], stack_bytes: int = fmt.MAX_STACK) -> fmt.Snapshot:
    """A live sample of root -> chain_<path...> -> bottom, with its truth and module map."""
    if not 1 <= len(path) <= MAX_DEPTH or not all(0 <= p < CHAIN_FUNCTIONS for p in path):
        raise UserError(f"chain path {path}: 1 to {MAX_DEPTH} functions numbered "
                        f"0..{CHAIN_FUNCTIONS - 1}")
    mod = load()
    cap = fmt.HEADER + 16 * (len(path) + 2) + stack_bytes
    buf = mod.ffi.new("uint8_t[]", cap)
    size = mod.lib.wf_snap_capture_chain(len(path), bytes(path), stack_bytes, buf, cap)
    if size < 0:
        raise UserError(f"could not sample chain {path} (no stack bounds or signal blocked)")
    # The map is read after the sample, outside the handler; the modules do not move.
    maps = fmt.parse_maps(Path("/proc/self/maps").read_text())
    return fmt.decode(bytes(mod.ffi.buffer(buf, size))).with_map(maps)


def seed_paths(count: int, seed: int = 0) -> list[list[int]]:
    """`count` chain paths: depth 1 .. MAX_DEPTH, fp and CFI-only functions mixed."""
    rng = random.Random(seed)
    return [[rng.randrange(CHAIN_FUNCTIONS) for _ in range(1 + i % MAX_DEPTH)]
            for i in range(count)]


def capture_seeds(out: Path, count: int, seed: int = 0) -> list[Path]:
    """`count` captured snapshots written to out/ (named by chain path)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in seed_paths(count, seed):
        name = out / f"chain-{'-'.join(map(str, path))}.wfsnap"
        write_atomic(name, capture_chain(path).encode())
        written.append(name)
    return written
