"""Checks a user's walker library (`--walker PATH.so`) once, before a campaign starts on it.

The check is the one the harness makes (wf_walker_load: dlopen, then every ASGST symbol the
walker table needs), run here up front so that a bad library is one error line naming every
missing symbol, not a worker that dies at start-up. A walker built for coverage feedback
(-fsanitize=fuzzer-no-link) only loads once libFuzzer is in the process, as it is in a worker,
so libFuzzer is loaded first here too.
"""

from __future__ import annotations

from pathlib import Path

from walkfuzz import native
from walkfuzz.errors import WalkerLibraryError

ELF_MAGIC = b"\x7fELF"
ERRLEN = 1024


def check_walker_library(path: str) -> Path:
    """The resolved library path; raises WalkerLibraryError naming what is wrong."""
    library = Path(path).resolve()
    if not library.is_file():
        raise WalkerLibraryError(f"walker library {path!r} does not exist")
    with library.open("rb") as f:
        if f.read(4) != ELF_MAGIC:
            raise WalkerLibraryError(f"walker library {path!r} is not an ELF shared library")
    native.load_libfuzzer()
    ffi, lib = native.load()
    table = ffi.new("wf_walker *")
    err = ffi.new("char[]", ERRLEN)
    if lib.wf_walker_load(str(library).encode(), table, err, ERRLEN) != 0:
        raise WalkerLibraryError(ffi.string(err).decode(errors="replace"))
    lib.wf_walker_unload(table)
    return library



