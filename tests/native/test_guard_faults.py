"""The crash guard turns each kind of bad access into a fault record, and the thread goes on."""

from __future__ import annotations

import mmap
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from walkfuzz.core import guard, native
from walkfuzz.core.guard import Fault, GuardError, Returned

PAGE = mmap.PAGESIZE
PROT_NONE = 0   # <sys/mman.h>; Python's mmap module only names PROT_READ/WRITE/EXEC
FIRST_NON_CANONICAL = 1 << 47
READ = "wf_guard_test_read"


def fault_of(outcome: guard.Outcome) -> Fault:
    assert isinstance(outcome, Fault), f"expected a fault, got {outcome}"
    return outcome


def assert_next_call_works(native_core: native.Native) -> None:
    """A guarded read of a live word on the same thread returns that word."""
    word = native_core.ffi.new("intptr_t *", 0x5EED)
    address = int(native_core.ffi.cast("uintptr_t", word))
    assert guard.read_word(address) == Returned(0x5EED)


@pytest.fixture
def mappings(native_testing: native.Native) -> Iterator[list[tuple[int, int]]]:
    """Mappings a test makes, as (address, length); unmapped afterwards."""
    made: list[tuple[int, int]] = []
    yield made
    for address, length in made:
        native_testing.lib.wf_guard_test_unmap(address, length)


def map_pages(made: list[tuple[int, int]], pages: int, prot: int, fd: int = -1) -> int:
    address = int(native.load_testing().lib.wf_guard_test_map(pages * PAGE, prot, fd))
    assert address != 0, f"mmap of {pages} pages failed"
    made.append((address, pages * PAGE))
    return address


@pytest.mark.parametrize("address", [0, 0x10], ids=["NULL", "0x10"])
def test_low_address_is_a_segv_with_its_address(native_core: native.Native, address: int) -> None:
    fault = fault_of(guard.read_word(address))
    assert (fault.kind, fault.signal, fault.code) == ("signal", "SIGSEGV", "SEGV_MAPERR")
    assert fault.address == address
    assert fault.pc == native.function_address(READ)
    assert_next_call_works(native_core)


def test_unmapped_page_is_a_segv_maperr(native_core: native.Native,
                                        mappings: list[tuple[int, int]]) -> None:
    address = map_pages(mappings, 1, mmap.PROT_READ | mmap.PROT_WRITE)
    assert guard.read_word(address) == Returned(0)
    assert native.load_testing().lib.wf_guard_test_unmap(address, PAGE) == 0
    mappings.clear()
    fault = fault_of(guard.read_word(address + 8))
    assert (fault.signal, fault.code, fault.address) == ("SIGSEGV", "SEGV_MAPERR", address + 8)
    assert_next_call_works(native_core)


def test_prot_none_page_is_a_segv_accerr(native_core: native.Native,
                                         mappings: list[tuple[int, int]]) -> None:
    address = map_pages(mappings, 1, PROT_NONE)
    fault = fault_of(guard.read_word(address + 16))
    assert (fault.signal, fault.code, fault.address) == ("SIGSEGV", "SEGV_ACCERR", address + 16)
    assert_next_call_works(native_core)


@pytest.mark.parametrize("address", [FIRST_NON_CANONICAL, 0xDEAD_BEEF_0000_0000],
                         ids=["2^47", "0xdeadbeef00000000"])
def test_non_canonical_address_is_a_general_protection_segv(native_core: native.Native,
                                                            address: int) -> None:
    # x86-64 raises #GP, not a page fault, for a non-canonical address: the kernel reports
    # SIGSEGV with SI_KERNEL and si_addr 0, because the CPU does not say which address it was.
    fault = fault_of(guard.read_word(address))
    assert (fault.signal, fault.code, fault.address) == ("SIGSEGV", "SI_KERNEL", 0)
    assert fault.pc == native.function_address(READ)
    assert_next_call_works(native_core)


