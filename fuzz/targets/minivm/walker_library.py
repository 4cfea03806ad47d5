"""Loading a walker library (a user's `--walker PATH.so`, a planted walker): the one way, and
the size of every error line a C call fills.

`load_walker` is wf_walker_load (dlopen, then every ASGST symbol the walker table needs) with
the checks around it: the path is a file, and a walker built for coverage feedback
(-fsanitize=fuzzer-no-link, `build-walker --flavour cov`), which calls libFuzzer's coverage
callbacks and reads its `__sancov_lowest_stack`, gets the runtime that defines them (atheris's
libFuzzer, loaded RTLD_GLOBAL) loaded first. So every flavour loads in every command.
`check_walker_library` runs it once up front, before a command starts on a library, so that a
bad one is one error line naming every missing symbol, not a worker that dies at start-up; it
leaves the runtime loaded, so C code of the same process that dlopens the library itself (a
live stress run: wf_live_run) finds it too.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from walkfuzz.core import native, sanitizer
from walkfuzz.core.errors import WalkerLibraryError
from walkfuzz.engine.child import run_child, walkfuzz_command

ELF_MAGIC = b"\x7fELF"
# Bytes of the buffer for every C call that fills an error line (`char *err, size_t errlen`):
# wf_walker_load's names the library path and every missing symbol, a dlerror quotes a path.
ERROR_LEN = 1024
LACKS = " lacks:"  # wf_walker_load's error line: "walker PATH lacks: SYMBOL SYMBOL ..."
# What a walker built with -fsanitize=fuzzer-no-link misses until libFuzzer is loaded.
CHECK_TIMEOUT = 120.0  # seconds for the child that loads a library under the sanitizer runtime
CHILD_PREFIX = "walker library check"
_NEEDS_LIBFUZZER = re.compile(r"undefined symbol: __(sanitizer_cov|sancov)")


def load_walker(path: str, core: native.Native | None = None) -> Any:
    """A new `wf_walker *` filled from the library at `path` by `core` (default: this
    process's, walkfuzz.core.native.load()); the caller keeps it alive. WalkerLibraryError names
    the library and what is wrong with it."""
    _require_file(path)
    ffi, lib = core or native.load()
    table = ffi.new("wf_walker *")
    err = ffi.new("char[]", ERROR_LEN)
    rc = lib.wf_walker_load(path.encode(), table, err, ERROR_LEN)
    if rc != 0 and _NEEDS_LIBFUZZER.search(ffi.string(err).decode(errors="replace")):
        native.load_libfuzzer()
        rc = lib.wf_walker_load(path.encode(), table, err, ERROR_LEN)
    if rc != 0:
        message = ffi.string(err).decode(errors="replace")
        raise WalkerLibraryError(message + _hidden_note(path, message))
    return table


def _hidden_note(path: str, message: str) -> str:
    """What to add to wf_walker_load's "lacks: SYMBOL ..." when the library defines those symbols
    but does not export them (hidden visibility, or local: `nm -D` lists none of them), which
    dlsym cannot tell from their absence; "" otherwise."""
    lacking = set(message.partition(LACKS)[2].split())
    if not lacking:
        return ""
    try:
        with open(path, "rb") as stream:
            table = ELFFile(stream).get_section_by_name(".symtab")
            hidden = sorted({s.name for s in table.iter_symbols() if s.name in lacking and
                             s["st_shndx"] != "SHN_UNDEF" and
                             (s["st_info"]["bind"] == "STB_LOCAL" or
                              s["st_other"]["visibility"] in ("STV_HIDDEN", "STV_INTERNAL"))}
                            if isinstance(table, SymbolTableSection) else ())
    except (OSError, ELFError):
        return ""
    if not hidden:
        return ""
    return (f"; {len(hidden)} of them are defined but hidden ({', '.join(hidden[:3])}"
            f"{', ...' if len(hidden) > 3 else ''}): give them default visibility (no "
            "-fvisibility=hidden or `#pragma GCC visibility push(hidden)` over them, or "
            "__attribute__((visibility(\"default\"))); the reference walker's sources: "
            "-D WF_REF_EXPORT)")


def _require_file(path: str, shown_as: str | None = None) -> None:
    """WalkerLibraryError unless `path` is a file: a folder or a missing path, said as such."""
    shown = shown_as or path
    if os.path.isdir(path):
        raise WalkerLibraryError(f"walker library {shown!r} is a directory, not a shared library "
                                 f"(build one with `walkfuzz build-walker SOURCE.c -o PATH.so`)")
    if not os.path.isfile(path):
        raise WalkerLibraryError(f"walker library {shown!r} does not exist")


def check_walker_library(path: str, shown_as: str | None = None,
                         sanitized: bool = False) -> Path:
    """The resolved library path; raises WalkerLibraryError naming what is wrong (naming the
    library `shown_as`, when given: build-walker checks a library under a temporary name).
    `sanitized`: loaded the way a sanitizer campaign's worker loads it, in a process started
    with the sanitizer runtime (a library built with ASan loads nowhere else)."""
    shown = shown_as or path
    _require_file(path, shown)
    library = Path(path).resolve()
    with library.open("rb") as f:
        if f.read(4) != ELF_MAGIC:
            raise WalkerLibraryError(f"walker library {shown!r} is not an ELF shared library")
    if sanitized:
        _check_in_sanitizer_process(library, shown)
        return library
    core = native.load()
    try:
        core.lib.wf_walker_unload(load_walker(str(library), core))
    except WalkerLibraryError as err:
        if shown_as is None:
            raise
        raise WalkerLibraryError(str(err).replace(str(library), shown_as)
                                 .replace(path, shown_as)) from None
    return library


def _check_in_sanitizer_process(library: Path, shown: str) -> None:
    """Load `library` in a child started as a sanitizer worker is (the runtime preloaded), with
    the plain core: the check needs no sanitizer build of the core."""
    env = {**os.environ, **sanitizer.environ(None), native.FLAVOUR_ENV: "plain"}
    done = run_child(walkfuzz_command(__name__, str(library), shown), env=env,
                     timeout=CHECK_TIMEOUT)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise WalkerLibraryError(last.removeprefix(f"{CHILD_PREFIX}: "))


def main(argv: list[str]) -> int:
    """`python -m walkfuzz.targets.minivm.walker_library LIBRARY SHOWN`: the child of
    _check_in_sanitizer_process; one error line and status 1 when the library does not load."""
    try:
        check_walker_library(argv[0], shown_as=argv[1])
    except WalkerLibraryError as err:
        print(f"{CHILD_PREFIX}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
