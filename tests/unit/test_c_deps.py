"""No circle between the C files of native/: tools/c_deps.py draws which file uses a function or
a global another defines, and finds none that use each other, directly or through others; on a
made-up tree it finds the circle it should and passes over what is no use."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from walkfuzz.core.paths import ROOT

TOOL = ROOT / "tools" / "c_deps.py"


def c_deps() -> ModuleType:
    spec = importlib.util.spec_from_file_location("c_deps", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_circle_between_the_c_files_of_native() -> None:
    tool = c_deps()
    uses = tool.graph(ROOT / "native")
    assert len(uses) == len(list((ROOT / "native").rglob("*.c")))  # every .c file was read
    assert tool.circles(uses) == []


def test_a_circle_through_a_global_and_a_call_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text(
        "#include \"x.h\"\n/* b_call() in a comment is no use */\n"
        "int a_state = 1;\nstatic int a_private(void) { return 0; }\n"
        "void a_call(void) { b_call(); }\n")
    (tmp_path / "b.c").write_text(
        "struct a_state { int x; };\nint b_count __attribute__((unused)) = 2;\n"
        "void b_call(void) { const char *s = \"a_call\"; (void)s; }\n"
        "int b_read(void) { return a_state; }\n")
    (tmp_path / "c.c").write_text("static int a_private(void) { return 1; }\n"
                                  "int c_read(struct a_state *p) { return p->a_state; }\n")
    tool = c_deps()
    uses = tool.graph(tmp_path)
    a, b, c = (tmp_path / n for n in ("a.c", "b.c", "c.c"))
    assert uses[a] == {b: {"b_call"}} and uses[b] == {a: {"a_state"}} and uses[c] == {}
    assert tool.circles(uses) == [[a, b]]
    assert tool.main([str(tmp_path)]) == 1


def test_a_name_several_files_define_is_an_interface_not_a_use(tmp_path: Path) -> None:
    for backend in ("one", "two"):
        (tmp_path / f"{backend}.c").write_text(
            "int backend_walk(void) { return walk_record(); }\n")
    (tmp_path / "walk.c").write_text("int walk_record(void) { return 0; }\n"
                                     "int walk(void) { return backend_walk(); }\n")
    tool = c_deps()
    assert tool.circles(tool.graph(tmp_path)) == []
    assert tool.main([str(tmp_path)]) == 0
