"""The package's shape (CONTRIBUTING.md, Layout): no import cycles, no import against the
layers, no module over MAX_LINES lines. The graph is tools/import_graph.py's, which counts
every import, inside functions and under TYPE_CHECKING too."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "fuzz"
TOOL = ROOT / "tools" / "import_graph.py"
MAX_LINES = 500


def _graph_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_import_cycles_and_no_import_against_the_layers() -> None:
    tool = _graph_tool()
    graph = tool.edges(tool.module_names(PACKAGE))
    assert len(graph) > 100  # the whole package was read
    assert tool.groups(graph) == []
    assert tool.layer_violations(graph) == []


def test_the_layer_check_finds_an_import_against_the_layers() -> None:
    tool = _graph_tool()
    graph = {"walkfuzz.core.errors": {"walkfuzz.triage.driver"}, "walkfuzz.triage.driver": set()}
    [line] = tool.layer_violations(graph)
    assert "walkfuzz.core.errors -> walkfuzz.triage.driver" in line
    assert tool.groups({"walkfuzz.a": {"walkfuzz.b"}, "walkfuzz.b": {"walkfuzz.a"}}) == [
        ["walkfuzz.a", "walkfuzz.b"]]


def test_the_tool_prints_its_verdict_and_exits_0() -> None:
    done = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no import cycles and no import against the layers" in done.stdout


def test_every_module_lies_in_a_layer_folder_and_is_short() -> None:
    tool = _graph_tool()
    for name in tool.module_names(PACKAGE):
        tool.layer(name)  # raises for a module outside every layer folder
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}
