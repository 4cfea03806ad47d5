"""Every figure the docs quote from a results file is in that file.

The convention (docs/performance.md, "Where a figure comes from"): a sentence that quotes
measured figures carries `[results: bench/results/<file>.md]` (several files: comma-separated),
and every number in that sentence must be a number of one of the named files, as the docs
round it. A reference in a paragraph directly followed by a table covers the table's rows as
well; a reference in a table row covers that row. Numbers in code spans, dates, hex values,
results file names and the reference itself are not figures. A figure that has no results
file names what made it instead, `[made by: COMMAND]`; this test reads only the first kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]

REFERENCE = re.compile(r"\[results: ([^\]]+)\]")
MADE_BY = re.compile(r"\[made by: [^\]]+\]")
# What is stripped before figures are read: not measurements, or names holding digits.
NOT_FIGURES = [
    re.compile(r"`[^`]*`"),
    re.compile(r"\]\([^)]*\)"),
    re.compile(r"bench/results/[\w.-]+"),
    re.compile(r"(?<![\w.])-\d+\.(?:md|json)"),
    re.compile(r"\d{4}-\d{2}-\d{2}"),
    re.compile(r"[+-]?0x[0-9a-fA-F]+"),
]
# A figure: digits, optionally grouped by thousands (`58 287`, `57,124`), a decimal part, and
# a k or M multiplier or a percent sign after it. A digit run glued to a letter before it
# (`r25`, `log2`) is a name.
FIGURE = re.compile(
    r"(?<![\w.])(\d{1,3}(?:[ ,\u2009\u202f]\d{3})+(?!\d)|\d+)(\.\d+)?(?:\s?([kM])\b)?(\s?%)?"
)
# A script's own output in a results file groups thousands with commas (`176,309`).
FILE_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?")
SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?]\)))\s+(?=[A-Z(*\[])")
# The first figure of a range takes the unit written after the second: `95-98%`, `14-23 k`.
RANGE_UNIT = re.compile(r"\s?(?:-|\u2013|\.\.)\s?[+-]?[\d.]+\s?([kM]\b)?(%)?")


@dataclass(frozen=True)
class Figure:
    text: str
    value: float
    decimals: int
    scale: float
    percent: bool


@dataclass(frozen=True)
class Quote:
    doc: Path
    line: int
    files: tuple[str, ...]
    figures: tuple[Figure, ...]


def figures_of(text: str) -> tuple[Figure, ...]:
    text = NOT_FIGURES[0].sub(" ", text)  # code spans first: a [made by: ...] quotes commands
    text = MADE_BY.sub(" ", REFERENCE.sub(" ", text))
    for pattern in NOT_FIGURES[1:]:
        text = pattern.sub(" ", text)
    found = []
    for m in FIGURE.finditer(text):
        whole, fraction, multiplier, percent = m.groups()
        ranged = RANGE_UNIT.match(text, m.end())
        if ranged and not (multiplier or percent):
            multiplier, percent = ranged.groups()
        digits = re.sub(r"[ ,\u2009\u202f]", "", whole)
        found.append(Figure(
            text=m.group(0).strip(),
            value=float(digits + (fraction or "")),
            decimals=len(fraction) - 1 if fraction else 0,
            scale={"k": 1e3, "M": 1e6}.get(multiplier or "", 1.0),
            percent=percent is not None,
        ))
    return tuple(found)


def referenced_files(text: str) -> tuple[str, ...]:
    """The files a text's references name; a reference in a code span is an example."""
    text = NOT_FIGURES[0].sub(" ", text)
    return tuple(name.strip() for m in REFERENCE.finditer(text) for name in m.group(1).split(","))


def blocks(lines: list[str]) -> list[tuple[int, list[str]]]:
    """Paragraphs, list items and tables outside code fences, each with its first line."""
    out: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 0
    fenced = False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
        is_table = line.startswith("|")
        new_item = re.match(r"\s*(?:[-*]|\d+\.) ", line) is not None
        was_table = bool(current) and current[-1].startswith("|")
        if fenced or line.startswith("```") or not line.strip() or new_item \
                or (current and is_table != was_table):
            if current:
                out.append((start, current))
            current = []
            if fenced or line.startswith("```") or not line.strip():
                continue
        if not current:
            start = number
        current.append(line)
    if current:
        out.append((start, current))
    return out


def quotes(doc: Path) -> list[Quote]:
    found: list[Quote] = []
    parsed = blocks(doc.read_text().splitlines())
    for index, (start, block) in enumerate(parsed):
        if block[0].startswith("|"):
            for offset, row in enumerate(block):
                if referenced_files(row):
                    found.append(Quote(doc, start + offset, referenced_files(row), figures_of(row)))
            continue
        following = parsed[index + 1] if index + 1 < len(parsed) else None
        table = following[1] if following and following[0] == start + len(block) + 1 \
            and following[1][0].startswith("|") else []
        for sentence in SENTENCE_END.split(" ".join(line.strip() for line in block)):
            files, figures = referenced_files(sentence), figures_of(sentence)
            # A caption without figures of its own is read through its table's rows.
            if files and (figures or not table):
                found.append(Quote(doc, start, files, figures))
        caption = referenced_files(" ".join(block))
        if caption and table:
            assert following is not None
            for offset, row in enumerate(table):
                figures = figures_of(row)
                if figures and not referenced_files(row) and not MADE_BY.search(row):
                    found.append(Quote(doc, following[0] + offset, caption, figures))
    return found


