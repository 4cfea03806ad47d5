#!/usr/bin/env python3
"""c_deps.py [NATIVE_DIR] — draw which C file of native/ (default) uses a function or a global
defined in which other, print every circle among them, and exit 1 if there is one.

A file A uses a file B when A names a function or a variable that B defines with external
linkage (a file-scope definition not marked `static`). Read from the sources, not the objects,
so it needs no build and sees every extension's files at once: comments, strings and
preprocessor lines are dropped, and at brace depth 0 a declaration ending in `{` after a
parameter list defines a function, one ending in `;` without `extern` or `typedef` defines
its declarators' variables. A name that several files define is an interface each extension
links one implementation of (the unwinder backends): using it is no use of any one of them.
A circle (files that use each other, directly or through others) is one line per strongly
connected group: its files, then each use inside it with the names it goes through. `-v`
prints every use.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "native"
# comments, string and character literals, preprocessor lines with their continuations
NOISE = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
                   r"|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.S | re.M)
TOKEN = re.compile(r"[A-Za-z_]\w*|->|[{}()\[\];=,.]")
# after these a name is a tag or a member, never a function or a global
NOT_A_USE = {"struct", "union", "enum", ".", "->"}
NOT_DEFINING = {"static", "extern", "typedef"}
ATTRIBUTES = {"__attribute__", "__asm__", "asm"}


def tokens(text: str) -> list[str]:
    return TOKEN.findall(NOISE.sub(" ", text))


def _without_attributes(statement: list[str]) -> list[str]:
    """`statement` less its `__attribute__((...))` and `asm("...")` parts."""
    out: list[str] = []
    skip_depth = -1
    depth = 0
    for i, token in enumerate(statement):
        if skip_depth < 0 and token in ATTRIBUTES and statement[i + 1:i + 2] == ["("]:
            skip_depth = depth
            continue
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
            if skip_depth >= 0 and depth == skip_depth:
                skip_depth = -1
                continue
        if skip_depth < 0:
            out.append(token)
    return out


def _declared_names(statement: list[str]) -> Iterator[str]:
    """The variables a file-scope declaration `statement` (ended by `;`, its initializers
    dropped) defines: each name followed by `=`, `,`, `;` or `[` outside parentheses."""
    depth = 0
    for i, token in enumerate(statement):
        if token in ("(", "["):
            depth += 1
        elif token in (")", "]"):
            depth -= 1
        elif depth == 0 and re.match(r"\w", token):
            following = statement[i + 1] if i + 1 < len(statement) else ";"
            if following in ("=", ",", ";", "["):
                yield token


def _function_name(statement: list[str]) -> str | None:
    """The name of the function whose body follows `statement`, or None (a type's body)."""
    if "(" not in statement or "=" in statement:
        return None
    depth = 0
    parameters = -1  # where the last parenthesized group at depth 0 opens: the parameter list
    for i, token in enumerate(statement):
        if token == "(":
            if depth == 0:
                parameters = i
            depth += 1
        elif token == ")":
            depth -= 1
    name = statement[parameters - 1] if parameters > 0 else ""
    return name if re.match(r"\w", name) else None


def definitions(toks: list[str]) -> set[str]:
    """The names `toks` (one file) defines with external linkage."""
    defined: set[str] = set()
    statement: list[str] = []
    depth = 0
    for token in toks:
        if depth > 0:
            depth += {"{": 1, "}": -1}.get(token, 0)
            continue
        if token == "{":
            clean = _without_attributes(statement)
            name = _function_name(clean)
            if name is not None:
                if not NOT_DEFINING & set(clean):
                    defined.add(name)
                statement = []
            else:
                statement.append("{}")  # a struct body or an initializer: the statement goes on
            depth = 1
        elif token == ";":
            clean = _without_attributes(statement)
            if clean and not NOT_DEFINING & set(clean):
                names = list(_declared_names(_before_initializers(clean)))
                defined.update(n for n in names if not _is_prototype(clean, n))
            statement = []
        else:
            statement.append(token)
    return defined


def _before_initializers(statement: list[str]) -> list[str]:
    """`statement` with each declarator's initializer (`= ...` up to the next `,` at depth 0)
    dropped, so that names in an initializer are not taken for declarators."""
    out: list[str] = []
    skipping = False
    depth = 0
    for token in statement:
        if token in ("(", "["):
            depth += 1
        elif token in (")", "]"):
            depth -= 1
        if token == "=" and depth == 0:
            skipping = True
            continue
        if skipping and token == "," and depth == 0:
            skipping = False
        if not skipping:
            out.append(token)
    return out


def _is_prototype(statement: list[str], name: str) -> bool:
    i = statement.index(name)
    return i + 1 < len(statement) and statement[i + 1] == "("


def graph(root: Path) -> dict[Path, dict[Path, set[str]]]:
    """file -> {file it uses: the names it uses of it}, over every .c file under `root`."""
    toks = {path: tokens(path.read_text()) for path in sorted(root.rglob("*.c"))}
    owner: dict[str, set[Path]] = {}
    for path, file_tokens in toks.items():
        for name in definitions(file_tokens):
            owner.setdefault(name, set()).add(path)
    # A name several files define is an interface with one implementation per extension (an
    # unwinder backend): a call through it goes through its header, as through a pointer.
    single = {name: paths.pop() for name, paths in owner.items() if len(paths) == 1}
    uses: dict[Path, dict[Path, set[str]]] = {path: {} for path in toks}
    for path, file_tokens in toks.items():
        named = {t for before, t in zip(["", *file_tokens], file_tokens, strict=False)
                 if before not in NOT_A_USE}
        for name in named & single.keys():
            if single[name] != path:
                uses[path].setdefault(single[name], set()).add(name)
    return uses


def circles(uses: dict[Path, dict[Path, set[str]]]) -> list[list[Path]]:
    """The strongly connected groups of more than one file, each sorted (import_graph's)."""
    return _import_graph().groups({node: set(used) for node, used in uses.items()})


def _import_graph() -> ModuleType:
    """tools/import_graph.py, the script beside this one, loaded as a module."""
    spec = importlib.util.spec_from_file_location("import_graph",
                                                  Path(__file__).with_name("import_graph.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    root = Path(args[0]) if args else DEFAULT_DIR
    sys.setrecursionlimit(10_000)
    uses = graph(root)

    def show(path: Path) -> str:
        return str(path.relative_to(root))

    if verbose:
        for path, used in uses.items():
            for other, names in sorted(used.items()):
                print(f"{show(path)} -> {show(other)}: {', '.join(sorted(names))}")
    found = circles(uses)
    for group in found:
        print("circle: " + ", ".join(show(p) for p in group))
        for path in group:
            for other, names in sorted(uses[path].items()):
                if other in group:
                    print(f"  {show(path)} -> {show(other)}: {', '.join(sorted(names))}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
