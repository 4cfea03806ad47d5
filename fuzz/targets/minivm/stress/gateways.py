"""`walkfuzz stress --tx SPEC...`: one live stress run on each execnet gateway (pytest-xdist's
`--tx` grammar: `ssh=HOST//python=PATH`, `socket=HOST:PORT`, `popen`), their reports written
per host and summed into one (walkfuzz.report.stress_merge).

Each gateway runs the whole run as given (`--duration`, `--walks` are per host) with seed
`--seed` + its position among the `--tx` flags, so the hosts sample different workloads; the
host's report names its seed. Code is not shipped: each host runs the walkfuzz installed for
the gateway's Python (remote.HELLO says which version that is), and a version other than this
one's is refused before anything runs. Findings come back with the report and are written
under `OUT/hosts/KEY/`; the merged report in OUT points at them.

A host is named by its `WALKFUZZ_HOST_LABEL` (execnet's `//env:WALKFUZZ_HOST_LABEL=NAME`) or
its hostname; two gateways of one run with the same name are told apart by their gateway id
(`NAME-gw1`).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import execnet

from walkfuzz import __version__
from walkfuzz.core.errors import MissingDependencyError, UserError, WalkfuzzError
from walkfuzz.core.exit_status import INTERRUPTED, invalid_rate_fails, judged
from walkfuzz.findings.finding import write_atomic
from walkfuzz.report.document import RunReport
from walkfuzz.report.files import write_report
from walkfuzz.report.stress_merge import HOST_PREFIX, merge_stress_reports
from walkfuzz.targets.minivm.stress.options import StressOptions
from walkfuzz.targets.minivm.stress.remote import HELLO
from walkfuzz.targets.minivm.stress.runner import GRACE_SECONDS

HELLO_SECONDS = 60.0  # a host that does not say who it is by then is not answering


class GatewayRunError(WalkfuzzError):
    """A run on a host failed other than by the user's options; the message names the host."""


@dataclass
class Host:
    """One gateway: its spec as given, the execnet gateway and channel, what it said it is."""

    spec: str
    gateway: execnet.Gateway
    channel: execnet.Channel
    hello: dict[str, Any]
    key: str = ""


def _open(group: execnet.Group, spec: str) -> Host:
    """The gateway of `spec`, past the version check; UserError naming `spec` when it cannot
    be reached or runs another walkfuzz, MissingDependencyError when it has none."""
    try:
        gateway = group.makegateway(spec)
        channel = gateway.remote_exec(HELLO)
        hello: dict[str, Any] = channel.receive(HELLO_SECONDS)
    except Exception as err:  # execnet raises OSError, HostNotFound, ValueError, TimeoutError
        raise UserError(f"--tx {spec}: cannot reach the gateway: {_last_line(err)}") from err
    if hello["version"] is None:
        raise MissingDependencyError(f"--tx {spec}: walkfuzz is not installed for "
                                     f"{hello['python']} on {hello['hostname']} (docs/stress.md, "
                                     "\"On many machines\")")
    if hello["version"] != __version__:
        raise UserError(f"--tx {spec}: {hello['hostname']} runs walkfuzz {hello['version']}, "
                        f"this is {__version__}; install the same version there")
    return Host(spec, gateway, channel, hello)


def _last_line(err: BaseException) -> str:
    """What went wrong, in one line (a remote error's text ends with it)."""
    text = str(err).strip()
    return text.splitlines()[-1] if text else type(err).__name__


def _name(hosts: list[Host]) -> None:
    """Each host's key: its label or hostname, with the gateway id where two share it."""
    names = [h.hello["label"] or h.hello["hostname"] for h in hosts]
    shared = Counter(names)
    for host, name in zip(hosts, names, strict=True):
        host.key = name if shared[name] == 1 else f"{name}-{host.gateway.id}"


def _receive(host: Host, timeout: float) -> dict[str, Any]:
    try:
        reply: dict[str, Any] = host.channel.receive(timeout)
    except (execnet.RemoteError, EOFError, OSError, TimeoutError) as err:
        raise GatewayRunError(f"--tx {host.spec} ({host.key}): the run ended without a "
                              f"report: {str(err).strip()[-2000:]}") from err
    if "error" in reply:
        error = UserError if reply["user"] else GatewayRunError
        raise error(f"--tx {host.spec} ({host.key}): {reply['error']}")
    return reply


def _write_host(out: Path, host: Host, reply: dict[str, Any]) -> RunReport:
    """The host's report and findings under OUT/hosts/KEY, their paths moved there."""
    host_dir = out / "hosts" / host.key
    root = reply["root"]
    for rel, data in reply["files"].items():
        path = host_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".json":
            data = data.replace(root.encode(), str(host_dir).encode())
        write_atomic(path, data)
    report = RunReport.from_json(json.loads(reply["report"].replace(json.dumps(root)[1:-1],
                                                                    json.dumps(str(host_dir))[1:-1])))
    report.meta.host = {**report.meta.host, "label": host.key, "gateway": host.spec}
    write_report(host_dir, report)
    return report


def stress_over_gateways(options: StressOptions, specs: list[str], out: Path,
                         command: list[str], max_invalid_rate: float | None) -> int:
    """Run `options` on every gateway of `specs`, write each host's report and the merged one
    into `out`; the exit status of the merged figures (as one run's)."""
    options.check()
    group = execnet.Group()
    try:
        hosts = [_open(group, spec) for spec in specs]
        _name(hosts)
        for i, host in enumerate(hosts):
            host.channel.send({"options": replace(options, seed=options.seed + i).to_json(),
                               "command": command})
            print(f"{host.key} ({host.spec}): started, seed {options.seed + i}")
        timeout = (options.duration_ns + options.baseline_ns) / 1e9 + 2 * GRACE_SECONDS
        reports = []
        interrupted = False
        for host in hosts:
            reply = _receive(host, timeout)
            print(f"{host.key}: {reply['summary']}")
            interrupted |= reply["interrupted"]
            reports.append(_write_host(out, host, reply))
    except KeyboardInterrupt:
        print("interrupted: the hosts' runs are stopped, no merged report", file=sys.stderr)
        return INTERRUPTED
    finally:
        group.terminate(timeout=5)
    merged = merge_stress_reports(reports, command, notes=[
        f"{host.key}: {host.spec}, seed {options.seed + i}, report hosts/{host.key}/report.html"
        for i, host in enumerate(hosts)])
    paths = write_report(out, merged)
    counters = merged.counters
    print(f"merged {len(hosts)} hosts: " + ", ".join(
        f"{k} {counters.get(k, 0)}" for k in ("walked", "exact", "invalid", "faults", "hangs")))
    keys = [k.removeprefix(HOST_PREFIX) for k in counters if k.startswith(HOST_PREFIX)]
    print(f"report: {paths['html']} (hosts: {', '.join(keys)})")
    if interrupted:
        return INTERRUPTED
    walked = counters.get("walked", 0)
    invalid = counters.get("invalid", 0)
    assert isinstance(walked, int) and isinstance(invalid, int)
    if walked == 0:
        raise UserError(f"no sample was walked on any of the {len(hosts)} hosts")
    failed = any(counters.get(k, 0) for k in ("faults", "hangs", "queue_miscounts"))
    return judged(failed or invalid_rate_fails(invalid / walked if walked else 0.0,
                                               max_invalid_rate))