def file_numbers(name: str, root: Path) -> list[float]:
    path = root / name
    if not path.is_file():
        raise FileNotFoundError(f"results file {name!r} does not exist (under {root})")
    return [float(n.replace(",", "")) for n in FILE_NUMBER.findall(path.read_text())]


def in_file(figure: Figure, numbers: list[float]) -> bool:
    """The figure is one of the file's numbers as the docs round it (a % may be a ratio)."""
    tolerance = 0.5 * 10 ** -figure.decimals * (1 + 1e-9)
    for number in numbers:
        candidates = [number / figure.scale]
        if figure.percent:
            candidates.append(number * 100 / figure.scale)
        if any(abs(c - figure.value) <= tolerance for c in candidates):
            return True
    return False


def mismatches(docs: list[Path], root: Path) -> list[str]:
    wrong = []
    for doc in docs:
        for quote in quotes(doc):
            if not quote.figures:
                wrong.append(f"{doc.name}:{quote.line}: a reference to {quote.files} "
                             "covers no figure")
            numbers = [n for name in quote.files for n in file_numbers(name, root)]
            wrong += [f"{doc.name}:{quote.line}: {f.text!r} is in none of {quote.files}"
                      for f in quote.figures if not in_file(f, numbers)]
    return wrong


def test_every_quoted_figure_is_in_its_results_file() -> None:
    assert not mismatches(DOCS, ROOT)


def test_the_docs_quote_results_files() -> None:
    assert sum(len(quotes(doc)) for doc in DOCS) >= 20


RESULTS = """\
| group | case | value | unit |
|---|---|---|---|
| stress-10us | queue: walked, all | 67240.0 | samples |
| stress-10us | queue: delivered | 13861.6 | /CPU-s |
| stress-10us | queue: delivered | 0.45x limit |  |
| hs-fuzz | perturbed ASGCT calls | 1291021.0 | calls/s |

libunwind perturbed walks/s (2 procs): 176,309 (target >= 50,000)
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "r.md").write_text(RESULTS)
    return tmp_path


@pytest.mark.parametrize("text", [
    "Queue mode walked 67 240 samples, 0.45x of its limit [results: bench/results/r.md].",
    "It delivered 13 862 per CPU-s, 45% of the limit, 1.29 M calls/s"
    " [results: bench/results/r.md].",
    "Measured (`--seconds 3`, 2026-11-27) [results: bench/results/r.md]:\n\n"
    "| mode | delivered |\n|---|---|\n| queue | 13 861.6 |\n",
    "| queue | 67,240 walked [results: bench/results/r.md] |",
    "A script's own line: 176 309 walks/s, target 50k [results: bench/results/r.md].",
])
def test_figures_in_the_file_pass(tree: Path, text: str) -> None:
    doc = tree / "doc.md"
    doc.write_text(text)
    assert quotes(doc)
    assert mismatches([doc], tree) == []


@pytest.mark.parametrize("text, wrong", [
    ("Queue mode walked 67 241 samples [results: bench/results/r.md].", "67 241"),
    ("It delivered 0.46x of its limit [results: bench/results/r.md].", "0.46"),
    ("Measured [results: bench/results/r.md]:\n\n| mode | delivered |\n|---|---|\n"
     "| queue | 13 900 |\n", "13 900"),
    ("| queue | 1.30 M calls/s [results: bench/results/r.md] |", "1.30 M"),
])
def test_a_figure_not_in_the_file_fails(tree: Path, text: str, wrong: str) -> None:
    doc = tree / "doc.md"
    doc.write_text(text)
    [message] = mismatches([doc], tree)
    assert repr(wrong) in message and "r.md" in message


def test_a_figure_outside_a_referenced_sentence_is_not_read(tree: Path) -> None:
    doc = tree / "doc.md"
    doc.write_text("Walked 67 240 [results: bench/results/r.md]. Elsewhere 12 345 walks.\n")
    assert mismatches([doc], tree) == []


def test_a_missing_results_file_is_named(tree: Path) -> None:
    doc = tree / "doc.md"
    doc.write_text("Walked 67 240 [results: bench/results/gone.md].\n")
    with pytest.raises(FileNotFoundError, match=r"gone\.md"):
        mismatches([doc], tree)


def test_a_real_figure_edited_fails(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "performance.md").read_text()
    assert "| 13 862 |" in text
    doc = tmp_path / "performance.md"
    doc.write_text(text.replace("| 13 862 |", "| 13 962 |"))
    [message] = mismatches([doc], ROOT)
    assert "'13 962'" in message and "epyc-7.md" in message
