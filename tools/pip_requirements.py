#!/usr/bin/env python3
"""The pip requirements of pyproject.toml's project: its dependencies and those of the extras
named on the command line, an extra that names the project itself (`walkfuzz[fuzz,hotspot]`)
expanded, printed shell-quoted on one line. `make` installs them before the one build of the
package (`pip install --no-deps -e .`), which an install of `.[dev]` would do a second time."""

from __future__ import annotations

import re
import shlex
import sys
import tomllib
from collections.abc import Iterator


def requirements(project: dict[str, object], wanted: list[str]) -> list[str]:
    extras = project.get("optional-dependencies", {})
    assert isinstance(extras, dict)
    own = re.compile(rf"{re.escape(str(project['name']))}\[([^\]]+)\]")
    seen: set[str] = set()

    def expand(reqs: list[str]) -> Iterator[str]:
        for req in reqs:
            named = own.fullmatch(req.replace(" ", ""))
            if named is None:
                yield req
                continue
            for extra in named.group(1).split(","):
                if extra not in seen:
                    seen.add(extra)
                    yield from expand(extras[extra])

    dependencies = project.get("dependencies", [])
    assert isinstance(dependencies, list)
    seen.update(wanted)
    return list(dict.fromkeys(expand([*dependencies, *(r for w in wanted for r in extras[w])])))


if __name__ == "__main__":
    with open("pyproject.toml", "rb") as f:
        print(*map(shlex.quote, requirements(tomllib.load(f)["project"], sys.argv[1:])))
