"""Sanitizer campaigns: which runtime a worker process preloads, the options it runs with, and
the sanitizer build of the core, built on demand.

A campaign under `--sanitizer address` (or `undefined`) loads the `sancov` flavour of the core
(fuzz/core/_build.py: ASan + UBSan + -fsanitize=fuzzer-no-link), so both sanitizers check every
input: one build serves both names. Its worker processes
start with atheris's `asan_with_fuzzer.so` preloaded: the ASan runtime and libFuzzer in one
library, loaded before Python, as atheris documents for native extensions. One library,
because the coverage callbacks of the instrumented code bind to the first definition the
dynamic loader finds: with the bare ASan runtime preloaded that is the runtime's empty stubs,
and libFuzzer would see no coverage at all. atheris then runs the preloaded libFuzzer
(walkfuzz.core.native.libfuzzer_preloaded).

Handler order in a worker (docs/guard.md, "Sanitizers"): ASan installs its SIGSEGV/SIGBUS
handlers when the runtime starts, libFuzzer chains to them when it starts, and the crash guard
installs its own over both at the first guarded call. A fault inside a guarded call is the
guard's (a `crash` finding); any other goes on to libFuzzer and then to ASan, which reports it.
A sanitizer report ends the process; the report goes to `<worker dir>/sanitizer.<pid>`
(log_path), where the supervisor reads it (walkfuzz.findings.sanitizer_report).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final, Literal, get_args

from walkfuzz.core.errors import MissingDependencyError, UserError
from walkfuzz.core.paths import ROOT

Sanitizer = Literal["address", "undefined"]
SANITIZERS: tuple[Sanitizer, ...] = get_args(Sanitizer)
FLAVOUR: Final = "sancov"  # the core's flavour every sanitizer campaign loads
RUNTIME = "asan_with_fuzzer.so"  # atheris builds it when it is installed from source
RUNTIME_ENV = "WALKFUZZ_SANITIZER_RUNTIME"
REPORT_NAME = "sanitizer"  # log_path: the runtime appends .<pid>
# The runtime's options in a campaign's workers:
#   allow_user_segv_handler=1  the guard may install its handlers over ASan's
#   handle_segv=1, handle_sigbus=1  a fault outside a guarded call is still reported
#   detect_leaks=0             the interpreter leaks at exit by design
#   symbolize=1                the report names function, file and line (the signature)
ASAN_OPTIONS = ("allow_user_segv_handler=1", "handle_segv=1", "handle_sigbus=1",
                "detect_leaks=0", "symbolize=1")
UBSAN_OPTIONS = ("print_stacktrace=1", "halt_on_error=1", "symbolize=1")
# What the asan core is compiled from: rebuilt when any is newer than the built library.
SOURCE_GLOBS = ("native/include/**/*.h", "native/src/**/*.[ch]", "native/walkers/reference/*.[ch]",
                "fuzz/core/_build.py")
BUILD_LOCK = ROOT / "build" / ".asan-build.lock"


def sanitizer_named(value: str) -> Sanitizer:
    """`value` as a sanitizer; UserError naming it when it is none."""
    for sanitizer in SANITIZERS:
        if value == sanitizer:
            return sanitizer
    raise UserError(f"--sanitizer {value!r} is not a sanitizer; one of {', '.join(SANITIZERS)}")


def runtime() -> Path:
    """The ASan runtime with libFuzzer linked in: $WALKFUZZ_SANITIZER_RUNTIME (one built
    against another clang), else atheris's; MissingDependencyError when absent."""
    given = os.environ.get(RUNTIME_ENV)
    if given:
        if not Path(given).is_file():
            raise MissingDependencyError(f"${RUNTIME_ENV}={given!r}: no such file (the ASan "
                                         f"runtime with libFuzzer, like atheris's {RUNTIME})")
        return Path(given)
    try:
        import atheris
    except ImportError as err:
        raise MissingDependencyError(f"sanitizer campaigns need atheris: {err}") from None
    path = Path(atheris.path()) / RUNTIME
    if not path.is_file():
        raise MissingDependencyError(
            f"{RUNTIME} not found in {path.parent} (atheris builds it when installed from "
            "source with clang: pip install --no-binary atheris atheris)")
    return path


