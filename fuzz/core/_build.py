"""The one cffi build module (out-of-line API mode) for walkfuzz's C core.

Every `native/src/*/*.c` and `native/walkers/reference/*.c` is compiled into one extension.
The cdef is the text between `/* cffi:begin */` and `/* cffi:end */` markers in the headers
of `native/include/`, so a header stays the single place where a C declaration lives.

Flavours (module name, compiler, flags):
  plain   walkfuzz._native       cc     -O2             tests, stress, replay, triage
  cov     walkfuzz._native_cov   clang  fuzzer-no-link  campaigns (libFuzzer sees branches)
  srccov  walkfuzz._native_srccov clang source-based    `walkfuzz coverage`
  asan    walkfuzz._native_asan  clang  ASan+UBSan      the sanitizer run of tests/native
  sancov  walkfuzz._native_sancov clang ASan+UBSan+fuzzer-no-link  sanitizer campaigns
                                        (`walkfuzz fuzz --sanitizer`), built on first use

`pip install` builds `plain` through setup.py's cffi_modules; the others are built in place
by `python fuzz/core/_build.py FLAVOUR` (the Makefile does this), with CC=clang.

The test instruments and timing loops of `native/testing/` are an extension of their own per
flavour, built with that flavour's flags and linked against its core (below):
  testing       walkfuzz._native_testing        with `plain` (pip install, like the core)
  testing-cov   walkfuzz._native_testing_cov    with `cov`
  testing-asan  walkfuzz._native_testing_asan   with `asan`

The native target's extensions (below), one per unwinder of fuzz/targets/native/unwinders.py:
`unwind-<name>` (walkfuzz._unwind_<name>, -O2) and `unwind-<name>-asan` (clang, the asan
flags); libunwind's are `unwind` (walkfuzz._unwind) and `unwind-asan` (walkfuzz._unwind_asan).
Remote-memory mode's extension: `snapshot` (walkfuzz._snapshot, -O2) and `snapshot-asan`
(walkfuzz._snapshot_asan, clang, the asan flags).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from cffi import FFI

ROOT = Path(__file__).resolve().parents[2]  # fuzz/core/_build.py: a script, it imports no walkfuzz
NATIVE = ROOT / "native"
INCLUDE = NATIVE / "include"
SOURCE = NATIVE / "src"  # one folder per concept; private headers are included as "folder/x.h"
WALKER = NATIVE / "walkers" / "reference"

WARNINGS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]
COMPILE_ARGS = [*WARNINGS, "-std=gnu11", "-fno-strict-aliasing"]
LIBRARIES = ["rt", "pthread", "dl"]
FLAVOURS: dict[str, tuple[str, list[str], list[str]]] = {
    # name: (module, extra compile args, extra link args)
    "plain": ("walkfuzz._native", ["-O2", "-g"], []),
    "cov": ("walkfuzz._native_cov", ["-O2", "-g", "-fsanitize=fuzzer-no-link"], []),
    "srccov": (
        "walkfuzz._native_srccov",
        ["-O1", "-g", "-fprofile-instr-generate", "-fcoverage-mapping"],
        ["-fprofile-instr-generate"],
    ),
    # Linked without -shared-libasan (no DT_NEEDED on clang's runtime): the runtime is
    # preloaded, clang's for the test run, atheris's asan_with_fuzzer.so for a campaign.
    "asan": (
        "walkfuzz._native_asan",
        ["-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
         "-fno-sanitize-recover=undefined"],
        ["-fsanitize=address,undefined"],
    ),
    # Not one build with asan: with no libFuzzer loaded (the test run), every comparison of the
    # coverage instrumentation calls the ASan runtime's empty stub, and walks took 5x as long
    # (the reference walker on 1000 compiled frames: 58 us, 300 us with it).
    "sancov": (
        "walkfuzz._native_sancov",
        ["-O1", "-g", "-fsanitize=address,undefined,fuzzer-no-link", "-fno-omit-frame-pointer",
         "-fno-sanitize-recover=undefined"],
        ["-fsanitize=address,undefined,fuzzer-no-link"],
    ),
}

CDEF_BLOCK = re.compile(r"/\* cffi:begin \*/(.*?)/\* cffi:end \*/", re.S)

# The cffi glue of a coverage build (the generated walkfuzz/_native*.c) is no code under test:
# left out of the coverage instrumentation, its edges are no libFuzzer features and no counters
# to reset and scan after every input, and a harness process has the coverage of the bare
# libFuzzer C harness of bench/bench_fuzz.py. Written into build/ by the build that uses it.
COVERAGE_IGNORELIST = ROOT / "build" / "coverage-ignorelist.txt"
COVERAGE_IGNORED = "src:walkfuzz/_native*.c\nsrc:*/walkfuzz/_native*.c\n"


def headers() -> list[Path]:
    return sorted(INCLUDE.glob("*.h"))


def sources() -> list[Path]:
    return [*sorted(SOURCE.rglob("*.c")), *sorted(WALKER.glob("*.c"))]


def cdef_text() -> str:
    """Concatenate every header's cffi block, in file-name order."""
    return "\n".join(
        block for header in headers() for block in CDEF_BLOCK.findall(header.read_text())
    )


