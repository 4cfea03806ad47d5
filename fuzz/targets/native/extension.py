"""Loading an unwinder's extension of the native target (walkfuzz._unwind for libunwind,
walkfuzz._unwind_<name> for the others; fuzz/targets/native/unwinders.py names them), each built
apart from the core, so the core builds where an unwinder's library is absent.

It follows the core's flavour choice ($WALKFUZZ_NATIVE, walkfuzz.core.native): under `asan` (and
`sancov`, a sanitizer campaign's) it is the unwinder's asan module (walkfuzz._unwind_asan for
libunwind), the agent and the guard built with ASan+UBSan, so the sanitizer run of `make test`
covers the native tests and the worker processes they start; under any other flavour it is the
plain module (the unwinders' libraries carry no coverage instrumentation). One process loads
one unwinder: their unw_* and _Unwind_* symbols clash.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType

from walkfuzz.core import native
from walkfuzz.core.errors import MissingDependencyError, UserError
from walkfuzz.targets.native.unwinders import DEFAULT, UNWINDERS, Unwinder


def unwinder(name: str) -> Unwinder:
    """The registry's entry; UserError naming `name` and the known ones."""
    found = UNWINDERS.get(name)
    if found is None:
        raise UserError(f"unknown unwinder {name!r}; one of {', '.join(UNWINDERS)}")
    return found


def module_name(name: str = DEFAULT) -> str:
    """The extension the selected flavour uses for unwinder `name`."""
    u = unwinder(name)
    return u.asan_module if native.selected_flavour() in native.SANITIZED and u.asan \
        else u.module


def import_guarded(module: str, *, asan: bool) -> ModuleType:
    """Import an extension of the native target that holds its own copy of the guard (an
    unwinder's, the snapshot's); an `asan` one only with the ASan runtime loaded
    (MissingDependencyError). ImportError when it is not built."""
    if asan:
        native.require_asan_runtime(module)
    # Local: made global, its guard would stand in for the core's in a process that loads the
    # core after it.
    return native.import_extension(module, global_symbols=False)


def load(name: str = DEFAULT) -> ModuleType:
    """The compiled module (ffi, lib) of unwinder `name`; MissingDependencyError naming the
    module, why it is missing and how to build it."""
    u = unwinder(name)
    module = module_name(name)
    asan = module == u.asan_module
    try:
        return import_guarded(module, asan=asan)
    except ImportError as err:
        why = u.missing()
        if why is not None:  # nothing to build here: the reason is all there is to say
            raise MissingDependencyError(f"unwinder {name!r}: {why}") from err
        flavour = f"{u.flavour}-asan" if asan else u.flavour
        raise MissingDependencyError(
            f"unwinder {name!r}: {module} is not built ({err}); build it with python "
            f"fuzz/core/_build.py {flavour}{'  (CC=clang)' if asan else ''}"
        ) from err


def available() -> tuple[str, ...]:
    """The unwinders whose extension is built here, in the registry's order (found, not
    imported: a supervisor of several loads none of them)."""
    return tuple(name for name, u in UNWINDERS.items()
                 if u.missing() is None and importlib.util.find_spec(u.module) is not None)
