"""Stress spread over execnet gateways, as on many machines (docs/stress.md "On many
machines"), with two socket gateways on this machine standing in for two hosts: `walkfuzz
stress --tx ... --tx ...` and the stress test session under `pytest --tx ... --tx ...`. Each
host's report is written, and the merged one's figures are the sums of the hosts' figures,
with every host in it."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.gateways import children, socket_servers
from walkfuzz.core.exit_status import CLEAN, FINDINGS, INTERRUPTED
from walkfuzz.targets.minivm.live.remote import CHILD_MODULE
from walkfuzz.targets.minivm.planted import build, planted_bug

pytestmark = pytest.mark.stress

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 600.0  # a cap for a run that hangs, far above what a busy machine takes
WALKS = 1000  # per host
SUMMED = ("requested", "delivered", "walked", "exact", "invalid", "faults", "hangs")


def report(path: Path) -> dict[str, Any]:
    """A report.json, valid under the run report's schema (the merged one too)."""
    doc: dict[str, Any] = json.loads((path / "report.json").read_text())
    schema = json.loads((ROOT / "reports" / "run.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    return doc


def host_reports(out: Path) -> dict[str, dict[str, Any]]:
    return {p.name: report(p) for p in sorted((out / "hosts").iterdir())}


def assert_sums(merged: dict[str, Any], hosts: dict[str, dict[str, Any]]) -> None:
    """Every summed figure of the merged report is the sum of the hosts' own, and the merged
    report has one counter per host with that host's figures."""
    counters = merged["counters"]
    assert counters["hosts"] == len(hosts)
    for name in SUMMED:
        assert counters[name] == sum(h["counters"][name] for h in hosts.values()), name
    classes = {c for h in hosts.values() for c in h["counters"]["invalid_by_class"]}
    for cls in classes:
        assert counters["invalid_by_class"][cls] == sum(
            h["counters"]["invalid_by_class"].get(cls, 0) for h in hosts.values()), cls
    for key, host in hosts.items():
        assert host["meta"]["host"]["label"] == key
        mine = counters[f"host {key}"]
        assert all(mine[k] == host["counters"][k] for k in ("walked", "invalid", "faults")), key


def test_walkfuzz_stress_over_two_gateways_merges_the_hosts(tmp_path: Path) -> None:
    walker = build(planted_bug("frame-size-off-by-one"), "plain")
    out = tmp_path / "out"
    with socket_servers(2, tmp_path) as servers:
        specs = [server.spec for server in servers]
        labelled = f"{specs[0]}//env:WALKFUZZ_HOST_LABEL=alpha"
        done = subprocess.run(
            [sys.executable, "-m", "walkfuzz.cli", "stress", "--walker", str(walker),
             "--walks", str(WALKS), "--duration", "60s", "--baseline", "0", "--seed", "7",
             "--tx", labelled, "--tx", specs[1], "--out", str(out)],
            capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert done.returncode == FINDINGS, done.stderr[-2000:]
    hosts = host_reports(out)
    assert set(hosts) == {"alpha", socket.gethostname()}
    assert hosts["alpha"]["meta"]["host"]["gateway"] == labelled
    seeds = {k: re.search(r"seed (\d+)", h["notes"][0]) for k, h in hosts.items()}
    assert {int(m.group(1)) for m in seeds.values() if m} == {7, 8}  # --seed, --seed + 1
    merged = report(out)
    assert_sums(merged, hosts)
    assert all(h["counters"]["walked"] >= WALKS for h in hosts.values())
    assert merged["counters"]["invalid"] > 0  # the planted walker is caught on both hosts
    per_host = {(k, g["signature"]): g["count"] for k, h in hosts.items() for g in h["findings"]}
    for group in merged["findings"]:
        counts = {k: n for (k, sig), n in per_host.items() if sig == group["signature"]}
        assert group["count"] == sum(counts.values()) and group["details"]["hosts"] == counts
        assert all(Path(e).is_file() and Path(e).is_relative_to(out / "hosts")
                   for e in group["examples"]), group["examples"]
    assert f"merged 2 hosts: walked {merged['counters']['walked']}" in done.stdout


def test_the_stress_session_over_two_gateways_reports_each_host_and_the_sum(
        tmp_path: Path) -> None:
    reports = tmp_path / "stress-tests"
    # Two cells of the matrix, one per gateway (xdist sends fewer tests than twice the workers
    # round robin); no path argument: without rsync, xdist refuses paths for remote workers.
    # The workers run in this checkout (the conftest's chdir), not in the spec's chdir, where
    # xdist copies pytest: the socket servers' folder.
    cells = "test_reference_walker_live and 100 and mixed and as-is and (signal or thread)"
    with socket_servers(2, tmp_path) as servers:
        specs = [server.spec for server in servers]
        tx = [f"--tx={spec}//env:WALKFUZZ_HOST_LABEL={name}"
              f"//env:WALKFUZZ_STRESS_WALKS={WALKS}" for spec, name in zip(specs, ("a", "b"),
                                                                          strict=True)]
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-m", "stress",
             "--dist", "load", *tx, "-o", "testpaths=tests/stress", "-k", cells],
            capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT,
            env={**os.environ, "WALKFUZZ_STRESS_REPORT": str(reports)})
    assert done.returncode == CLEAN, done.stdout[-3000:]
    assert not (ROOT / "pytest").exists() and not (ROOT / "_pytest").exists()
    hosts = host_reports(reports)
    assert set(hosts) == {"a", "b"}
    assert all(h["counters"]["tests"] == 1 and h["counters"]["walked"] >= WALKS
               for h in hosts.values())
    merged = report(reports)
    assert_sums(merged, hosts)
    assert merged["counters"]["tests"] == 2 and merged["counters"]["invalid"] == 0


def test_an_interrupt_stops_every_host_and_keeps_what_they_walked(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with socket_servers(2, tmp_path) as servers:
        run = subprocess.Popen(
            [sys.executable, "-m", "walkfuzz.cli", "stress", "--duration", "10m", "--baseline",
             "0", "--tx", servers[0].spec, "--tx", servers[1].spec, "--out", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        assert run.stderr is not None
        walking = set()
        while len(walking) < 2:  # each host says when it has walked its first samples
            line = run.stderr.readline()
            assert line, run.communicate(timeout=TIMEOUT)
            if line.strip().endswith(": walking"):
                walking.add(line.strip().removesuffix(": walking"))
        run.send_signal(signal.SIGTERM)  # a CI job's timeout; Ctrl-C takes the same way
        stdout, stderr = run.communicate(timeout=TIMEOUT)
        left = [pid for server in servers for pid in children(server.pid, CHILD_MODULE)]
    assert run.returncode == INTERRUPTED and "Traceback" not in stderr, stderr[-2000:]
    assert left == []  # no host's stress run goes on
    assert "merged 2 hosts" in stdout, stdout
    hosts = host_reports(out)
    assert set(hosts) == walking and len(hosts) == 2
    assert all(h["meta"]["status"] == "interrupted" and h["counters"]["walked"] > 0
               for h in hosts.values())
    merged = report(out)
    assert merged["meta"]["status"] == "interrupted"
    assert_sums(merged, hosts)