def _path(p: Path, absolute: bool) -> str:
    """setup.py wants paths relative to the project; FFI.compile() chdirs: wants them absolute."""
    return str(p if absolute else p.relative_to(ROOT))


def coverage_flags(cflags: list[str]) -> list[str]:
    """`cflags`, and the glue's exclusion when they instrument for coverage (fuzzer-no-link)."""
    if not any("fuzzer-no-link" in flag for flag in cflags):
        return cflags
    COVERAGE_IGNORELIST.parent.mkdir(parents=True, exist_ok=True)
    if not COVERAGE_IGNORELIST.is_file() or COVERAGE_IGNORELIST.read_text() != COVERAGE_IGNORED:
        COVERAGE_IGNORELIST.write_text(COVERAGE_IGNORED)
    return [*cflags, f"-fsanitize-coverage-ignorelist={COVERAGE_IGNORELIST}"]


def make_builder(flavour: str, absolute: bool = False) -> FFI:
    module, cflags, ldflags = FLAVOURS[flavour]
    cflags = coverage_flags(cflags)

    def path(p: Path) -> str:
        return _path(p, absolute)

    builder = FFI()
    builder.cdef(cdef_text())
    includes = "".join(f'#include "{h.name}"\n' for h in headers())
    builder.set_source(
        module,
        includes,
        sources=[path(p) for p in sources()],
        include_dirs=[path(INCLUDE), path(SOURCE)],
        extra_compile_args=[*COMPILE_ARGS, *cflags],
        extra_link_args=ldflags,
        libraries=LIBRARIES,
    )
    return builder


ffibuilder = make_builder(os.environ.get("WALKFUZZ_FLAVOUR", "plain"))

# --- walkfuzz._native_testing: what only tests and benchmarks call (native/testing/: the guard's
# fault instruments, the timing loops, the queue's signal stress), kept out of the core. It
# calls into the core of its flavour and must find the one copy of the VM and guard state a
# process has: it is linked against the core's library by file name, looked up next to itself
# ($ORIGIN), and the dynamic loader binds a library it finds already loaded (same file) to that
# copy, whatever the import flags (the cov core is RTLD_GLOBAL, plain and asan are not). Its
# cdef includes the core's (ffi.include): the two modules share their types, and importing it
# imports the core first. The reference walker's symbols are hidden in the core, so the
# testing C calls that walker through wf_walker_reference()'s table.
TESTING = NATIVE / "testing"
TESTING_TARGETS = {"testing": "plain", "testing-cov": "cov", "testing-asan": "asan"}
TESTING_MODULES = {"plain": "walkfuzz._native_testing", "cov": "walkfuzz._native_testing_cov",
                   "asan": "walkfuzz._native_testing_asan"}


