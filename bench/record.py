"""The results file of a `make bench` run: the one source of every figure the docs quote.

`bench/runner.py --results DIR` writes DIR/<YYYY-MM-DD>-<tag>.json (every row and every script's
output, with the machine, the commit and the date) and a readable .md beside it with the same
content; <tag> names the machine (CPUs and CPU model, e.g. `2cpu-amd-epyc`). A second run on
the same day and machine gets `-2`, `-3`, ...: a results file is never overwritten. README,
docs and CHANGELOG quote figures from such a file and name it.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FORMAT_VERSION = 1


@dataclass
class ScriptOutput:
    """A benchmark run as a script (no measure()): its output, as printed."""

    name: str
    returncode: int
    output: list[str]


@dataclass
class BenchRun:
    """Everything one run of bench/runner.py measured."""

    command: list[str]
    started: datetime.datetime
    load_before: tuple[float, float, float]
    rows: list[dict[str, Any]] = field(default_factory=list)
    scripts: list[ScriptOutput] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # benchmark -> why, in one line


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown cpu"


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def machine() -> dict[str, Any]:
    return {
        "host": platform.node(),
        "cpu": _cpu_model(),
        "cpus": len(os.sched_getaffinity(0)),
        "os": _os_name(),
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def commit() -> dict[str, Any]:
    """The commit measured, and whether tracked files differed from it."""
    head = _git("rev-parse", "HEAD")
    changes = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": head or "unknown", "dirty": bool(changes) if changes is not None else None}


def machine_tag(info: dict[str, Any]) -> str:
    """`<cpus>cpu-<cpu model>`, lower case, letters, digits and dashes, at most 40 characters."""
    model = re.sub(r"\((r|tm)\)|\bcpu\b|\bprocessor\b|@.*$", " ", str(info["cpu"]).lower())
    slug = "-".join(re.findall(r"[a-z0-9]+", model))[:32].strip("-") or "cpu"
    return f"{info['cpus']}cpu-{slug}"


def free_stem(directory: Path, stem: str) -> str:
    """`stem`, or `stem-2`, `stem-3`, ... : the first with neither a .json nor a .md file."""
    candidate, n = stem, 1
    while (directory / f"{candidate}.json").exists() or (directory / f"{candidate}.md").exists():
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def document(run: BenchRun) -> dict[str, Any]:
    info = machine()
    return {
        "format": FORMAT_VERSION,
        "date": run.started.date().isoformat(),
        "started_at": run.started.isoformat(timespec="seconds"),
        "ended_at": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": info,
        "load_average": {"before": [round(x, 2) for x in run.load_before],
                         "after": [round(x, 2) for x in os.getloadavg()]},
        **commit(),
        "command": run.command,
        "seconds": run.seconds,
        "rows": run.rows,
        "scripts": [asdict(s) for s in run.scripts],
        "failed": run.failed,
    }


def _value(v: float) -> str:
    return f"{v:.1f}" if abs(v) >= 10 else f"{v:.3g}"


def markdown(doc: dict[str, Any], name: str) -> str:
    m = doc["machine"]
    dirty = " (with uncommitted changes)" if doc["dirty"] else ""
    lines = [
        f"# make bench, {doc['date']}, {m['host']}",
        "",
        f"- file: `{name}.json` (this page is generated from it)",
        f"- machine: {m['cpus']} CPUs, {m['cpu']}; {m['os']}, Linux {m['kernel']}, "
        f"Python {m['python']}",
        f"- load average (1, 5, 15 min): before {doc['load_average']['before']}, "
        f"after {doc['load_average']['after']}",
        f"- commit: `{doc['commit']}`{dirty}",
        f"- command: `{' '.join(doc['command'])}`; from {doc['started_at']} to {doc['ended_at']}",
        "",
        "| group | case | value | unit | vs baseline | target |",
        "|---|---|---|---|---|---|",
    ]
    for r in doc["rows"]:
        compared = f"{r['ratio']:.2f}x {r['baseline']}" if r.get("ratio") is not None else ""
        checked = f" **{r['verdict']}**" if r.get("verdict") else ""
        lines.append(f"| {r['group']} | {r['case']} | {_value(r['value'])} | {r['unit']} | "
                     f"{compared} | {r['target']}{checked} |")
    if doc.get("failed"):
        lines += ["", "## Failed benchmarks", ""]
        lines += [f"- {name}: {reason}" for name, reason in doc["failed"].items()]
    for script in doc["scripts"]:
        lines += ["", f"## {script['name']} (its own output, exit {script['returncode']})", "",
                  "```", *script["output"], "```"]
    return "\n".join(lines) + "\n"


def write(directory: Path, run: BenchRun) -> tuple[Path, Path]:
    """Write the run's .json and .md into `directory`; their paths."""
    doc = document(run)
    directory.mkdir(parents=True, exist_ok=True)
    stem = free_stem(directory, f"{doc['date']}-{machine_tag(doc['machine'])}")
    json_path, md_path = directory / f"{stem}.json", directory / f"{stem}.md"
    json_path.write_text(json.dumps(doc, indent=1) + "\n")
    md_path.write_text(markdown(doc, stem))
    return json_path, md_path
