"""report.html of a planted-bug campaign as a reader sees it: rendered by headless Chromium
(Debian's `chromium`, installed by `make test`'s set-up) at 1400 x 2000 px, the DOM read after
the page's script ran. The first screen holds the causes and a plot, before the per-signature
detail; no element shows a JSON object; each reproducer is a code block of its own, never
wrapped, with a copy button the script enabled."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.opt_outs import skip_if_opted_out
from tests.shared_runs import once
from walkfuzz.core.exit_status import FINDINGS
from walkfuzz.targets.minivm.planted import build, planted_bug

skip_if_opted_out("chromium", module=True)

ROOT = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT = 1400, 2000
TIMEOUT = 180.0
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}

# Added to a copy of the page, after its own script: where the sections are laid out and how
# the reproducers' blocks wrap, written into the DOM that --dump-dom prints.
PROBE = """<script>
const box = e => {
  if (!e) return null;
  const r = e.getBoundingClientRect();
  return [r.top, r.bottom];
};
const pres = [...document.querySelectorAll(".repro pre")].map(getComputedStyle);
document.body.dataset.layout = JSON.stringify({
  causes: box(document.querySelector("table.causes")),
  plot: box(document.querySelector(".plots svg")),
  signatures: box(document.getElementById("signatures")),
  wrap: pres.map(s => [s.whiteSpace, s.overflowX]),
});
</script>"""


class Element:
    def __init__(self, tag: str, attrs: dict[str, str | None]) -> None:
        self.tag, self.attrs = tag, attrs
        self.children: list[Element] = []
        self.own_text: list[str] = []

    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    def walk(self) -> list[Element]:
        return [self, *(e for c in self.children for e in c.walk())]

    def text(self) -> str:
        return "".join(self.own_text) + "".join(c.text() for c in self.children)


class Tree(HTMLParser):
    """The DOM Chromium printed, as a tree of elements."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.root = Element("#document", {})
        self.stack = [self.root]
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs))
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        while len(self.stack) > 1 and self.stack.pop().tag != tag:
            pass

    def handle_data(self, data: str) -> None:
        self.stack[-1].own_text.append(data)


def chromium(tmp_path: Path, page: Path, *args: str) -> str:
    exe = shutil.which("chromium")
    assert exe, "chromium is missing: `make test` installs it (or WALKFUZZ_SKIP_CHROMIUM=1)"
    done = subprocess.run(
        [exe, "--headless", "--disable-gpu", "--no-sandbox", f"--window-size={WIDTH},{HEIGHT}",
         f"--user-data-dir={tmp_path / 'profile'}", *args, page.as_uri()],
        capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short layouts campaign on a walker whose compiled frames walk wrong: invalid traces
    in several shapes, made once per session (tests/shared_runs.py)."""

    def make(folder: Path) -> dict[str, str]:
        walker = build(planted_bug("frame-size-off-by-one"), "cov")
        out = folder / "campaign"
        done = subprocess.run(
            [sys.executable, "-m", "walkfuzz.cli", "fuzz", "--harness", "layouts", "--walker",
             str(walker), "--runs", "300", "--out", str(out)],
            capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
        assert done.returncode == FINDINGS, done.stderr[-2000:]
        return {"out": str(out)}

    return Path(once(tmp_path_factory, "browser-campaign", make)["out"])


def test_the_first_screen_shows_causes_and_plots_then_readable_signatures(
        tmp_path: Path, campaign: Path) -> None:
    report = json.loads((campaign / "report.json").read_text())
    probe = tmp_path / "probe.html"
    probe.write_text((campaign / "report.html").read_text().replace("</body>", PROBE + "</body>"))
    tree = Tree(chromium(tmp_path, probe, "--dump-dom"))
    elements = tree.root.walk()
    body = next(e for e in elements if e.tag == "body")
    layout = json.loads(body.attrs["data-layout"] or "")

    # Causes, then a plot, both whole on the first screen; the per-signature detail after.
    assert None not in (layout["causes"], layout["plot"], layout["signatures"]), layout
    assert 0 <= layout["causes"][0] < layout["causes"][1] <= HEIGHT, layout
    assert layout["causes"][1] <= layout["plot"][0] < layout["plot"][1] <= HEIGHT, layout
    assert layout["plot"][1] <= layout["signatures"][0], layout
    causes = next(e for e in elements if e.tag == "table" and "causes" in e.classes())
    rows = [r for part in causes.children for r in part.children if r.tag == "tr"][1:]  # tbody
    assert len(rows) == len({(f["kind"], f["location"]) for f in report["findings"]}) >= 1
    assert "first difference" in causes.text() and "walked" in causes.text()

    # Every finding's fields are shown as fields: no element's text is a JSON object.
    for element in elements:
        own = "".join(element.own_text).strip()
        assert not (own.startswith("{") and own.endswith("}")), own
        assert '{"' not in own, own
    sections = [e for e in elements if "signature" in e.classes()]
    assert sorted(s.attrs["id"] or "" for s in sections) == \
        sorted(f"signature-{i}" for i in range(len(report["findings"])))
    assert any(e.tag == "dl" for s in sections for e in s.walk())

    # Each reproducer: a code block of its own, laid out unwrapped, with an enabled copy button.
    reproducers = {f["reproducer"] for f in report["findings"]}
    blocks = [e for e in elements if "repro" in e.classes()]
    assert len(blocks) == len(rows) + len(sections)
    for block in blocks:
        pre, button = block.children
        (code,) = pre.children
        assert (pre.tag, code.tag, button.tag) == ("pre", "code", "button")
        assert code.text() in reproducers and pre.text() == code.text()
        assert "copy" in button.classes() and "disabled" not in button.attrs
    assert layout["wrap"] == [["pre", "auto"]] * len(blocks)


def test_the_page_renders_at_1400_px(tmp_path: Path, campaign: Path) -> None:
    shot = tmp_path / "report.png"
    chromium(tmp_path, campaign / "report.html", f"--screenshot={shot}")
    head = shot.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", head[16:24]) == (WIDTH, HEIGHT)