def testing_headers() -> list[Path]:
    return sorted(TESTING.glob("*.h"))


def core_link_args(core: Path) -> list[str]:
    """Link against the core library `core` (by its file name, found next to the extension)."""
    return [f"-L{core.parent}", f"-l:{core.name}", "-Wl,-rpath,$ORIGIN"]


def make_testing_builder(flavour: str, core: Path | None, absolute: bool = False) -> FFI:
    """The testing extension of `flavour`, linked against `core`; None: setup.py's build_ext
    (BuildExt) adds the core it has just built."""
    _, cflags, ldflags = FLAVOURS[flavour]
    cflags = coverage_flags(cflags)

    def path(p: Path) -> str:
        return _path(p, absolute)

    builder = FFI()
    builder.include(make_builder(flavour, absolute))
    builder.cdef("\n".join(
        block for header in testing_headers() for block in CDEF_BLOCK.findall(header.read_text())
    ))
    builder.set_source(
        TESTING_MODULES[flavour],
        "".join(f'#include "{h.name}"\n' for h in [*headers(), *testing_headers()]),
        sources=[path(p) for p in sorted(TESTING.glob("*.c"))],
        include_dirs=[path(TESTING), path(INCLUDE)],
        extra_compile_args=[*COMPILE_ARGS, *cflags],
        extra_link_args=[*ldflags, *(core_link_args(core) if core else [])],
        libraries=LIBRARIES,
    )
    return builder


testing_ffibuilder = make_testing_builder(os.environ.get("WALKFUZZ_FLAVOUR", "plain"), None)


def build_ext_class() -> type:
    """setup.py's build_ext: links each testing extension against the core built before it (the
    cffi_modules order), wherever setuptools put that core."""
    from setuptools.command.build_ext import build_ext  # type: ignore[import-untyped]

    core_of = {TESTING_MODULES[f]: FLAVOURS[f][0] for f in TESTING_MODULES}

    class BuildExt(build_ext):  # type: ignore[misc]  # setuptools is untyped here
        def build_extension(self, ext: Any) -> None:
            if ext.name in core_of:
                core = Path(self.get_ext_fullpath(core_of[ext.name]))
                ext.extra_link_args = [*ext.extra_link_args, *core_link_args(core)]
            super().build_extension(ext)

    return BuildExt


def _built_core(flavour: str) -> Path:
    """The in-place library of the core `flavour` (one copy per module, see main())."""
    name = FLAVOURS[flavour][0].split(".")[-1]
    built = sorted((ROOT / "fuzz").glob(f"{name}.*.so"))
    if len(built) != 1:
        raise SystemExit(f"walkfuzz build: the {flavour} core must be built first, once "
                         f"(found {[p.name for p in built]})")
    return built[0]

# --- walkfuzz._unwind*: the native target, one extension per unwinder (their unw_* and
# _Unwind_* symbols clash in one process), each its own so the core builds where an unwinder's
# library is absent. fuzz/targets/native/unwinders.py is the registry: module, backend file,
# libraries. Each holds the common sources of native/agents/native, its one backend
# (native/agents/native/unwinders/wf_unw_<name>.c), the guard and the call chains generated by
# fuzz/targets/native/chaingen.py, compiled per file, with and without frame pointers, into
# objects linked beside them. An asan flavour instruments the agent and the guard, not the
# generated functions: their frame shapes (sizes, fp or CFI only) are what the walks are tested
# on. Flavour names: `unwind-<name>` and `unwind-<name>-asan` (`unwind` and `unwind-asan` for
# libunwind); `unwinders` builds every unwinder this machine can build and names the others.
UNWIND_DIR = NATIVE / "agents" / "native"
NATIVE_TARGET = ROOT / "fuzz" / "targets" / "native"


def _load_by_path(name: str, path: Path) -> Any:
    import importlib.util  # the package may not be installed yet: load the file itself

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


def _registry() -> Any:
    return _load_by_path("wf_unwinders", NATIVE_TARGET / "unwinders.py")


