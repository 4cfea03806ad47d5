"""Loading walkfuzz._snapshot, remote-memory mode's extension (fuzz/core/_build.py flavour
`snapshot`: libunwind's generic library and libdw, built apart from the core so that the core
builds where they are absent).

It follows the core's flavour choice ($WALKFUZZ_NATIVE, walkfuzz.core.native), as the native
target's unwinder extensions do: under `asan` (and `sancov`) it is walkfuzz._snapshot_asan, the
accessors, the capture and the guard built with ASan+UBSan; under any other flavour the plain
one.
"""

from __future__ import annotations

from types import ModuleType

from walkfuzz.core import native
from walkfuzz.core.errors import MissingDependencyError
from walkfuzz.targets.native.extension import import_guarded

MODULE = "walkfuzz._snapshot"
ASAN_MODULE = "walkfuzz._snapshot_asan"
BUILD_FLAVOURS = {MODULE: "snapshot", ASAN_MODULE: "snapshot-asan"}


def module_name() -> str:
    """The extension the selected flavour uses."""
    return ASAN_MODULE if native.selected_flavour() in native.SANITIZED else MODULE


def load() -> ModuleType:
    """The compiled module (ffi, lib); MissingDependencyError naming the module if absent."""
    name = module_name()
    try:
        return import_guarded(name, asan=name == ASAN_MODULE)
    except ImportError as err:
        raise MissingDependencyError(
            f"{name} is not built ({err}); build it with python fuzz/core/_build.py "
            f"{BUILD_FLAVOURS[name]}  (needs libunwind-dev and libdw-dev"
            f"{', CC=clang' if name == ASAN_MODULE else ''})") from err
