"""Remote-memory mode in process: a snapshot round-trips, libunwind's remote address space and
libdw walk a captured chain to its known frames, and mutated snapshots come back as data."""

from __future__ import annotations

import random

import pytest

from tests.opt_outs import skip_if_opted_out

skip_if_opted_out("libunwind", module=True)

from walkfuzz.core.errors import CaseFormatError  # noqa: E402
from walkfuzz.targets.native.snapshot import format as fmt  # noqa: E402
from walkfuzz.targets.native.snapshot.capture import capture_chain  # noqa: E402
from walkfuzz.targets.native.snapshot.native import load  # noqa: E402
from walkfuzz.targets.native.snapshot.walk import STOP_NAMES, UNWINDERS, Walker  # noqa: E402

native = load()  # not built: an error naming the module and how to build it, never a skip
# fp and CFI-only functions alternate (fuzz/targets/native/chaingen.py: even ones keep rbp)
PATHS = ([3], [0, 1, 2, 3], [7, 6, 5, 4, 9, 8, 11, 10], [15, 14, 13, 12, 0, 1, 2, 3, 4, 5])


@pytest.fixture(scope="module", params=PATHS, ids=lambda p: "-".join(map(str, p)))
def captured(request: pytest.FixtureRequest) -> tuple[list[int], fmt.Snapshot]:
    return request.param, capture_chain(request.param)


def test_a_snapshot_round_trips_and_the_c_parser_reads_what_python_wrote(
        captured: tuple[list[int], fmt.Snapshot]) -> None:
    path, snapshot = captured
    data = snapshot.encode()
    again = fmt.decode(data)
    assert again == snapshot and again.encode() == data
    assert len(snapshot.truth) == len(path) + 2  # bottom, the path, root
    assert snapshot.regs[fmt.RSP] == snapshot.stack_addr
    assert any(m.path.endswith(".so") and "_snapshot" in m.path for m in snapshot.mappings())
    walk = Walker(native, "libunwind").walk(data)
    assert (walk.truth, walk.stop) == (len(snapshot.truth), "root")


@pytest.mark.parametrize("unwinder", sorted(UNWINDERS))
def test_each_unwinder_walks_a_captured_chain_to_its_known_frames(
        captured: tuple[list[int], fmt.Snapshot], unwinder: str) -> None:
    _, snapshot = captured
    data = snapshot.encode()
    walker = Walker(native, unwinder)
    first, second = walker.walk(data), walker.walk(data)
    assert first.stop == "root" and first.matched, (unwinder, first)
    assert [f.truth for f in first.frames] == list(range(len(snapshot.truth)))
    assert first.frames[0].pc == snapshot.regs[fmt.RIP] and first.frames[0].exact
    assert first.misses == 0
    assert second.signature_frames() == first.signature_frames()


def test_every_truth_frame_is_at_a_return_address_the_stack_holds(
        captured: tuple[list[int], fmt.Snapshot]) -> None:
    """The truth is not the walkers' word: each caller's pc is a word of the stack bytes."""
    _, snapshot = captured
    walk = Walker(native, "libdw").walk(snapshot.encode())
    words = fmt.code_pointers(snapshot)
    assert all(f.pc in words for f in walk.frames[1:])


def mutate(data: bytes, rng: random.Random, regs_from: int) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randrange(1, 9)):
        at = rng.randrange(regs_from, len(out) - 8)
        choice = rng.randrange(4)
        if choice == 0:
            out[at] ^= 1 << rng.randrange(8)
        elif choice == 1:
            out[at:at + 8] = rng.randrange(1 << 64).to_bytes(8, "little")
        elif choice == 2:  # a pointer into the snapshot's own stack
            addr = int.from_bytes(data[16:24], "little") + rng.randrange(0, 4096, 8)
            out[at:at + 8] = addr.to_bytes(8, "little")
        else:
            out[at:at + 8] = bytes(8)
    return bytes(out)


@pytest.mark.parametrize("unwinder", sorted(UNWINDERS))
def test_mutated_snapshots_are_walked_to_a_named_stop_in_this_process(unwinder: str) -> None:
    snapshot = capture_chain([0, 1, 2, 3, 4, 5])
    data = snapshot.encode()
    rng = random.Random(25)
    walker = Walker(native, unwinder)
    stops = []
    for _ in range(400):
        walk = walker.walk(mutate(data, rng, 32))  # registers, truth, map and stack
        assert walk.stop in STOP_NAMES
        stops.append(walk.stop)
    assert walker.walk(data).matched  # the process and the unwinder's state survived them
    assert len(set(stops)) > 1, stops  # the mutations changed the walks


def test_a_truncated_or_foreign_file_is_refused_by_name_in_c_and_in_python() -> None:
    data = capture_chain([1, 2]).encode()
    walker = Walker(native, "libdw")
    for bad in (data[:100], b"\x7fELF" + data[4:], data[:fmt.HEADER + 40]):
        walk = walker.walk(bad)
        assert walk.stop == "bad-snapshot" and walk.error, walk
        with pytest.raises(CaseFormatError):
            fmt.decode(bad)


def test_a_second_mapping_of_a_module_file_stays_out_of_the_map() -> None:
    """libdw merges consecutive maps lines of one file into one module based at the first: a
    stray mapping of a loaded library's file (this process maps module files to read them)
    listed just before the library would move the module, and its walk with it."""
    snapshot = capture_chain([0, 1, 2, 3])
    run = [m for m in snapshot.mappings() if "_snapshot" in m.path]
    stray = fmt.Mapping(run[0].start - 0x100000, run[0].start - 0x80000, "r--p", 0,
                        run[0].path, run[0].device, run[0].inode)
    again = snapshot.with_map([stray, *snapshot.mappings()])
    assert again.map_text == snapshot.map_text
    walk = Walker(native, "libdw").walk(again.encode())
    assert walk.stop == "root" and walk.matched