def unwind_flavours() -> dict[str, tuple[Any, bool]]:
    """Build flavour -> (the registry's unwinder, asan or not)."""
    flavours: dict[str, tuple[Any, bool]] = {}
    for unwinder in _registry().UNWINDERS.values():
        flavours[unwinder.flavour] = (unwinder, False)
        if unwinder.asan:
            flavours[f"{unwinder.flavour}-asan"] = (unwinder, True)
    return flavours


def _compile_object(source: Path, flags: list[str]) -> str:
    """A generated file, by `cc` whatever $CC says: chaingen's flags are gcc's, and every flavour
    then walks the same machine code."""
    import subprocess

    obj = source.with_suffix(".o")
    subprocess.run(["cc", "-c", "-fPIC", "-O2", "-g", *WARNINGS, "-std=gnu11",
                    f"-I{INCLUDE}", f"-I{UNWIND_DIR}", *flags, str(source), "-o", str(obj)],
                   check=True)
    return str(obj)


def make_unwind_builder(flavour: str) -> FFI:
    unwinder, asan = unwind_flavours()[flavour]
    module = unwinder.asan_module if asan else unwinder.module
    cflags, ldflags = (FLAVOURS["asan"][1:] if asan else (["-O2", "-g"], []))
    # The agent keeps frame pointers (the asan flags have it already): a frame-pointer walk
    # meets a frame record in its bottom, root and worker root, as in the generated fp functions.
    cflags = [*cflags, "-fno-omit-frame-pointer"]
    gen: Any = _load_by_path("wf_chaingen", NATIVE_TARGET / "chaingen.py")
    generated = gen.write_sources(ROOT / "build" / flavour / "gen")
    common = list(gen.COMMON_FLAGS)
    objects = [_compile_object(generated[gen.FP_FILE], [*common, *gen.FP_FLAGS]),
               _compile_object(generated[gen.NOFP_FILE], [*common, *gen.NOFP_FLAGS])]
    api = [INCLUDE / "wf_guard.h", UNWIND_DIR / "wf_unwind.h", UNWIND_DIR / "wf_uw_diff.h",
           UNWIND_DIR / "wf_uw_companion.h", UNWIND_DIR / "wf_uw_snap.h"]
    builder = FFI()
    builder.cdef("\n".join(b for h in api for b in CDEF_BLOCK.findall(h.read_text())))
    shared = [ROOT / path for path in unwinder.shared]
    sources = [*sorted(UNWIND_DIR.glob("*.c")), unwinder.backend, *shared,
               generated[gen.TABLE_FILE], *sorted((SOURCE / "guard").glob("*.c"))]
    builder.set_source(
        module,
        '#include "wf_unwind.h"\n#include "wf_uw_diff.h"\n#include "wf_uw_companion.h"\n'
        '#include "wf_uw_snap.h"\n',
        sources=[str(p) for p in sources],
        # the snapshot folder for wf_snapshot.h: a finding's walk is saved in its file layout
        include_dirs=[str(INCLUDE), str(UNWIND_DIR), str(NATIVE / "agents" / "snapshot"),
                      *sorted({str(p.parent) for p in shared})],
        extra_compile_args=[*COMPILE_ARGS, *cflags],
        extra_link_args=[*ldflags, *unwinder.link_args],
        extra_objects=objects,
        libraries=[*unwinder.libraries, *LIBRARIES],
    )
    return builder


# --- walkfuzz._snapshot: remote-memory mode (native/agents/snapshot/): libunwind's remote address
# space (the generic libunwind-x86_64) and libdw walking captured snapshots through accessors,
# plus the capture of a known chain (the native target's generated chain functions, compiled
# the same way).
SNAPSHOT_DIR = NATIVE / "agents" / "snapshot"
SNAPSHOT_FLAVOURS: dict[str, tuple[str, list[str], list[str]]] = {
    "snapshot": ("walkfuzz._snapshot", ["-O2", "-g"], []),
    "snapshot-asan": ("walkfuzz._snapshot_asan", *FLAVOURS["asan"][1:]),
}


