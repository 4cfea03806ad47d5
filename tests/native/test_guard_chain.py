"""A fault outside any guarded call still reaches the handler that was installed before the guard.

Each case runs in a child process: it installs a handler that records what reached it and exits,
makes one guarded call (which installs the guard over that handler), then faults unguarded.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import signal, sys
    from walkfuzz.core import guard
    from walkfuzz.core import native
    ffi, lib = native.load_testing()
    signo, siginfo, trigger, arg = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    if siginfo >= 0:
        assert lib.wf_guard_test_install_recording_handler(signo, siginfo) == 0
    assert isinstance(guard.read_word(0x10), guard.Fault)
    print("guarded fault caught", flush=True)
    getattr(lib, trigger)(ffi.cast("void *", arg))
    print("survived an unguarded fault", flush=True)
    """
)
NO_HANDLER = -1
RECORDED_EXIT, RECORDED_PLAIN_EXIT = 42, 43


def run_child(signo: int, siginfo: int, trigger: str, arg: int) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONFAULTHANDLER"}
    # Under the ASan flavour the ASan runtime would be the previous handler; keep it out, so the
    # handler this test installs (or the default action) is.
    env["ASAN_OPTIONS"] = ":".join(
        filter(None, [env.get("ASAN_OPTIONS"), "handle_segv=0:handle_sigbus=0:handle_sigill=0"
                                               ":handle_sigfpe=0"]))

    def no_core_dump() -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return subprocess.run(
        [sys.executable, "-c", CHILD, str(signo), str(siginfo), trigger, str(arg)],
        capture_output=True, text=True, env=env, timeout=60, preexec_fn=no_core_dump,
        check=False,
    )


@pytest.mark.parametrize(
    ("signo", "trigger", "arg", "code"),
    [
        (signal.SIGSEGV, "wf_guard_test_read", 0x30, 1),
        (signal.SIGILL, "wf_guard_test_illegal", 0, 2),
        (signal.SIGFPE, "wf_guard_test_divide_by_zero", 7, 1),
    ],
    ids=["SIGSEGV", "SIGILL", "SIGFPE"],
)
def test_unguarded_fault_reaches_previous_siginfo_handler(signo: int, trigger: str, arg: int,
                                                          code: int) -> None:
    child = run_child(signo, 1, trigger, arg)
    assert child.returncode == RECORDED_EXIT, child.stderr
    lines = child.stdout.splitlines()
    assert lines[0] == "guarded fault caught"
    recorded = lines[1].split()
    assert recorded[:3] == ["recorded", f"signo={int(signo)}", f"code={code}"]
    if signo == signal.SIGSEGV:
        assert recorded[3] == f"addr={arg:#x}"
    assert "survived" not in child.stdout


def test_unguarded_fault_reaches_previous_plain_handler() -> None:
    child = run_child(signal.SIGSEGV, 0, "wf_guard_test_read", 0x30)
    assert child.returncode == RECORDED_PLAIN_EXIT, child.stderr
    assert child.stdout.splitlines() == ["guarded fault caught",
                                         f"recorded signo={int(signal.SIGSEGV)} plain"]


def test_unguarded_fault_without_previous_handler_gets_the_default_action() -> None:
    child = run_child(signal.SIGSEGV, NO_HANDLER, "wf_guard_test_read", 0x30)
    assert child.returncode == -signal.SIGSEGV, child.stderr
    assert child.stdout.splitlines() == ["guarded fault caught"]
