"""Walker libraries behind wf_walker_load: the reference built as a library agrees with the
in-core one (the differential oracle stays quiet), and broken walkers are caught: a fault as
a crash finding, a bad frame as a contract finding, a missing frame as an invalid trace."""

from __future__ import annotations

import shutil
import signal
import subprocess
from pathlib import Path

from tests.native.refwalk_helpers import CASE, ffi, generate, lib, run
from walkfuzz.targets.minivm.walker_library import ERROR_LEN

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "native" / "include"
REFERENCE = ROOT / "native" / "walkers" / "reference"
CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang") or "cc"

BROKEN = r"""
#include <stddef.h>
#include "asgst.h"
struct _ASGST_Iterator { int n; };
int ASGST_RunWithIterator(void *uc, int32_t o, ASGST_IteratorHandler f, void *a) {
    struct _ASGST_Iterator it = {0};
    f(&it, a);
    return ASGST_JAVA_TRACE;
}
int ASGST_RunWithIteratorFromFrame(void *sp, void *fp, void *pc, int32_t o,
                                   ASGST_IteratorHandler f, void *a) {
    return ASGST_RunWithIterator(NULL, o, f, a);
}
int ASGST_NextFrame(ASGST_Iterator *it, ASGST_Frame *f) {
    if (MODE == 1) return *(volatile int *)0x10;         /* crash */
    if (MODE == 3 || it->n++ > 0) return ASGST_NO_FRAME; /* missing frames */
    f->type = 9;                                         /* no such frame type */
    return 1;
}
void ASGST_RewindIterator(ASGST_Iterator *it) { it->n = 0; }
int ASGST_State(ASGST_Iterator *it) { return MODE == 3 || it->n ? ASGST_NO_FRAME : 1; }
int ASGST_ThreadState(void) { return -1; }
void ASGST_GetMethodInfo(ASGST_Method m, ASGST_MethodInfo *i) {}
void ASGST_GetClassInfo(ASGST_Class c, ASGST_ClassInfo *i) {}
int ASGST_Capabilities(void) { return 0; }
"""


def build(tmp: Path, name: str, sources: list[Path], *defines: str) -> Path:
    out = tmp / f"{name}.so"
    cmd = [str(CC), "-shared", "-fPIC", "-O1", "-std=gnu11", f"-I{INCLUDE}",
           *(f"-D{d}" for d in defines), *map(str, sources), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    return out


def load(path: Path) -> tuple[int, object, str]:
    walker = ffi.new("wf_walker *")
    err = ffi.new("char[]", ERROR_LEN)
    rc = lib.wf_walker_load(str(path).encode(), walker, err, ERROR_LEN)
    return rc, walker, ffi.string(err).decode()


def broken_walker(tmp: Path, mode: int) -> object:
    source = tmp / f"broken{mode}.c"
    source.write_text(BROKEN)
    rc, walker, err = load(build(tmp, f"broken{mode}", [source], f"MODE={mode}"))
    assert rc == 0, err
    return walker


def test_missing_library_and_missing_symbols_are_named(tmp_path: Path) -> None:
    rc, _, err = load(tmp_path / "nope.so")
    assert rc == -1 and "nope.so" in err
    source = tmp_path / "half.c"
    source.write_text('#include "asgst.h"\nint ASGST_Capabilities(void) { return 0; }\n')
    rc, _, err = load(build(tmp_path, "half", [source]))
    assert rc == -2
    for symbol in ("ASGST_RunWithIterator", "ASGST_NextFrame", "ASGST_RewindIterator",
                   "ASGST_GetMethodInfo"):
        assert symbol in err
    assert "ASGST_Capabilities" not in err


def test_reference_library_agrees_with_the_core_on_mutated_cases(tmp_path: Path) -> None:
    sources = [REFERENCE / "ref_walker.c", REFERENCE / "ref_info.c"]
    rc, walker, err = load(build(tmp_path, "reference", sources, "WF_REF_EXPORT"))
    assert rc == 0, err
    compared = 0
    for seed in range(1500):
        generate(seed)
        lib.wf_mutate_seed(CASE, lib.WF_MUTATE_ALL, seed)
        r = run(walker)
        assert r.finding == lib.WF_FINDING_NONE, f"seed {seed}: check {r.check} at {r.diff_index}"
        compared += r.oracle == lib.WF_ORACLE_REFERENCE
    assert compared > 1000
    lib.wf_walker_unload(walker)


def test_a_faulting_walker_is_a_crash_finding(tmp_path: Path) -> None:
    walker = broken_walker(tmp_path, 1)
    generate(1, state=lib.WF_THREAD_IN_JAVA, options=0, entry=0, consistent=1)
    r = run(walker)
    assert (r.finding, r.fault.signo, r.fault.addr) == (lib.WF_FINDING_CRASH, signal.SIGSEGV, 0x10)
    assert run().finding == lib.WF_FINDING_NONE  # the guard left the thread usable


def test_a_bad_frame_type_is_a_contract_finding(tmp_path: Path) -> None:
    walker = broken_walker(tmp_path, 2)
    generate(1, state=lib.WF_THREAD_IN_JAVA, options=0, entry=0, consistent=1)
    r = run(walker)
    assert (r.finding, r.check, r.diff_index) == (lib.WF_FINDING_CONTRACT,
                                                  lib.WF_CHECK_FRAME_TYPE, 0)


def test_missing_frames_are_an_invalid_trace(tmp_path: Path) -> None:
    walker = broken_walker(tmp_path, 3)
    generate(1, state=lib.WF_THREAD_IN_JAVA, options=0, entry=0, consistent=1)
    r = run(walker)
    assert (r.finding, r.check, r.oracle) == (lib.WF_FINDING_INVALID_TRACE,
                                              lib.WF_CHECK_ORACLE_FRAME, lib.WF_ORACLE_TRUTH)
    assert r.diff_index == 0 and r.want_frames == CASE.truth_count > 0