def make_snapshot_builder(flavour: str) -> FFI:
    module, cflags, ldflags = SNAPSHOT_FLAVOURS[flavour]
    gen: Any = _load_by_path("wf_chaingen", NATIVE_TARGET / "chaingen.py")
    generated = gen.write_sources(ROOT / "build" / flavour / "gen")
    common = list(gen.COMMON_FLAGS)
    objects = [_compile_object(generated[gen.FP_FILE], [*common, *gen.FP_FLAGS]),
               _compile_object(generated[gen.NOFP_FILE], [*common, *gen.NOFP_FLAGS])]
    api = [INCLUDE / "wf_guard.h", SNAPSHOT_DIR / "wf_snapshot.h"]
    builder = FFI()
    builder.cdef("\n".join(b for h in api for b in CDEF_BLOCK.findall(h.read_text())))
    sources = [*sorted(SNAPSHOT_DIR.glob("*.c")), generated[gen.TABLE_FILE],
               *sorted((SOURCE / "guard").glob("*.c"))]
    builder.set_source(
        module,
        '#include "wf_snapshot.h"\n',
        sources=[str(p) for p in sources],
        include_dirs=[str(INCLUDE), str(UNWIND_DIR), str(SNAPSHOT_DIR)],
        extra_compile_args=[*COMPILE_ARGS, *cflags],
        extra_link_args=ldflags,
        extra_objects=objects,
        libraries=["unwind-x86_64", "unwind", "dw", "elf", *LIBRARIES],
    )
    return builder


def _target_builder(target: str) -> FFI:
    if target in unwind_flavours():
        return make_unwind_builder(target)
    if target in SNAPSHOT_FLAVOURS:
        return make_snapshot_builder(target)
    if target in TESTING_TARGETS:
        flavour = TESTING_TARGETS[target]
        return make_testing_builder(flavour, _built_core(flavour), absolute=True)
    return make_builder(target, absolute=True)


# Every unwinder this machine can build, plain or asan (`make build`, `make test-asan`); one
# that cannot be built is named with its one-line reason and skipped.
UNWINDER_SETS = {"unwinders": False, "unwinders-asan": True}


def _unwinder_set(asan: bool) -> list[str]:
    flavours = []
    for unwinder in _registry().UNWINDERS.values():
        if asan and not unwinder.asan:
            continue
        reason = unwinder.missing()
        if reason is not None:
            print(f"skipped unwinder {unwinder.name}: {reason}")
            continue
        flavours.append(f"{unwinder.flavour}-asan" if asan else unwinder.flavour)
    return flavours


def _build(flavour: str) -> None:
    builder = _target_builder(flavour)
    # compile() places the .so under tmpdir by dotted name: walkfuzz/_native_x.so;
    # build in build/ then move it next to the sources of the package (fuzz/).
    out = builder.compile(tmpdir=str(ROOT / "build" / flavour), verbose=False)
    target = ROOT / "fuzz" / Path(out).name
    # one copy per module: pip's _native.abi3.so and this _native.cpython-311-*.so would
    # both load as walkfuzz._native, and the interpreter's own tag wins even when stale
    module = target.name.split(".")[0]
    for other in (ROOT / "fuzz").glob(f"{module}.*.so"):
        if other != target:
            other.unlink()
    Path(out).replace(target)
    print(f"built {target.relative_to(ROOT)}")


def main(argv: list[str]) -> int:
    flavour = argv[1] if len(argv) > 1 else "plain"
    known = [*sorted(FLAVOURS), *TESTING_TARGETS, *unwind_flavours(), *UNWINDER_SETS,
             *SNAPSHOT_FLAVOURS]
    if flavour not in known:
        print(f"walkfuzz build: unknown flavour {flavour!r}; one of {known}", file=sys.stderr)
        return 2
    os.chdir(ROOT)
    for one in _unwinder_set(UNWINDER_SETS[flavour]) if flavour in UNWINDER_SETS else [flavour]:
        _build(one)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
