"""The report's figures as inline SVG, drawn by matplotlib: a line plot of a time series and a
histogram whose buckets are drawn to scale.

matplotlib rather than hand-written SVG: it picks readable, labelled ticks, formats large
numbers and log axes, and draws uneven buckets at their true widths. Figures are built on a
bare `Figure` (no pyplot: no global state, no GUI backend) and saved as SVG with text kept as
text, so the page stays self-contained (the figures bring no script, no external file).
matplotlib escapes the text it writes into the SVG, and mathtext is off, so a `$` in a title is
printed as it is.

The y range of a line plot fits its data (`fit_limits`): a coverage that goes from 685 to 688
fills the plot instead of being a flat line at the top of an axis from 0.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Sequence
from contextlib import AbstractContextManager

import matplotlib as mpl
from matplotlib import ticker
from matplotlib.axes import Axes
from matplotlib.figure import Figure

SIZE_IN = (5.0, 2.4)  # width, height in inches (~480 x 230 px in the page)
LINE_COLOUR, BAR_COLOUR = "#1f6feb", "#2da44e"
PAD_FRACTION = 0.05  # room above and below the data, of its span
# Time units a histogram's unit may name, in seconds: ticks then read "10 µs", "2 ms".
SECONDS_PER = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
# Edges spanning more than this ratio are drawn on a log axis.
LOG_SPAN = 100.0


def style() -> AbstractContextManager[None]:
    """matplotlib's settings for the report: SVG text kept as text, ids stable from run to run,
    no mathtext, small fonts."""
    return mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": "walkfuzz",
                           "text.parse_math": False, "font.size": 8.0, "axes.titlesize": 9.0})


def fit_limits(values: Sequence[float]) -> tuple[float, float]:
    """The y range of a line plot: the data's, plus PAD_FRACTION of its span on each side,
    never below 0 for data that is not. A constant series gets a range around its value."""
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    span = high - low
    pad = span * PAD_FRACTION if span else max(1.0, abs(high) * PAD_FRACTION)
    bottom = low - pad
    if low >= 0 > bottom:
        bottom = 0.0
    return bottom, high + pad


def time_unit(seconds: float) -> tuple[float, str]:
    """The divisor and unit of a time axis that reaches `seconds`: s, min or h."""
    if seconds >= 3 * 3600:
        return 3600.0, "h"
    if seconds >= 3 * 60:
        return 60.0, "min"
    return 1.0, "s"


def bucket_scale(edges: Sequence[float]) -> str:
    """How a histogram's x axis is drawn: "linear"; "log" for buckets from a positive edge
    spanning more than LOG_SPAN; "symlog" (linear from 0 up to the first positive edge, log
    above) for such buckets that start at 0."""
    positive = [e for e in edges if e > 0]
    if len(positive) < 2 or positive[-1] / positive[0] <= LOG_SPAN:
        return "linear"
    return "log" if edges[0] > 0 else "symlog"


def _figure(title: str) -> tuple[Figure, Axes]:
    fig = Figure(figsize=SIZE_IN, layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title, loc="left")
    ax.grid(True, color="#e5e5e5", linewidth=0.6)
    ax.set_axisbelow(True)
    return fig, ax


def line_figure(title: str, points: Sequence[tuple[float, float]], y_label: str,
                integer: bool = False) -> Figure:
    """(seconds, value) points against time; `y_label` names the quantity and its unit."""
    fig, ax = _figure(title)
    t_max = max((t for t, _ in points), default=0.0)
    divisor, unit = time_unit(t_max)
    ax.set_xlabel(f"time since start ({unit})")
    ax.set_ylabel(y_label)
    if points:
        ax.plot([t / divisor for t, _ in points], [v for _, v in points], color=LINE_COLOUR,
                linewidth=1.4, marker="." if len(points) < 3 else "")
    ax.set_xlim(0.0, max(t_max / divisor, 1e-9) if points else 1.0)
    ax.set_ylim(*fit_limits([v for _, v in points]))
    ax.yaxis.set_major_locator(ticker.MaxNLocator(nbins=5, integer=integer))
    ax.yaxis.set_major_formatter(ticker.EngFormatter(sep=""))
    return fig


def histogram_figure(title: str, edges: Sequence[float], counts: Sequence[int],
                     unit: str) -> Figure:
    """One bar per bucket [edges[i], edges[i+1]), as wide as the bucket on the x axis (a log
    axis for buckets spanning decades, bucket_scale); times in seconds with SI prefixes."""
    fig, ax = _figure(title)
    factor = SECONDS_PER.get(unit, 1.0)
    x = [e * factor for e in edges]
    lefts, widths = x[:-1], [b - a for a, b in itertools.pairwise(x)]
    bars = ax.bar(lefts, counts, width=widths, align="edge", color=BAR_COLOUR,
                  edgecolor="white", linewidth=0.4)
    # Each count written on its bar: a tail of a few samples is a bar too low to see.
    ax.bar_label(bars, labels=[f"{c:,}" if c else "" for c in counts], fontsize=6.0, padding=1)
    scale = bucket_scale(x)
    if scale == "symlog":
        ax.set_xscale("symlog", linthresh=min(e for e in x if e > 0), linscale=0.5)
    elif scale == "log":
        ax.set_xscale("log")
    if x:
        ax.set_xlim(x[0], x[-1])
    name = "time" if unit in SECONDS_PER else unit
    if scale == "log":
        name += " (log scale)"
    elif scale == "symlog":
        name += " (log scale; linear from 0 to the first bucket's end)"
    ax.set_xlabel(name)
    if unit in SECONDS_PER:
        ax.xaxis.set_major_formatter(ticker.EngFormatter(unit="s", sep=""))
    ax.set_ylabel("samples")
    ax.set_ylim(0.0, max(1.0, float(max(counts, default=0))) * (1 + 3 * PAD_FRACTION))
    ax.yaxis.set_major_locator(ticker.MaxNLocator(nbins=5, integer=True))
    ax.yaxis.set_major_formatter(ticker.EngFormatter(sep=""))
    return fig


def to_svg(fig: Figure) -> str:
    """The figure as an <svg> element to inline in HTML (no XML prolog)."""
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    text = out.getvalue()
    return text[text.index("<svg"):]


def line_plot(title: str, points: Sequence[tuple[float, float]], y_label: str,
              integer: bool = False) -> str:
    with style():  # text is laid out both when built and when saved
        return to_svg(line_figure(title, points, y_label, integer))


def bar_histogram(title: str, edges: Sequence[float], counts: Sequence[int], unit: str) -> str:
    with style():
        return to_svg(histogram_figure(title, edges, counts, unit))
