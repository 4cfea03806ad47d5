#!/usr/bin/env python3
"""import_graph.py [PACKAGE_DIR] — print every import cycle among the modules of the walkfuzz
package (default fuzz/) and every import against its layers, and exit 1 if there is one.

Layers, each importing only itself and those after it (CONTRIBUTING.md, Layout):
commands -> triage -> coverage -> targets -> engine -> report -> findings -> core. `walkfuzz.cli`
is of the commands layer, the package's own __init__ of core.

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
from typing import TypeVar

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


Node = TypeVar("Node", str, Path)


def groups(graph: dict[Node, set[Node]]) -> list[list[Node]]:
    """The strongly connected groups of more than one node (Tarjan), each sorted: modules
    here, C files for tools/c_deps.py."""
    index: dict[Node, int] = {}
    low: dict[Node, int] = {}
    stack: list[Node] = []
    on_stack: set[Node] = set()
    found: list[list[Node]] = []

    def visit(node: Node) -> None:
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


LAYERS = ("commands", "triage", "coverage", "targets", "engine", "report", "findings", "core")


def layer(module: str) -> str:
    """The layer a module belongs to (a module outside every layer folder is an error)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "core"
    if parts[1] == "cli":
        return "commands"
    if parts[1] in LAYERS:
        return parts[1]
    raise ValueError(f"{module} lies in no layer folder ({', '.join(LAYERS)})")


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module from a layer before the importer's, as `a -> b (A -> B)`."""
    found = []
    for module in sorted(graph):
        for target in sorted(graph[module]):
            a, b = layer(module), layer(target)
            if LAYERS.index(b) < LAYERS.index(a):
                found.append(f"{module} -> {target}   ({a} may not import {b})")
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else DEFAULT_DIR
    names = module_names(root)
    graph = edges(names)
    found = groups(graph)
    for group in found:
        cycle = shortest_cycle(graph, group)
        rest = [m for m in group if m not in cycle]
        print(" -> ".join(cycle) + (f"   (same cycle group: {', '.join(rest)})" if rest else ""))
    try:
        against = layer_violations(graph)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 1
    for line in against:
        print(line)
    if found or against:
        print(f"{len(found)} import cycle group(s), {len(against)} import(s) against the layers "
              f"among the modules of {root}", file=sys.stderr)
        return 1
    print(f"no import cycles and no import against the layers ({' -> '.join(LAYERS)}) among "
          f"the {len(names)} modules of {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
