"""Loading a walker library (a user's `--walker PATH.so`, a planted walker): the one way, and
the size of every error line a C call fills.

`load_walker` is wf_walker_load (dlopen, then every ASGST symbol the walker table needs) with
the checks around it: the path exists, and a walker built for coverage feedback
(-fsanitize=fuzzer-no-link), which only loads once libFuzzer is in the process, gets libFuzzer
loaded first. `check_walker_library` runs it once up front, before a command starts on a
library, so that a bad one is one error line naming every missing symbol, not a worker that
dies at start-up.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from walkfuzz.core import native
from walkfuzz.core.errors import WalkerLibraryError

ELF_MAGIC = b"\x7fELF"
# Bytes of the buffer for every C call that fills an error line (`char *err, size_t errlen`):
# wf_walker_load's names the library path and every missing symbol, a dlerror quotes a path.
ERROR_LEN = 1024
# What a walker built with -fsanitize=fuzzer-no-link misses until libFuzzer is loaded.
_NEEDS_LIBFUZZER = re.compile(r"undefined symbol: __(sanitizer_cov|sancov)")


def load_walker(path: str, core: native.Native | None = None) -> Any:
    """A new `wf_walker *` filled from the library at `path` by `core` (default: this
    process's, walkfuzz.core.native.load()); the caller keeps it alive. WalkerLibraryError names
    the library and what is wrong with it."""
    if not os.path.isfile(path):
        raise WalkerLibraryError(f"walker library {path!r} does not exist")
    ffi, lib = core or native.load()
    table = ffi.new("wf_walker *")
    err = ffi.new("char[]", ERROR_LEN)
    rc = lib.wf_walker_load(path.encode(), table, err, ERROR_LEN)
    if rc != 0 and _NEEDS_LIBFUZZER.search(ffi.string(err).decode(errors="replace")):
        native.load_libfuzzer()
        rc = lib.wf_walker_load(path.encode(), table, err, ERROR_LEN)
    if rc != 0:
        raise WalkerLibraryError(ffi.string(err).decode(errors="replace"))
    return table


def check_walker_library(path: str) -> Path:
    """The resolved library path; raises WalkerLibraryError naming what is wrong."""
    library = Path(path).resolve()
    if not library.is_file():
        raise WalkerLibraryError(f"walker library {path!r} does not exist")
    with library.open("rb") as f:
        if f.read(4) != ELF_MAGIC:
            raise WalkerLibraryError(f"walker library {path!r} is not an ELF shared library")
    core = native.load()
    core.lib.wf_walker_unload(load_walker(str(library), core))
    return library
