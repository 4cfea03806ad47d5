"""The replies of the hosts of a stress run over execnet gateways, as they come: each host's
counts so far while it runs (one status line of all hosts, walkfuzz.engine.progress), then its
report. On Ctrl-C or SIGTERM here, every host still running is told to stop (remote.STOP) and
sends the report of what it walked until then; a host stopped before its run began has none.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

from walkfuzz.core.errors import UserError, WalkfuzzError
from walkfuzz.engine.interrupt import INTERRUPT_GRACE_SECONDS
from walkfuzz.engine.progress import Progress, human
from walkfuzz.targets.minivm.live.gateway_hosts import GatewayRunError, Host, last_line
from walkfuzz.targets.minivm.live.remote import STATUS, STOP
from walkfuzz.targets.minivm.live.runner import GRACE_SECONDS

Message = tuple[Host, dict[str, Any]]


def _pump(host: Host, messages: queue.Queue[Message]) -> None:
    """Everything `host` sends, onto `messages`, up to its reply (or the channel's end)."""
    while True:
        try:
            message: dict[str, Any] = host.channel.receive()
        except Exception as err:  # execnet: EOFError, RemoteError, OSError
            messages.put((host, {"error": f"the run ended without a report: {last_line(err)}",
                                 "user": False}))
            return
        messages.put((host, message))
        if STATUS not in message:
            return


def _checked(host: Host, reply: dict[str, Any]) -> dict[str, Any]:
    if "error" in reply:
        error = UserError if reply["user"] else GatewayRunError
        raise error(f"--tx {host.spec} ({host.key}): {reply['error']}")
    return reply


class Replies:
    """The hosts' replies by key, and what the status line shows meanwhile."""

    def __init__(self, hosts: list[Host], progress: Progress) -> None:
        self.hosts = hosts
        self.progress = progress
        self.replies: dict[str, dict[str, Any]] = {}
        self.status: dict[str, dict[str, Any]] = {}
        self.started = time.monotonic()
        self.messages: queue.Queue[Message] = queue.Queue()
        for host in hosts:
            threading.Thread(target=_pump, args=(host, self.messages), daemon=True).start()

    def waiting(self) -> list[Host]:
        return [host for host in self.hosts if host.key not in self.replies]

    def wait(self, timeout: float, stopping: bool = False) -> None:
        """Until every host replied (GatewayRunError naming those that did not in `timeout`
        seconds). `stopping`: a host that fails now was stopped before it walked, and is
        left out."""
        deadline = time.monotonic() + timeout
        while self.waiting():
            try:
                host, message = self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                names = ", ".join(f"--tx {h.spec} ({h.key})" for h in self.waiting())
                raise GatewayRunError(f"{names}: no report {timeout:.0f} s after "
                                      "it was due") from None
            if STATUS in message:
                self._show(host, message[STATUS])
                continue
            try:
                self.replies[host.key] = _checked(host, message)
            except WalkfuzzError as err:
                if not stopping:
                    raise
                self.replies[host.key] = {}
                self.progress.message(f"{host.key}: stopped with no report ({last_line(err)})")
                continue
            self.progress.message(f"{host.key}: {message['summary']}")

    def _show(self, host: Host, status: dict[str, Any]) -> None:
        if int(status["walked"]) and not int(self.status.get(host.key, {}).get("walked", 0)):
            self.progress.message(f"{host.key}: walking")
        self.status[host.key] = status
        line = "  ".join(f"{key}: walks {human(int(s['walked']))} invalid "
                         f"{human(int(s['invalid']))} faults {s['faults']} hangs {s['hangs']}"
                         for key, s in self.status.items())
        key = tuple((s["faults"], s["hangs"], s["signatures_stored"])
                    for s in self.status.values())
        self.progress.update(time.monotonic() - self.started, line, key)


def collect(hosts: list[Host], timeout: float) -> tuple[dict[str, dict[str, Any]], bool]:
    """Each host's reply, by key (none for a host stopped before it walked); whether the run
    was interrupted."""
    with Progress() as progress:
        replies = Replies(hosts, progress)
        try:
            replies.wait(timeout)
        except KeyboardInterrupt:
            for host in replies.waiting():
                host.channel.send(STOP)
            replies.wait(INTERRUPT_GRACE_SECONDS + GRACE_SECONDS, stopping=True)
            interrupted = True
        else:
            interrupted = any(r["interrupted"] for r in replies.replies.values())
    return {k: r for k, r in replies.replies.items() if r}, interrupted
