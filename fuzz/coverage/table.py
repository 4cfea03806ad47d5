"""What `walkfuzz coverage` prints: the union of every corpus per walker source file (lines,
branches, functions, llvm-cov's figures), then a harness x file table of lines % / branches %,
then where the HTML and coverage.json are."""

from __future__ import annotations

from pathlib import Path

from walkfuzz.coverage.llvm import MEASURES, Figure, FileFigures
from walkfuzz.coverage.run import UNION, CoverageResult

TOTAL = "walker total"


def total(figures: list[FileFigures]) -> FileFigures:
    """Several files' figures added up, measure by measure."""
    return FileFigures(*(Figure(sum(getattr(f, m).covered for f in figures),
                                sum(getattr(f, m).count for f in figures)) for m in MEASURES))


def _short_names(files: list[str]) -> dict[str, str]:
    """A file's base name, or its whole name where two files share a base name."""
    bases = [Path(f).name for f in files]
    return {f: b if bases.count(b) == 1 else f for f, b in zip(files, bases, strict=True)}


def _rows(columns: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [columns, *rows]) for i in range(len(columns))]
    return ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in [columns, *rows]]


def _missing() -> FileFigures:
    return FileFigures(Figure(0, 0), Figure(0, 0), Figure(0, 0))


def union_table(result: CoverageResult) -> list[str]:
    names = _short_names(result.walker_files)
    figures = [result.union.get(f, _missing()) for f in result.walker_files]
    rows = [[names[f], *(getattr(fig, m).text() for m in MEASURES)]
            for f, fig in zip(result.walker_files, figures, strict=True)]
    rows.append([TOTAL, *(getattr(total(figures), m).text() for m in MEASURES)])
    everything = total(list(result.union.values()))
    rows.append(["all native code", *(getattr(everything, m).text() for m in MEASURES)])
    return _rows(["file", *MEASURES], rows)


def harness_table(result: CoverageResult) -> list[str]:
    names = _short_names(result.walker_files)
    columns = [names[f] for f in result.walker_files]

    def cells(figures: dict[str, FileFigures]) -> list[str]:
        found = [figures.get(f, _missing()) for f in result.walker_files]
        return [f"{f.lines.percent:.1f} / {f.branches.percent:.1f}"
                for f in [*found, total(found)]]

    rows = [[name, *cells(figures)] for name, figures in sorted(result.harnesses.items())]
    rows.append([UNION, *cells(result.union)])
    return _rows(["harness", *columns, TOTAL], rows)


def render(result: CoverageResult) -> str:
    """The whole printout of one coverage run."""
    harnesses = ", ".join(sorted(result.harnesses))
    inputs = sum(c.inputs for c in result.corpora)
    lines = [f"walkfuzz coverage: {result.walker} walker, {len(result.corpora)} corpora "
             f"({harnesses}), {inputs} inputs; union per file:"]
    if result.walker_files:
        lines += union_table(result)
        lines.append("per harness, lines % / branches %:")
        lines += harness_table(result)
    lines += [f"note: {note}" for note in result.notes]
    lines.append(f"html: {result.html}  json: {result.json_file}")
    return "\n".join(lines)
