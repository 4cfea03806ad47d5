"""The one cffi build module (out-of-line API mode) for walkfuzz's C core.

Every `native/src/*.c` and `native/walkers/reference/*.c` is compiled into one extension.
The cdef is the text between `/* cffi:begin */` and `/* cffi:end */` markers in the headers
of `native/include/`, so a header stays the single place where a C declaration lives.

Flavours (module name, compiler, flags):
  plain   walkfuzz._native       cc     -O2             tests, stress, replay, triage
  cov     walkfuzz._native_cov   clang  fuzzer-no-link  campaigns (libFuzzer sees branches)
  srccov  walkfuzz._native_srccov clang source-based    `walkfuzz coverage`
  asan    walkfuzz._native_asan  clang  ASan+UBSan      the sanitizer run of tests/native

`pip install` builds `plain` through setup.py's cffi_modules; the others are built in place
by `python fuzz/_build.py FLAVOUR` (the Makefile does this), with CC=clang.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from cffi import FFI

ROOT = Path(__file__).resolve().parent.parent
NATIVE = ROOT / "native"
INCLUDE = NATIVE / "include"
SOURCE_DIRS = (NATIVE / "src", NATIVE / "walkers" / "reference")

WARNINGS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]
FLAVOURS: dict[str, tuple[str, list[str], list[str]]] = {
    # name: (module, extra compile args, extra link args)
    "plain": ("walkfuzz._native", ["-O2", "-g"], []),
    "cov": ("walkfuzz._native_cov", ["-O2", "-g", "-fsanitize=fuzzer-no-link"], []),
    "srccov": (
        "walkfuzz._native_srccov",
        ["-O1", "-g", "-fprofile-instr-generate", "-fcoverage-mapping"],
        ["-fprofile-instr-generate"],
    ),
    "asan": (
        "walkfuzz._native_asan",
        ["-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
         "-fno-sanitize-recover=undefined"],
        ["-fsanitize=address,undefined", "-shared-libasan"],
    ),
}

CDEF_BLOCK = re.compile(r"/\* cffi:begin \*/(.*?)/\* cffi:end \*/", re.S)


def headers() -> list[Path]:
    return sorted(INCLUDE.glob("*.h"))


def sources() -> list[Path]:
    return sorted(p for d in SOURCE_DIRS for p in d.glob("*.c"))


def cdef_text() -> str:
    """Concatenate every header's cffi block, in file-name order."""
    return "\n".join(
        block for header in headers() for block in CDEF_BLOCK.findall(header.read_text())
    )


def make_builder(flavour: str, absolute: bool = False) -> FFI:
    """setup.py wants paths relative to the project; FFI.compile() chdirs, so wants them absolute."""
    module, cflags, ldflags = FLAVOURS[flavour]

    def path(p: Path) -> str:
        return str(p if absolute else p.relative_to(ROOT))

    builder = FFI()
    builder.cdef(cdef_text())
    includes = "".join(f'#include "{h.name}"\n' for h in headers())
    builder.set_source(
        module,
        includes,
        sources=[path(p) for p in sources()],
        include_dirs=[path(INCLUDE)],
        extra_compile_args=[*WARNINGS, "-std=gnu11", "-fno-strict-aliasing", *cflags],
        extra_link_args=ldflags,
        libraries=["rt", "pthread", "dl"],
    )
    return builder


ffibuilder = make_builder(os.environ.get("WALKFUZZ_FLAVOUR", "plain"))


def main(argv: list[str]) -> int:
    flavour = argv[1] if len(argv) > 1 else "plain"
    if flavour not in FLAVOURS:
        print(f"walkfuzz build: unknown flavour {flavour!r}; one of {sorted(FLAVOURS)}",
              file=sys.stderr)
        return 2
    os.chdir(ROOT)
    builder = make_builder(flavour, absolute=True)
    # compile() places the .so under tmpdir by dotted name: walkfuzz/_native_x.so;
    # build in build/ then move it next to the sources of the package (fuzz/).
    out = builder.compile(tmpdir=str(ROOT / "build" / flavour), verbose=False)
    target = ROOT / "fuzz" / Path(out).name
    Path(out).replace(target)
    print(f"built {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
