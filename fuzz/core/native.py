"""Which build of the C core a process uses, and loading it: `ffi, lib = native.load()`.

The core is built in five flavours (fuzz/core/_build.py). A process uses one, chosen by the
environment variable `WALKFUZZ_NATIVE` unless a caller names one:

  plain   walkfuzz._native         tests, stress, replay, triage (the default)
  cov     walkfuzz._native_cov     campaigns; loads atheris's libFuzzer (RTLD_GLOBAL) first
  asan    walkfuzz._native_asan    the ASan/UBSan run; the ASan runtime must be LD_PRELOADed
  sancov  walkfuzz._native_sancov  sanitizer campaigns: ASan/UBSan and coverage; started with
                                   atheris's asan_with_fuzzer.so preloaded (walkfuzz.core.sanitizer)
  srccov  walkfuzz._native_srccov  source-based coverage reports

`make test` runs tests/native a second time with `WALKFUZZ_NATIVE=asan`, so code that takes its
module from `load()` is exercised under the sanitizers without knowing about them.

This module is the only place that imports a compiled extension: the core here, and the
native target's own extensions through `import_extension` (walkfuzz.targets.native.extension).

What only tests and benchmarks call (the crash guard's fault instruments, timing loops, the
queue's signal stress: native/testing/) is not in the core but in a testing extension per
flavour, `load_testing()`: walkfuzz._native_testing, _native_testing_cov, _native_testing_asan.
It is linked against its flavour's core and binds to the copy `load()` loaded, so a process
still has one VM and one guard.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, NamedTuple, get_args

from walkfuzz.core.errors import MissingDependencyError, UserError

Flavour = Literal["plain", "cov", "asan", "srccov", "sancov"]
FLAVOURS: tuple[Flavour, ...] = get_args(Flavour)
FLAVOUR_ENV = "WALKFUZZ_NATIVE"
DEFAULT_FLAVOUR: Flavour = "plain"
# A harness process runs libFuzzer, which stops at once when the code it runs reports no
# coverage: a harness started by hand, with $WALKFUZZ_NATIVE unset, takes the cov build.
HARNESS_FLAVOUR: Flavour = "cov"
MODULES: dict[Flavour, str] = {
    "plain": "walkfuzz._native",
    "cov": "walkfuzz._native_cov",
    "asan": "walkfuzz._native_asan",
    "srccov": "walkfuzz._native_srccov",
    "sancov": "walkfuzz._native_sancov",
}
TESTING_MODULES: dict[Flavour, str] = {
    "plain": "walkfuzz._native_testing",
    "cov": "walkfuzz._native_testing_cov",
    "asan": "walkfuzz._native_testing_asan",
}
SANITIZED: tuple[Flavour, ...] = ("asan", "sancov")  # built with ASan: its runtime comes first
LIBFUZZER_MODULE = "atheris.core_with_libfuzzer"
ASAN_RUNTIME_HINT = "LD_PRELOAD=$(clang -print-file-name=libclang_rt.asan-x86_64.so)"


class Native(NamedTuple):
    """A loaded flavour of the core: cffi's `ffi` and `lib` objects."""

    ffi: Any
    lib: Any


def flavour_named(value: str) -> Flavour:
    """`value` as a flavour; UserError naming it when it is none."""
    for flavour in FLAVOURS:
        if value == flavour:
            return flavour
    raise UserError(f"{FLAVOUR_ENV}={value!r} is not a native flavour; one of {FLAVOURS}")


def selected_flavour(environ: Mapping[str, str] | None = None,
                     unset: Flavour = DEFAULT_FLAVOUR) -> Flavour:
    """The flavour $WALKFUZZ_NATIVE names (in `environ`, default this process's), `unset`
    when it is unset or empty."""
    value = (os.environ if environ is None else environ).get(FLAVOUR_ENV) or unset
    return flavour_named(value)


def load(flavour: Flavour | None = None) -> Native:
    """The core in `flavour` (default: the selected one), imported once per process."""
    return _load(flavour or selected_flavour())


def load_testing(flavour: Flavour | None = None) -> Native:
    """The testing extension of `flavour` (default: the selected one): the functions only tests
    and benchmarks call (native/testing/). Loads the core first; `ffi` shares the core's types,
    so cdata of either module's `ffi` passes to either module's functions."""
    chosen = flavour or selected_flavour()
    if chosen not in TESTING_MODULES:
        raise UserError(f"the {chosen} core has no testing extension; one of {[*TESTING_MODULES]}")
    return _load_testing(chosen)


def module_path(flavour: Flavour | None = None) -> Path:
    """The shared library of a loaded flavour, for dlsym and symbolization."""
    chosen = flavour or selected_flavour()
    _load(chosen)
    return _module_file(MODULES[chosen])


def function_address(name: str, flavour: Flavour | None = None) -> int:
    """Address of the exported C function `name` itself (cffi's `ffi.addressof` gives a wrapper):
    the core's, or else its testing extension's (loaded for it)."""
    return _function_address(name, flavour or selected_flavour())


def _module_file(module: str) -> Path:
    module_file = sys.modules[module].__file__
    assert module_file is not None, f"{module} has no file"
    return Path(module_file)


