#!/usr/bin/env python3
"""import_graph.py [PACKAGE_DIR] — print every import cycle among the modules of the walkfuzz
package (default fuzz/) and exit 1 if there is one.

Every import counts, wherever it is written: at the top of a module, inside a function, or
under `if TYPE_CHECKING:`. An import moved into a function still makes the two modules depend
on each other; it only hides the cycle from the interpreter, so this script does not let it.
Each group of modules that import each other (a strongly connected group) is one line: the
shortest cycle through its first module, `a -> b -> ... -> a`, then the group's other members.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "walkfuzz"
DEFAULT_DIR = Path(__file__).resolve().parent.parent / "fuzz"


def module_names(root: Path) -> dict[str, Path]:
    """`walkfuzz.x.y` -> its file, for every .py file under `root`."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join([PACKAGE, *parts])] = path
    return names


def _imported(node: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    """The dotted names an import statement names (each a module or a name in one)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".")
            base = base[:len(base) - node.level + (1 if is_package else 0)]
            origin = ".".join(base + ([node.module] if node.module else []))
        else:
            origin = node.module or ""
        yield origin
        yield from (f"{origin}.{alias.name}" for alias in node.names)


def edges(names: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports. `from walkfuzz.a import b` imports the module
    walkfuzz.a.b when there is one, else walkfuzz.a; importing a submodule also runs its
    package's __init__, which is no dependency worth a cycle, so packages count only when
    named themselves."""
    graph: dict[str, set[str]] = {name: set() for name in names}
    for name, path in names.items():
        tree = ast.parse(path.read_text(), str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            for target in _imported(node, name, is_package):
                if target in names and target != name:
                    graph[name].add(target)
        graph[name] = _drop_shadowed(graph[name])
    return graph


def _drop_shadowed(targets: set[str]) -> set[str]:
    """`from walkfuzz.a import b` yields both walkfuzz.a and walkfuzz.a.b; keep the module
    actually meant: a package is dropped when one of its submodules is imported by name."""
    return {t for t in targets if not any(o.startswith(t + ".") for o in targets)}


def groups(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(max(1000, 4 * len(graph)))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def shortest_cycle(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """The shortest import path from the group's first module back to itself, both ends
    named (breadth first, inside the group)."""
    start, members = group[0], set(group)
    previous: dict[str, str] = {}
    frontier = [start]
    while start not in previous:
        following = []
        for node in frontier:
            for succ in sorted(graph[node] & members):
                if succ not in previous:
                    previous[succ] = node
                    following.append(succ)
        frontier = following
    path = [start]
    while len(path) == 1 or path[-1] != start:
        path.append(previous[path[-1]])
    return path[::-1]


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else DEFAULT_DIR
    graph = edges(module_names(root))
    found = groups(graph)
    for group in found:
        cycle = shortest_cycle(graph, group)
        rest = [m for m in group if m not in cycle]
        print(" -> ".join(cycle) + (f"   (same cycle group: {', '.join(rest)})" if rest else ""))
    if found:
        print(f"{len(found)} import cycle group(s) among the modules of {root}", file=sys.stderr)
        return 1
    print(f"no import cycles among the modules of {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