def symbolizer() -> str | None:
    """llvm-symbolizer for the runtime's reports, if on PATH (under either name)."""
    return shutil.which("llvm-symbolizer") or shutil.which("llvm-symbolizer-14")


def environ(report_dir: Path | None) -> dict[str, str]:
    """The environment a sanitizer worker starts with (added to its own): the runtime preloaded,
    its options, reports into `report_dir`/sanitizer.<pid> (None: on stderr)."""
    log = [f"log_path={report_dir / REPORT_NAME}"] if report_dir is not None else []
    tool = symbolizer()
    symbolize = [f"external_symbolizer_path={tool}"] if tool else []
    return {
        "LD_PRELOAD": str(runtime()),
        "ASAN_OPTIONS": ":".join([*ASAN_OPTIONS, *log, *symbolize]),
        "UBSAN_OPTIONS": ":".join([*UBSAN_OPTIONS, *log, *symbolize]),
        "WALKFUZZ_NATIVE": FLAVOUR,
        # Python's own allocator hands out blocks of its arenas ASan knows nothing of: a
        # buffer the harness allocates in Python (cffi's ffi.new) would have no redzone
        "PYTHONMALLOC": "malloc",
    }


def _built(name: str) -> Path | None:
    found = sorted((ROOT / "fuzz").glob(f"{name}.*.so"))
    return found[-1] if found else None


def _stale(library: Path | None) -> bool:
    if library is None:
        return True
    newest = max(p.stat().st_mtime for g in SOURCE_GLOBS for p in ROOT.glob(g))
    return library.stat().st_mtime < newest


def ensure_built(targets: tuple[str, ...] = (FLAVOUR,),
                 say: Callable[[str], None] | None = None) -> None:
    """Build each of `targets` (fuzz/core/_build.py names: `sancov`, `unwind-asan`) that is
    missing or older than its sources, saying so through `say`; one build at a time."""
    modules = {FLAVOUR: "_native_sancov", "unwind-asan": "_unwind_asan"}
    if not any(_stale(_built(modules[t])) for t in targets):
        return
    if shutil.which("clang") is None:
        raise MissingDependencyError("clang not found on PATH (needed for the sanitizer build)")
    BUILD_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with BUILD_LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a campaign started alongside waits for this build
        for target in targets:
            if _stale(_built(modules[target])):
                _build(target, say or (lambda _: None))


def _build(target: str, say: Callable[[str], None]) -> None:
    started = time.monotonic()
    say(f"building the {target} core for the sanitizer campaign into fuzz/ (once; a minute or "
        "two)")
    env = {**os.environ, "CC": "clang", "LDSHARED": "clang -shared"}
    done = subprocess.run([sys.executable, str(ROOT / "fuzz" / "core" / "_build.py"), target],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"the {target} build failed: {last}")
    say(f"built {done.stdout.strip().removeprefix('built ')} in "
        f"{time.monotonic() - started:.0f} s")


def in_sanitizer_process() -> bool:
    """Whether this process runs the sanitizer build with its runtime preloaded."""
    import ctypes

    return (os.environ.get("WALKFUZZ_NATIVE") == FLAVOUR
            and hasattr(ctypes.CDLL(None), "__asan_init"))


def run_under_runtime(say: Callable[[str], None] | None = None) -> None:
    """Unless it does already, run this command again (exec, same arguments) as a sanitizer
    worker runs: the runtime preloaded, the sanitizer build of the core; a report goes to
    stderr and ends the process with the runtime's status (1)."""
    if in_sanitizer_process():
        return
    ensure_built(say=say or (lambda text: print(f"walkfuzz: {text}", file=sys.stderr)))
    os.execve(sys.executable, [sys.executable, "-m", "walkfuzz.cli", *sys.argv[1:]],
              {**os.environ, **environ(None)})
