#!/usr/bin/env python3
"""The pip requirements of pyproject.toml, printed shell-quoted on one line: with `--build`, its
build-system requirements; else the project's dependencies and those of the extras named on
the command line, an extra that names the project itself (`walkfuzz[fuzz,hotspot]`) expanded.
`make` installs them before the one build of the package (`pip install --no-deps -e .`),
which an install of `.[dev]` would do a second time."""

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
        pyproject = tomllib.load(f)
    if sys.argv[1:] == ["--build"]:
        wanted = list(pyproject["build-system"]["requires"])
    else:
        wanted = requirements(pyproject["project"], sys.argv[1:])
    print(*map(shlex.quote, wanted))
