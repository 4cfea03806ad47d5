"""The hosts of a stress run over execnet gateways (walkfuzz.targets.minivm.live.gateways):
each gateway opened and asked which walkfuzz its host has (remote.HELLO), refused in one line
when it cannot be used, and named.

A host is named by its `WALKFUZZ_HOST_LABEL` (execnet's `//env:WALKFUZZ_HOST_LABEL=NAME`) or
its hostname; two gateways of one run with the same name are told apart by their gateway id
(`NAME-gw1`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import execnet

from walkfuzz import __version__
from walkfuzz.core.errors import MissingDependencyError, UserError, WalkfuzzError
from walkfuzz.targets.minivm.live.remote import HELLO

HELLO_SECONDS = 60.0  # a host that does not say who it is by then is not answering


class GatewayRunError(WalkfuzzError):
    """A run on a host failed other than by the user's options; the message names the host."""


@dataclass(eq=False)
class Host:
    """One gateway: its spec as given, the execnet gateway and channel, what it said it is."""

    spec: str
    gateway: execnet.Gateway
    channel: execnet.Channel
    hello: dict[str, Any]
    key: str = ""


def last_line(err: BaseException) -> str:
    """What went wrong, in one line (a remote error's text ends with it)."""
    text = str(err).strip()
    return text.splitlines()[-1] if text else type(err).__name__


def open_host(group: execnet.Group, spec: str) -> Host:
    """The gateway of `spec`, past the version check; UserError naming `spec` when it cannot
    be reached or runs another walkfuzz, MissingDependencyError when it has none."""
    try:
        gateway = group.makegateway(spec)
        channel = gateway.remote_exec(HELLO)
        hello: dict[str, Any] = channel.receive(HELLO_SECONDS)
    except Exception as err:  # execnet raises OSError, HostNotFound, ValueError, TimeoutError
        raise UserError(f"--tx {spec}: cannot reach the gateway: {last_line(err)}") from err
    if hello["version"] is None:
        raise MissingDependencyError(f"--tx {spec}: walkfuzz is not installed for "
                                     f"{hello['python']} on {hello['hostname']} (docs/stress.md, "
                                     "\"On many machines\")")
    if hello["version"] != __version__:
        raise UserError(f"--tx {spec}: {hello['hostname']} runs walkfuzz {hello['version']}, "
                        f"this is {__version__}; install the same version there")
    return Host(spec, gateway, channel, hello)


def name_hosts(hosts: list[Host]) -> None:
    """Each host's key: its label or hostname, with the gateway id where two share it."""
    names = [h.hello["label"] or h.hello["hostname"] for h in hosts]
    shared = Counter(names)
    for host, name in zip(hosts, names, strict=True):
        host.key = name if shared[name] == 1 else f"{name}-{host.gateway.id}"


def check_hosts(specs: list[str]) -> None:
    """Each gateway of `specs` reachable and running this walkfuzz (open_host's errors), and
    closed again: what a run over them checks before it starts, for runs that start the
    gateways themselves (pytest-xdist's)."""
    group = execnet.Group()
    try:
        for spec in specs:
            open_host(group, spec).channel.send(None)  # remote.HELLO: no run
    finally:
        group.terminate(timeout=5)
