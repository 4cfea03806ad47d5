"""Live stress tests: each test runs one live stress (in a child process) and files its result
here; at the end of the session the controller writes ONE aggregated report of all of them
(walkfuzz.report.document: report.json/html/md) into $WALKFUZZ_STRESS_REPORT (default
reports/stress-tests). Works with and without pytest-xdist, on this machine (`-n N`) and over
gateways on other hosts (`--tx ssh=...`, `--tx socket=...`; docs/stress.md "On many
machines"): each worker sends its results, with the findings they stored and the host it ran
on, to the controller (the process without `workerinput`) with xdist's `workeroutput`, the
one channel that reaches back from any host; results of several hosts are reported per host
and summed (walkfuzz.targets.minivm.live.session)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from xdist.workermanage import parse_tx_spec_config

from walkfuzz.core.errors import UserError
from walkfuzz.report.document import host_info
from walkfuzz.targets.minivm.live.gateway_hosts import check_hosts
from walkfuzz.targets.minivm.live.session import (
    HOSTS_DIR,
    stored_findings,
    write_session_reports,
)

ROOT = Path(__file__).resolve().parents[2]
REPORT_DIR = Path(os.environ.get("WALKFUZZ_STRESS_REPORT", ROOT / "reports" / "stress-tests"))
OUTPUT_KEY = "walkfuzz_stress"  # this plugin's entry in a worker's workeroutput
CHECKOUT_VARIABLE = "WALKFUZZ_CHECKOUT"  # on a host: its checkout, if not at this one's path
# Run on a remote worker's gateway before xdist's worker code: into the host's checkout.
INTO_CHECKOUT = f"""
import os
here = channel.receive()
os.chdir(os.environ.get({CHECKOUT_VARIABLE!r}) or here)
"""
CHDIR_SECONDS = 60.0

# The results this process filed, and (on the controller) what each worker sent.
_RESULTS: list[dict[str, Any]] = []
_FROM_WORKERS = pytest.StashKey[list[tuple[dict[str, str | int], list[dict[str, Any]]]]]()
_STARTED = pytest.StashKey[float]()


def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    """Over other hosts' gateways (`--tx`, not popen): each one reachable and running this
    walkfuzz, or one line naming it, before xdist starts its workers there (its own error
    would be a traceback of execnet's)."""
    if not _is_controller(config) or not config.pluginmanager.has_plugin("xdist") or \
            not config.getoption("tx", None):
        return
    remote = [spec for spec in parse_tx_spec_config(config) if "popen" not in spec]
    try:
        check_hosts(remote)
    except UserError as err:
        raise pytest.UsageError(str(err)) from err


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """A worker on another host runs in that host's checkout: `WALKFUZZ_CHECKOUT` there
    (`//env:WALKFUZZ_CHECKOUT=DIR` in its spec), else this checkout's path. xdist leaves it in
    its spec's chdir, where it has copied this pytest (into a checkout, that copy would lie in
    the working tree and shadow the host's own pytest)."""
    if node.gateway.spec.popen:
        return
    channel = node.gateway.remote_exec(INTO_CHECKOUT)
    channel.send(str(ROOT))
    try:
        channel.waitclose(CHDIR_SECONDS)
    except Exception as err:  # execnet's RemoteError carries the remote traceback
        raise pytest.UsageError(f"--tx {node.gateway.spec}: no checkout to run in "
                                f"({str(err).strip().splitlines()[-1]}); set "
                                f"//env:{CHECKOUT_VARIABLE}=DIR") from err


def pytest_sessionstart(session: pytest.Session) -> None:
    if _is_controller(session.config):
        shutil.rmtree(REPORT_DIR / HOSTS_DIR, ignore_errors=True)  # a past session's hosts
        session.config.stash[_STARTED] = time.time()
        session.config.stash[_FROM_WORKERS] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """A worker is done: keep what it sent, naming the gateway it ran on."""
    sent = getattr(node, "workeroutput", {}).get(OUTPUT_KEY)
    if sent:
        doc = json.loads(sent)
        host = {**doc["host"], "gateway": str(node.gateway.spec).removeprefix(
            "execmodel=main_thread_only//")}
        node.config.stash[_FROM_WORKERS].append((host, doc["results"]))


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if not _is_controller(config):
        workeroutput: dict[str, Any] = config.workeroutput  # type: ignore[attr-defined]
        workeroutput[OUTPUT_KEY] = json.dumps({"host": host_info(), "results": _RESULTS})
        return
    hosts = list(config.stash.get(_FROM_WORKERS, []))
    if _RESULTS:
        hosts.append((host_info(), _RESULTS))
    if any(results for _, results in hosts):
        started = config.stash.get(_STARTED, time.time())
        # every host that ran tests is in it, also one whose tests filed no stress result
        paths = write_session_reports(REPORT_DIR, hosts, started)
        print(f"\nstress session report: {paths['html']}")


@pytest.fixture
def file_result(request: pytest.FixtureRequest) -> Any:
    """Call with a stress result to add it to the session report."""

    def file(result: dict[str, Any]) -> None:
        _RESULTS.append({"test": request.node.nodeid, **result,
                         "stored": stored_findings(result)})

    return file
