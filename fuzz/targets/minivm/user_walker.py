"""Building user walker libraries for the simulated VM: the example walker the package ships
(examples/walker/example_walker.c) and any walker a user writes (`walkfuzz build-walker`).

A walker library is C sources compiled against native/include (asgst.h for the API, wf_vm.h
for the VM it walks) into a shared library that wf_walker_load can dlopen. Four flavours:

  plain  clang (or $CC), -O2 -g: no coverage instrumentation
  cov    clang (or $CLANG) -fsanitize=fuzzer-no-link: `walkfuzz fuzz` gets coverage feedback
         from the walker's own branches; it needs libFuzzer's coverage runtime, which
         walkfuzz.targets.minivm.walker_library loads into whatever process loads the walker
  asan   clang ASan + UBSan + fuzzer-no-link: for `walkfuzz fuzz --sanitizer`; it loads only
         in a process with the sanitizer runtime (walkfuzz.core.sanitizer), so it is checked
         in one
  srccov clang (or $CLANG) -fprofile-instr-generate -fcoverage-mapping: `walkfuzz coverage`
         reports the walker's own source files, line by line (its profile runtime is linked in)

All flavours default to the same compiler and flags but the instrumentation, so a fault
lands on the same source line in each and gets the same signature (walkfuzz.core.symbolize):
gcc and clang attribute some instructions to different lines (clang gives a load it merged
from two inlined copies no line at all, gcc keeps the line of one).

A library is built under a temporary name, loaded as --walker will load it, and only then
renamed to its path: a library that does not load never lands there.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from walkfuzz.core.errors import MissingDependencyError, UserError
from walkfuzz.core.paths import ROOT
from walkfuzz.targets.minivm.walker_library import check_walker_library

INCLUDE = ROOT / "native" / "include"
EXAMPLE_SOURCE = ROOT / "examples" / "walker" / "example_walker.c"
BUILD_DIR = ROOT / "build" / "walkers"
CFLAGS = ["-shared", "-fPIC", "-O2", "-g", "-std=gnu11", "-Wall", "-Wextra", "-Werror"]
# flavour: (compiler environment variable, default compiler, extra flags)
FLAVOURS: dict[str, tuple[str, str, list[str]]] = {
    "plain": ("CC", "clang", []),
    "cov": ("CLANG", "clang", ["-fsanitize=fuzzer-no-link"]),
    # the flags of the core's sanitizer build (fuzz/core/_build.py): it loads into the
    # workers of `walkfuzz fuzz --sanitizer`, and nowhere without the ASan runtime
    "asan": ("CLANG", "clang", ["-fsanitize=address,undefined,fuzzer-no-link",
                                "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]),
    # The profile goes where $LLVM_PROFILE_FILE says (walkfuzz coverage sets it); loaded
    # anywhere else (build-walker's load check, a fuzz run), nowhere rather than into the
    # current folder's default.profraw.
    "srccov": ("CLANG", "clang", ["-fprofile-instr-generate=/dev/null", "-fcoverage-mapping"]),
}


def _compiler(flavour: str) -> list[str]:
    variable, default, _ = FLAVOURS[flavour]
    command = shlex.split(os.environ.get(variable) or default)
    if not command:
        raise UserError(f"${variable} names no compiler (it is blank)")
    if shutil.which(command[0]) is None:
        given = f"from ${variable}={os.environ[variable]!r}" if os.environ.get(variable) else \
            f"the default; set ${variable} to use another"
        raise MissingDependencyError(
            f"compiler {command[0]!r} not found on PATH ({given}), needed for the {flavour} "
            "flavour of a walker library")
    return command


def build_walker(sources: Sequence[Path], out: Path, flavour: str = "plain",
                 extra_flags: Sequence[str] = (), check: bool = True) -> Path:
    """Compile `sources` into the walker library `out` and check that it loads as a walker;
    WalkerLibraryError (nothing written to `out`) when it does not. `check=False` builds a
    library meant not to load (the loader's own tests: a walker missing a symbol)."""
    if flavour not in FLAVOURS:
        raise UserError(f"unknown walker flavour {flavour!r}; one of {sorted(FLAVOURS)}")
    for source in sources:
        if not source.is_file():
            raise UserError(f"walker source {str(source)!r} does not exist")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")  # atomic: parallel builds are safe
    command = [*_compiler(flavour), *CFLAGS, *FLAVOURS[flavour][2], *extra_flags,
               f"-I{INCLUDE}", *map(str, sources), "-o", str(tmp)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tmp.unlink(missing_ok=True)
        first = (result.stderr.strip().splitlines() or ["no compiler output"])[0]
        raise UserError(f"building walker {out.name!r} failed: {first}")
    try:
        if check:
            check_walker_library(str(tmp), shown_as=str(out), sanitized=flavour == "asan")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(out)
    return out


def example_walker(flavour: str = "plain") -> Path:
    """The example walker library of `flavour`, built if missing or stale."""
    out = BUILD_DIR / f"example-walker-{flavour}.so"
    inputs = [EXAMPLE_SOURCE, *INCLUDE.glob("*.h"), Path(__file__)]
    if out.exists() and out.stat().st_mtime >= max(p.stat().st_mtime for p in inputs):
        return out
    return build_walker([EXAMPLE_SOURCE], out, flavour)


def main(argv: Sequence[str]) -> int:
    """`python -m walkfuzz.targets.minivm.user_walker [FLAVOUR...]`: build the example walker (make
    build)."""
    try:
        for flavour in argv or ["plain"]:
            print(f"built {example_walker(flavour).relative_to(ROOT)}")
    except UserError as err:
        print(f"walkfuzz: example walker: {err}", file=sys.stderr)
        return err.exit_status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
