"""Inline SVG plots for the HTML report: a line plot of a time series and a bar histogram.

No JavaScript, no external files: the page must open from a CI artifact as it is. Every text
that goes into the SVG is escaped here, so a caller cannot forget to.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

WIDTH, HEIGHT = 480, 180
MARGIN_LEFT, MARGIN_BOTTOM, MARGIN_TOP, MARGIN_RIGHT = 64, 28, 22, 12


def _number(value: float) -> str:
    if abs(value) >= 1e6:
        return f"{value / 1e6:.3g}M"
    if abs(value) >= 1e4:
        return f"{value / 1e3:.3g}k"
    return f"{value:.4g}"


def _frame(title: str, x_label: str, y_max: float, x_max: float) -> list[str]:
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    bottom = MARGIN_TOP + plot_h
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">',
        f'<text x="{MARGIN_LEFT}" y="14" class="t">{escape(title)}</text>',
        f'<rect x="{MARGIN_LEFT}" y="{MARGIN_TOP}" width="{plot_w}" height="{plot_h}" '
        'fill="none" stroke="#999"/>',
        f'<text x="{MARGIN_LEFT - 4}" y="{MARGIN_TOP + 10}" text-anchor="end">'
        f"{escape(_number(y_max))}</text>",
        f'<text x="{MARGIN_LEFT - 4}" y="{bottom}" text-anchor="end">0</text>',
        f'<text x="{MARGIN_LEFT}" y="{bottom + 16}">0</text>',
        f'<text x="{WIDTH - MARGIN_RIGHT}" y="{bottom + 16}" text-anchor="end">'
        f"{escape(_number(x_max))} {escape(x_label)}</text>",
    ]


def line_plot(title: str, points: Sequence[tuple[float, float]], x_label: str = "s") -> str:
    """A polyline of (x, y) points scaled into the plot box; y axis starts at 0."""
    x_max = max((x for x, _ in points), default=0.0) or 1.0
    y_max = max((y for _, y in points), default=0.0) or 1.0
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    coords = " ".join(
        f"{MARGIN_LEFT + plot_w * x / x_max:.1f},{MARGIN_TOP + plot_h * (1 - y / y_max):.1f}"
        for x, y in points
    )
    parts = _frame(title, x_label, y_max, x_max)
    if points:
        parts.append(f'<polyline points="{coords}" fill="none" stroke="#1f6feb" '
                     'stroke-width="1.5"/>')
    parts.append("</svg>")
    return "\n".join(parts)


def bar_histogram(title: str, edges: Sequence[float], counts: Sequence[int], unit: str) -> str:
    """One bar per bucket, equal widths (buckets are often logarithmic), labelled at the ends."""
    y_max = float(max(counts, default=0)) or 1.0
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    parts = _frame(title, unit, y_max, float(edges[-1]) if edges else 0.0)
    bar_w = plot_w / max(1, len(counts))
    for i, count in enumerate(counts):
        h = plot_h * count / y_max
        label = f"[{_number(edges[i])}, {_number(edges[i + 1])}) {unit}: {count}"
        parts.append(
            f'<rect x="{MARGIN_LEFT + i * bar_w:.1f}" y="{MARGIN_TOP + plot_h - h:.1f}" '
            f'width="{max(1.0, bar_w - 1):.1f}" height="{h:.1f}" fill="#2da44e">'
            f"<title>{escape(label)}</title></rect>"
        )
    parts.append("</svg>")
    return "\n".join(parts)
