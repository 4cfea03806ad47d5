"""`walkfuzz stress --tx SPEC` refuses a gateway it cannot use in one line before any run:
one that cannot be reached, one whose host has another walkfuzz version, one without walkfuzz.
The stress tests under pytest-xdist refuse such a gateway in one line too. The runs over
gateways themselves are in tests/stress/test_gateways.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gateways import socket_servers
from walkfuzz import __version__
from walkfuzz.core.exit_status import BAD_INPUT, MISSING_TOOL

TIMEOUT = 120.0
ROOT = Path(__file__).resolve().parents[2]


def stress_over(*specs: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "walkfuzz.cli", "stress", "--walks", "100", "--duration",
            "5s", "--baseline", "0", "--out", str(cwd / "out")]
    for spec in specs:
        argv += ["--tx", spec]
    return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd)


def one_line(done: subprocess.CompletedProcess[str], status: int, *named: str) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == status, done.stderr[-2000:]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert all(text in lines[0] for text in named), lines[0]
    return lines[0]


def closed_port() -> int:
    """A port nothing listens on: bound, then closed again."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fake_walkfuzz(root: Path, body: str) -> dict[str, str]:
    """An environment whose Python imports a `walkfuzz` package made of `body` first."""
    (root / "walkfuzz").mkdir(parents=True)
    (root / "walkfuzz" / "__init__.py").write_text(body)
    return {"PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}


def test_a_gateway_that_cannot_be_reached_is_one_line_naming_it(tmp_path: Path) -> None:
    spec = f"socket=127.0.0.1:{closed_port()}"
    one_line(stress_over(spec, cwd=tmp_path), BAD_INPUT, spec, "cannot reach")
    assert not (tmp_path / "out").exists()


def test_a_spec_execnet_does_not_know_is_one_line(tmp_path: Path) -> None:
    one_line(stress_over("telnet=somewhere", cwd=tmp_path), BAD_INPUT, "telnet=somewhere")


def test_a_host_with_another_walkfuzz_version_is_refused(tmp_path: Path) -> None:
    env = fake_walkfuzz(tmp_path / "other", '__version__ = "0.0.0-elsewhere"\n')
    with socket_servers(1, tmp_path, env=env) as other, socket_servers(1, tmp_path) as same:
        done = stress_over(same[0].spec, other[0].spec, cwd=tmp_path)
    one_line(done, BAD_INPUT, other[0].spec, "0.0.0-elsewhere", __version__)
    assert not (tmp_path / "out").exists()


def test_a_host_without_walkfuzz_is_a_missing_tool(tmp_path: Path) -> None:
    env = fake_walkfuzz(tmp_path / "none", 'raise ImportError("no walkfuzz here")\n')
    with socket_servers(1, tmp_path, env=env) as servers:
        done = stress_over(servers[0].spec, cwd=tmp_path)
    one_line(done, MISSING_TOOL, servers[0].spec, "not installed")


def test_tx_is_refused_for_a_target_that_does_not_take_it(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "walkfuzz.cli", "stress", "--target",
                           "libunwind", "--tx", "socket=127.0.0.1:1"], capture_output=True,
                          text=True, timeout=TIMEOUT, cwd=tmp_path)
    one_line(done, BAD_INPUT, "--tx", "libunwind")


def test_the_stress_tests_refuse_a_gateway_that_cannot_be_reached(tmp_path: Path) -> None:
    """pytest-xdist's own error would be execnet's traceback, after a worker started."""
    spec = f"socket=127.0.0.1:{closed_port()}"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-m", "stress", "--dist",
         "load", "--tx", spec, "-o", "testpaths=tests/stress"], capture_output=True, text=True,
        timeout=TIMEOUT, cwd=ROOT)
    output = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, output[-2000:]
    assert "INTERNALERROR" not in output and "Traceback" not in output, output[-2000:]
    errors = [line for line in output.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1 and spec in errors[0] and "cannot reach" in errors[0], output
