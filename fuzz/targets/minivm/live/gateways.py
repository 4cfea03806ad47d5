"""`walkfuzz stress --tx SPEC...`: one live stress run on each execnet gateway (pytest-xdist's
`--tx` grammar: `ssh=HOST//python=PATH`, `socket=HOST:PORT`, `popen`), their reports written
per host and summed into one (walkfuzz.report.merge).

Each gateway runs the whole run as given (`--duration`, `--walks` are per host) with seed
`--seed` + its position among the `--tx` flags, so the hosts sample different workloads; the
host's report names its seed. Code is not shipped: each host runs the walkfuzz installed for
the gateway's Python, and a version other than this one's is refused before anything runs
(walkfuzz.targets.minivm.live.gateway_hosts). Findings come back with the report and are
written under `OUT/hosts/KEY/`; the merged report in OUT points at them.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import execnet

from walkfuzz.core.errors import UserError
from walkfuzz.core.exit_status import INTERRUPTED
from walkfuzz.engine.run_report import write_run_report
from walkfuzz.findings.store import write_atomic
from walkfuzz.report.document import RunReport
from walkfuzz.report.merge import HOST_PREFIX, merge_reports
from walkfuzz.targets.minivm.live.gateway_hosts import Host, name_hosts, open_host
from walkfuzz.targets.minivm.live.gateway_replies import collect
from walkfuzz.targets.minivm.live.options import StressOptions
from walkfuzz.targets.minivm.live.runner import GRACE_SECONDS
from walkfuzz.targets.minivm.live.summary import verdict

HOSTS_DIR = "hosts"


def _moved(text: str, old: str, new: str) -> str:
    """`text` of JSON with every path under `old` moved under `new`."""
    return text.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])


def _write_host(out: Path, host: Host, reply: dict[str, Any]) -> RunReport:
    """The host's report and findings under OUT/hosts/KEY, their paths moved there."""
    host_dir = out / HOSTS_DIR / host.key
    root = reply["root"]
    for rel, data in reply["files"].items():
        path = host_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".json":
            data = _moved(data.decode(), root, str(host_dir)).encode()
        write_atomic(path, data)
    report = RunReport.from_json(json.loads(_moved(reply["report"], root, str(host_dir))))
    report.meta.host = {**report.meta.host, "label": host.key, "gateway": host.spec}
    write_run_report(host_dir, report)
    return report


def _judged(counters: dict[str, Any], hosts: int, max_invalid_rate: float | None) -> int:
    if int(counters.get("walked", 0)) == 0:
        raise UserError(f"no sample was walked on any of the {hosts} hosts")
    return verdict(counters, max_invalid_rate)


def stress_over_gateways(options: StressOptions, specs: list[str], out: Path,
                         command: list[str], max_invalid_rate: float | None) -> int:
    """Run `options` on every gateway of `specs`, write each host's report and the merged one
    into `out`; the exit status of the merged figures (as one run's)."""
    options.check()
    group = execnet.Group()
    hosts: list[Host] = []
    try:
        for spec in specs:
            hosts.append(open_host(group, spec))
        name_hosts(hosts)
        for i, host in enumerate(hosts):
            host.channel.send({"options": replace(options, seed=options.seed + i).to_json(),
                               "command": command})
            print(f"{host.key} ({host.spec}): started, seed {options.seed + i}")
        replies, interrupted = collect(
            hosts, (options.duration_ns + options.baseline_ns) / 1e9 + 2 * GRACE_SECONDS)
        ran = [(i, host) for i, host in enumerate(hosts) if host.key in replies]
        reports = [_write_host(out, host, replies[host.key]) for _, host in ran]
    finally:
        for host in hosts:  # ends the remote's wait for STOP, so its gateway exits at once
            host.channel.close()
        group.terminate(timeout=5)
    if not reports:
        print("interrupted before any host had walked", file=sys.stderr)
        return INTERRUPTED
    merged = merge_reports(reports, command, notes=[
        f"{host.key}: {host.spec}, seed {options.seed + i}, report "
        f"{HOSTS_DIR}/{host.key}/report.html" for i, host in ran])
    paths = write_run_report(out, merged)
    counters = merged.counters
    print(f"merged {len(reports)} hosts: " + ", ".join(
        f"{k} {counters.get(k, 0)}" for k in ("walked", "exact", "invalid", "faults", "hangs")))
    keys = [k.removeprefix(HOST_PREFIX) for k in counters if k.startswith(HOST_PREFIX)]
    print(f"report: {paths['html']} (hosts: {', '.join(keys)})")
    if interrupted:
        print("interrupted: the reports have the samples walked until then", file=sys.stderr)
        return INTERRUPTED
    return _judged(counters, len(reports), max_invalid_rate)