def test_truncated_file_mapping_is_a_sigbus(native_core: native.Native, tmp_path: Path,
                                            mappings: list[tuple[int, int]]) -> None:
    backing = tmp_path / "two-pages"
    backing.write_bytes(b"\x11" * PAGE + b"\x22" * PAGE)
    fd = os.open(backing, os.O_RDWR)
    try:
        address = map_pages(mappings, 2, mmap.PROT_READ, fd)
        os.ftruncate(fd, PAGE)
    finally:
        os.close(fd)
    assert guard.read_word(address) == Returned(0x1111_1111_1111_1111)
    fault = fault_of(guard.read_word(address + PAGE))
    assert (fault.signal, fault.code, fault.address) == ("SIGBUS", "BUS_ADRERR", address + PAGE)
    assert_next_call_works(native_core)


def test_illegal_instruction_is_a_sigill_at_the_instruction(native_core: native.Native) -> None:
    fault = fault_of(guard.call("wf_guard_test_illegal"))
    function = native.function_address("wf_guard_test_illegal")
    assert (fault.signal, fault.code) == ("SIGILL", "ILL_ILLOPN")
    assert fault.address == fault.pc == function
    assert_next_call_works(native_core)


def test_integer_division_by_zero_is_a_sigfpe(native_core: native.Native) -> None:
    fault = fault_of(guard.call("wf_guard_test_divide_by_zero", 7))
    function = native.function_address("wf_guard_test_divide_by_zero")
    assert (fault.signal, fault.code) == ("SIGFPE", "FPE_INTDIV")
    assert function <= fault.pc < function + 16
    assert_next_call_works(native_core)


def test_a_call_that_returns_gives_its_value() -> None:
    assert guard.call("wf_guard_test_identity", 12345) == Returned(12345)
    assert guard.call("wf_guard_test_identity", -2) == Returned(-2)


def test_fault_carries_the_progress_marker_of_its_own_call() -> None:
    fault = fault_of(guard.call("wf_guard_test_progress_then_read", 0x10))
    assert (fault.frames, fault.last_sp, fault.last_fp, fault.last_pc) == (
        3, 0x7000, 0x7100, 0x7200)
    fresh = fault_of(guard.read_word(0x18))
    assert (fresh.frames, fresh.last_sp, fresh.last_fp, fresh.last_pc) == (0, 0, 0, 0)


def test_guards_nest_and_the_inner_fault_stays_inner() -> None:
    assert guard.call("wf_guard_test_depth") == Returned(1)
    assert guard.call("wf_guard_test_nested_read", 0x20) == Returned(0x20)
    assert guard.depth() == 0


def test_first_responder_sees_the_fault_before_the_guard(native_testing: native.Native) -> None:
    safefetch = native.function_address("wf_guard_test_safefetch")
    native_testing.lib.wf_guard_test_use_safefetch_responder(1)
    try:
        assert guard.call(safefetch, 0x10) == Returned(-1)
        declined = fault_of(guard.read_word(0x10))
        assert declined.address == 0x10
    finally:
        native_testing.lib.wf_guard_test_use_safefetch_responder(0)
    assert fault_of(guard.call(safefetch, 0x10)).pc == safefetch


def test_no_stale_redzone_is_left_by_a_jump(native_core: native.Native) -> None:
    # Under ASan a call the guard jumps out of leaves its redzones poisoned unless the guard
    # unpoisons the abandoned stack; the next call's memset over that stack would then abort.
    assert fault_of(guard.call("wf_guard_test_redzones_then_read", 0x10)).address == 0x10
    assert guard.call("wf_guard_test_fill_stack") == Returned(0)


def test_fault_describes_itself_in_one_line() -> None:
    fault = fault_of(guard.read_word(0x10))
    text = fault.describe()
    assert text.startswith("SIGSEGV (SEGV_MAPERR) at 0x10, pc ")
    assert "\n" not in text
    assert fault.to_json()["code"] == "SEGV_MAPERR"


def test_code_names() -> None:
    assert guard.code_name(signal.SIGSEGV, 2) == "SEGV_ACCERR"
    assert guard.code_name(signal.SIGSEGV, 0x80) == "SI_KERNEL"
    assert guard.code_name(signal.SIGSEGV, 99) == "99"


def test_a_record_that_is_not_a_fault_is_refused(native_core: native.Native) -> None:
    empty = native_core.ffi.new("wf_fault *")   # kind WF_FAULT_NONE
    with pytest.raises(GuardError, match="kind 0"):
        Fault.from_native(empty)
