"""Loading walkfuzz._unwind, the libunwind target's own extension (built apart from the core,
so the core builds where libunwind is absent).

It follows the core's flavour choice ($WALKFUZZ_NATIVE, walkfuzz.core.native): under `asan` (and
`sancov`, a sanitizer campaign's) it is
walkfuzz._unwind_asan, the agent and the guard built with ASan+UBSan, so the sanitizer run of
`make test` covers the libunwind tests and the worker processes they start; under any other
flavour it is the plain walkfuzz._unwind (libunwind carries no coverage instrumentation).
"""

from __future__ import annotations

from types import ModuleType

from walkfuzz.core import native
from walkfuzz.core.errors import MissingDependencyError

MODULE = "walkfuzz._unwind"
ASAN_MODULE = "walkfuzz._unwind_asan"
BUILD_FLAVOURS = {MODULE: "unwind", ASAN_MODULE: "unwind-asan"}


def module_name() -> str:
    """The extension the selected flavour uses."""
    return ASAN_MODULE if native.selected_flavour() in native.SANITIZED else MODULE


def load() -> ModuleType:
    """The compiled module (ffi, lib); MissingDependencyError naming the module if absent."""
    name = module_name()
    if name == ASAN_MODULE:
        native.require_asan_runtime(name)
    try:
        # Local: it holds its own copy of the guard; made global, its guard would stand in for
        # the core's in a process that loads the core after it.
        return native.import_extension(name, global_symbols=False)
    except ImportError as err:
        raise MissingDependencyError(
            f"{name} is not built or libunwind is missing ({err}); build it with "
            f"python fuzz/core/_build.py {BUILD_FLAVOURS[name]}  (needs libunwind-dev"
            f"{', CC=clang' if name == ASAN_MODULE else ''})"
        ) from err