def _exported(library: Path, name: str) -> int | None:
    try:
        pointer = ctypes.cast(getattr(ctypes.CDLL(str(library)), name), ctypes.c_void_p).value
    except AttributeError:
        return None
    assert pointer is not None, f"{name} resolved to NULL"
    return pointer


@cache
def _function_address(name: str, flavour: Flavour) -> int:
    pointer = _exported(module_path(flavour), name)
    if pointer is None and flavour in TESTING_MODULES:
        _load_testing(flavour)
        pointer = _exported(_module_file(TESTING_MODULES[flavour]), name)
    if pointer is None:
        raise UserError(f"the {flavour} core exports no function {name!r}")
    return pointer


@cache
def _load(flavour: Flavour) -> Native:
    if flavour == "cov":
        load_libfuzzer()
    if flavour in SANITIZED:
        require_asan_runtime(MODULES[flavour])
    # Global: a walker library may call the VM's functions (wf_vm.h) and resolves them here.
    module = _import_built(MODULES[flavour], flavour, global_symbols=True)
    return Native(module.ffi, module.lib)


@cache
def _load_testing(flavour: Flavour) -> Native:
    _load(flavour)  # first: the testing extension binds to this copy of the core
    target = "testing" if flavour == "plain" else f"testing-{flavour}"
    module = _import_built(TESTING_MODULES[flavour], target, global_symbols=False)
    return Native(module.ffi, module.lib)


def _import_built(name: str, target: str, *, global_symbols: bool) -> ModuleType:
    """Import an extension module, or say how to build it (fuzz/core/_build.py TARGET)."""
    try:
        return import_extension(name, global_symbols=global_symbols)
    except ModuleNotFoundError as err:
        if err.name != name:
            raise
        raise MissingDependencyError(
            f"native module {name} is not built "
            f"(run `make build`, or `python fuzz/core/_build.py {target}`)"
        ) from None


def import_extension(name: str, *, global_symbols: bool) -> ModuleType:
    """Import the extension module `name` with RTLD_NOW, and RTLD_GLOBAL when libraries loaded
    later must resolve its symbols (libFuzzer's coverage callbacks, the core's functions).
    A module an earlier import loaded RTLD_LOCAL is promoted with RTLD_NOLOAD."""
    flags = sys.getdlopenflags()
    mode = os.RTLD_NOW | (os.RTLD_GLOBAL if global_symbols else 0)
    sys.setdlopenflags(mode)
    try:
        module = importlib.import_module(name)
    finally:
        sys.setdlopenflags(flags)
    if global_symbols and module.__file__ is not None:
        ctypes.CDLL(module.__file__, mode=mode | os.RTLD_NOLOAD)
    return module


def libfuzzer_preloaded() -> bool:
    """Whether libFuzzer came with a preloaded runtime (a sanitizer campaign's worker:
    walkfuzz.core.sanitizer): then it is the one the process runs, not atheris's own copy.
    Asked of the preloaded libraries themselves: once atheris's copy is loaded globally, the
    process as a whole has the symbol either way."""
    preloaded = os.environ.get("LD_PRELOAD", "").replace(":", " ").split()
    for library in preloaded:
        try:
            handle = ctypes.CDLL(library, mode=os.RTLD_NOLOAD | os.RTLD_NOW)
        except OSError:
            continue
        if hasattr(handle, "LLVMFuzzerRunDriver"):
            return True
    return False


@cache
def load_libfuzzer() -> None:
    """atheris's libFuzzer, global: the cov flavour and walker libraries built for coverage
    (-fsanitize=fuzzer-no-link) call its coverage callbacks, and a harness runs it. Nothing
    when a preloaded runtime has libFuzzer already: a second copy would not see the coverage
    the instrumented code reports to the first."""
    if libfuzzer_preloaded():
        return
    try:
        import_extension(LIBFUZZER_MODULE, global_symbols=True)
    except ImportError as err:
        raise MissingDependencyError(
            f"the cov flavour needs atheris with libFuzzer (pip install atheris): {err}"
        ) from None


def load_custom_hooks(mutator: bool, crossover: bool) -> None:
    """atheris's custom mutator and crossover entry points, global, before its libFuzzer:
    libFuzzer binds LLVMFuzzerCustomMutator and LLVMFuzzerCustomCrossOver (weak symbols) when
    it is loaded, so loaded after it they would never be called."""
    if not (mutator or crossover):
        return
    if load_libfuzzer.cache_info().currsize:
        raise RuntimeError("custom mutators must be loaded before libFuzzer (load_libfuzzer)")
    for wanted, module in ((mutator, "atheris.custom_mutator"),
                           (crossover, "atheris.custom_crossover")):
        if wanted:
            import_extension(module, global_symbols=True)


def require_asan_runtime(module: str) -> None:
    """An ASan-built extension imported without the ASan runtime aborts the process instead of
    raising: refuse first, naming `module` and how to run it."""
    if not hasattr(ctypes.CDLL(None), "__asan_init"):
        raise MissingDependencyError(
            f"{module} needs the ASan runtime loaded first: run under {ASAN_RUNTIME_HINT}"
        )
