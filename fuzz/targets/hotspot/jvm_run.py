"""One JVM run with the agent loaded, watched: the agent writes a heartbeat line every 250 ms;
a JVM whose output stops growing for `hang_timeout` seconds, or that outlives its wall-clock
budget, is killed with SIGKILL (a JVM whose threads are stuck does not honour SIGTERM).
Ctrl-C or SIGTERM here ends the JVM (SIGTERM, then SIGKILL after INTERRUPT_GRACE_S) and the run
is what it did until then, marked interrupted.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.engine.child import PIPE, kill_group, start_child, terminate
from walkfuzz.targets.hotspot.jdk import Jdk
from walkfuzz.targets.hotspot.workload import CompiledWorkload

POLL_S = 0.2
SHUTDOWN_GRACE_S = 30.0  # JVM start-up, class loading and the final summary
INTERRUPT_GRACE_S = 5.0  # an interrupted JVM's shutdown before it is killed


class AgentLoadError(UserError):
    """The JVM refused the agent or died before the agent started; carries the agent's line."""


@dataclass
class JvmRun:
    returncode: int | None
    events: list[dict[str, object]]
    stdout: str
    stderr: str
    wall_s: float
    hs_err: Path | None
    flight: Path | None
    watchdog: str | None = None  # "unresponsive" or "overran" when the watchdog killed it
    last_tick: dict[str, object] = field(default_factory=dict)
    started_mono: float = 0.0  # time.monotonic() (CLOCK_MONOTONIC) when the JVM was started
    interrupted: bool = False  # Ctrl-C or SIGTERM ended it before its time

    @property
    def ended_mono(self) -> float:
        return self.started_mono + self.wall_s

    def of_type(self, kind: str) -> list[dict[str, object]]:
        return [e for e in self.events if e.get("type") == kind]

    @property
    def summary(self) -> dict[str, object] | None:
        found = self.of_type("summary")
        return found[-1] if found else None


def _read_events(path: Path) -> list[dict[str, object]]:
    events = []
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut by a crash
    return events


class TickReader:
    """The newest heartbeat of the agent's event file while the JVM writes it: reads only what
    was appended since the last look, whole lines only."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset = path, 0

    def latest(self) -> dict[str, object] | None:
        try:
            with self.path.open("rb") as events:
                events.seek(self.offset)
                appended = events.read()
        except OSError:
            return None
        whole = appended[:appended.rfind(b"\n") + 1]
        self.offset += len(whole)
        newest = None
        for line in whole.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("type") == "tick":
                newest = event
        return newest


def agent_options(options: Mapping[str, object]) -> str:
    for key, value in options.items():
        if "," in str(value) or "=" in str(value):
            raise UserError(f"agent option {key}={value!r} may not contain ',' or '='")
    return ",".join(f"{k}={v}" for k, v in options.items())


def run_jvm(
    jdk: Jdk, agent: Path, workload: CompiledWorkload, run_dir: Path, options: Mapping[str, object],
    *, threads: int, millis: int, iterations: int = 0, seed: int = 1,
    hang_timeout: float = 10.0, jvm_flags: tuple[str, ...] = (),
    on_tick: Callable[[dict[str, object]], None] | None = None,
) -> JvmRun:
    """Run the workload under the agent in run_dir; returns what happened, never raises on a
    crash (a crash is a result); raises AgentLoadError when the agent did not start. `on_tick`
    gets each heartbeat (a "tick" event: t, signals, calls, faults, ...) as it is written."""
    run_dir = run_dir.resolve()  # the JVM runs with run_dir as its working directory
    run_dir.mkdir(parents=True, exist_ok=True)
    out = run_dir / "agent.jsonl"
    for stale in [out, *run_dir.glob("hs_err_pid*.log")]:
        stale.unlink(missing_ok=True)
    opts = {"out": out, "methods": workload.manifest, "seed": seed, **options}
    argv = [str(jdk.java), "-Xmx256m", "-XX:-CreateCoredumpOnCrash",
            f"-XX:ErrorFile={run_dir}/hs_err_pid%p.log", *jvm_flags,
            f"-Dwf.plugins={workload.plugins}", f"-agentpath:{agent}={agent_options(opts)}",
            "-cp", str(workload.classes), "wf.Main", str(threads), str(millis), str(iterations),
            str(seed)]
    (run_dir / "command.txt").write_text(" ".join(argv) + "\n")
    budget = (millis / 1000.0 if iterations == 0 else 600.0) + SHUTDOWN_GRACE_S
    start = time.monotonic()
    proc = start_child(argv, stdout=PIPE, stderr=PIPE, cwd=run_dir)
    try:
        watchdog = _watch(proc, out, start, budget, hang_timeout, on_tick)
        interrupted = False
    except KeyboardInterrupt:
        watchdog, interrupted = None, True
        _stop(proc)
    stdout, stderr = proc.communicate()
    wall = time.monotonic() - start
    events = _read_events(out)
    if interrupted and not events:  # nothing to keep: the interrupt ends the command
        raise KeyboardInterrupt
    if not events:
        line = next((ln for ln in stderr.splitlines() if "walkfuzz-hotspot" in ln),
                    stderr.strip().splitlines()[-1] if stderr.strip() else "no output")
        raise AgentLoadError(f"JVM {jdk.java} did not start the agent: {line}")
    hs_errs = sorted(run_dir.glob("hs_err_pid*.log"))
    flight = opts.get("flight")
    ticks = [e for e in events if e.get("type") == "tick"]
    return JvmRun(proc.returncode, events, stdout, stderr, wall, hs_errs[0] if hs_errs else None,
                  Path(str(flight)) if flight else None, watchdog, ticks[-1] if ticks else {},
                  start, interrupted)


def _watch(proc: subprocess.Popen[str], out: Path, start: float, budget: float,
           hang_timeout: float, on_tick: Callable[[dict[str, object]], None] | None) -> str | None:
    """Wait for the JVM, handing each heartbeat to `on_tick`; kill it when its heartbeat stops
    or it overruns, and say which."""
    last_size, last_change = -1, start
    heartbeats = TickReader(out)
    while proc.poll() is None:
        time.sleep(POLL_S)
        now = time.monotonic()
        size = out.stat().st_size if out.exists() else 0
        if size != last_size:
            last_size, last_change = size, now
            tick = heartbeats.latest() if on_tick is not None else None
            if tick is not None and on_tick is not None:  # a heartbeat came: a status line
                on_tick(tick)
        watchdog = ("unresponsive" if now - last_change > hang_timeout
                    else "overran" if now - start > budget else None)
        if watchdog:
            kill_group(proc)
            return watchdog
    return None


def _stop(proc: subprocess.Popen[str]) -> None:
    """End an interrupted JVM: SIGTERM (its shutdown lets the agent finish its output; a
    terminal's Ctrl-C reached it already), SIGKILL if it is still there INTERRUPT_GRACE_S on."""
    terminate([proc], INTERRUPT_GRACE_S)
