"""Drawing the planned figures with matplotlib (imported here, lazily) into PNG and SVG files.

Figures are built with the Agg canvas directly, never through pyplot, so no display is needed and no global
backend is switched in a process (the sweep) that may use matplotlib for something else. Output is
deterministic: fixed sizes and dpi, fixed colours, SVG ids from a fixed salt and no date, so the same sweep
gives the same bytes. Names from sweep.json are drawn as plain text: mathtext is off for every label, so a
model called ``$x^2$`` is shown as typed, and legends take explicit labels, so a leading ``_`` is not
mistaken for matplotlib's "leave out of the legend" marker.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from jurist.errors import JuristError, StorageError
from jurist.plots.curve_plans import FigurePlan, Panel, Series

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOT_HINT = "pip install 'jurist[plot]'"
FORMATS = ("png", "svg")
DPI = 110
PANEL_SIZE = (5.0, 3.5)  # inches per panel of a grid
SINGLE_SIZE = (6.6, 4.2)  # inches of a one-panel figure, before the legend's rows
LEGEND_ROW = 0.28  # inches per legend row
MAX_TICKS = 9
DODGE = 0.012  # sideways nudge between lines with error bars, as a share of the steps' range
COLORS = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#7f7f7f",
    "#bcbd22",
)
LINE_STYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P")
RC: dict[str, Any] = {
    "svg.hashsalt": "jurist-plots",  # ids of clip paths etc. from a fixed salt, not a random one
    "svg.fonttype": "none",  # text stays text: smaller files, searchable labels
    "text.usetex": False,
    "text.parse_math": False,  # names from sweep.json are plain text, never $mathtext$
    "font.family": "DejaVu Sans",  # shipped with matplotlib: the same glyphs on every machine
    "font.size": 9.5,
    "axes.titlesize": 10.5,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
}
SAVE_METADATA: dict[str, dict[str, str | None]] = {"svg": {"Date": None}, "png": {}}


def check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    """The requested formats, checked: png and/or svg, each once, in the order given."""
    chosen = tuple(dict.fromkeys(fmt.strip().lower().lstrip(".") for fmt in formats if fmt.strip()))
    unknown = [fmt for fmt in chosen if fmt not in FORMATS]
    if unknown or not chosen:
        raise JuristError(f"--format: {', '.join(unknown) or 'nothing'} given; choose png, svg or png,svg")
    return chosen


def draw_figures(figures: Sequence[FigurePlan], out_dir: Path, formats: Sequence[str]) -> list[Path]:
    """Write every figure in every format into ``out_dir``; the paths written, in order."""
    if not figures:
        return []
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise JuristError(f"plots need matplotlib, which is not installed: {PLOT_HINT}") from None
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(out_dir, "the plot folder", exc) from None
    written: list[Path] = []
    with matplotlib.rc_context(cast(Any, RC)):  # matplotlib types keys as one Literal
        for plan in figures:
            figure = _figure(plan, Figure)
            FigureCanvasAgg(figure)
            for fmt in formats:
                written.append(_save(figure, out_dir / f"{plan.stem}.{fmt}", fmt))
    return written


def _save(figure: Figure, path: Path, fmt: str) -> Path:
    """Write through a temporary file, so an interrupted write never leaves half a picture."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        with open(partial, "wb") as handle:
            figure.savefig(handle, format=fmt, dpi=DPI, metadata=SAVE_METADATA[fmt])
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise StorageError(path, "a plot", exc) from None
    return path


def _grid_shape(panels: int) -> tuple[int, int]:
    columns = 1 if panels == 1 else 2 if panels in (2, 4) else 3
    return math.ceil(panels / columns), columns


def _legend_columns(plan: FigurePlan, labels: int) -> int:
    columns = _grid_shape(len(plan.panels))[1]
    return max(1, min(labels, 2 * columns if columns > 1 else 3))


def figure_inches(plan: FigurePlan) -> tuple[float, float]:
    """The figure's fixed size: panels, plus room for the title and each row of the legend."""
    rows, columns = _grid_shape(len(plan.panels))
    labels = len({series.label for panel in plan.panels for series in panel.series})
    legend_rows = math.ceil(labels / _legend_columns(plan, labels))
    width, height = SINGLE_SIZE if len(plan.panels) == 1 else (PANEL_SIZE[0] * columns, PANEL_SIZE[1] * rows)
    return width, height + 0.6 + LEGEND_ROW * (legend_rows + 1)


def _figure(plan: FigurePlan, figure_class: type[Figure]) -> Figure:
    rows, columns = _grid_shape(len(plan.panels))
    labels = list(dict.fromkeys(series.label for panel in plan.panels for series in panel.series))
    figure = figure_class(figsize=figure_inches(plan), dpi=DPI, layout="constrained")
    figure.suptitle(plan.title, fontweight="bold", parse_math=False)
    steps = sorted({p.step for panel in plan.panels for series in panel.series for p in series.points})
    span = float(steps[-1] - steps[0]) if len(steps) > 1 else 2.0
    handles: dict[str, Artist] = {}
    for k, panel in enumerate(plan.panels):
        axes = figure.add_subplot(rows, columns, k + 1)
        barred = [j for j, series in enumerate(panel.series) if _has_bars(series)]
        for j, series in enumerate(panel.series):
            # Lines with error bars are nudged apart sideways, so overlapping bars stay readable.
            shift = (barred.index(j) - (len(barred) - 1) / 2) * DODGE * span if j in barred else 0.0
            line = _draw_series(axes, series, f"curve-{k}-{j}", shift)
            handles.setdefault(series.label, line)
        _decorate(axes, panel, steps, span)
    legend = figure.legend(
        [handles[label] for label in labels],
        labels,
        loc="outside lower center",
        ncols=_legend_columns(plan, len(labels)),
        frameon=False,
        title=plan.caption,
        title_fontsize=8.5,
    )
    for text in [*legend.get_texts(), legend.get_title()]:
        text.set_parse_math(False)
    legend.get_title().set_color("#555555")
    return figure


def _has_bars(series: Series) -> bool:
    return any(point.below is not None for point in series.points)


def _draw_series(axes: Axes, series: Series, gid: str, shift: float) -> Artist:
    """The line with its markers, then the error bars of the points that have one."""
    color = COLORS[series.color % len(COLORS)]
    (line,) = axes.plot(
        [point.step + shift for point in series.points],
        [point.value for point in series.points],
        color=color,
        linestyle=LINE_STYLES[series.style % len(LINE_STYLES)],
        marker=MARKERS[series.style % len(MARKERS)],
        markersize=5,
        linewidth=1.8,
        zorder=3,
    )
    line.set_gid(gid)
    barred = [p for p in series.points if p.below is not None and p.above is not None]
    if barred:
        bars = axes.errorbar(
            [p.step + shift for p in barred],
            [p.value for p in barred],
            yerr=[[p.below or 0.0 for p in barred], [p.above or 0.0 for p in barred]],
            fmt="none",
            ecolor=color,
            elinewidth=1.1,
            capsize=3.5,
            alpha=0.75,
            zorder=2,
        )
        for collection in bars.lines[2]:  # the vertical bars (one collection); caps stay unnamed
            collection.set_gid(f"{gid}-bars")
    return line


def step_label(step: float) -> str:
    """A tick label: ``12000`` as ``12k`` once steps are that large, so long runs keep legible ticks."""
    whole = round(step)
    return f"{whole // 1000}k" if abs(whole) >= 10000 and whole % 1000 == 0 else str(whole)


def _decorate(axes: Axes, panel: Panel, steps: list[int], span: float) -> None:
    """Titles and labels; every panel of a figure gets the same steps on x, so panels line up."""
    if panel.title:
        axes.set_title(panel.title, parse_math=False)
    axes.set_ylabel(panel.y_label, parse_math=False)
    axes.set_xlabel("step")
    from matplotlib.ticker import FuncFormatter

    stride = math.ceil(len(steps) / MAX_TICKS)  # ticks on checkpoints only, at most MAX_TICKS of them
    axes.set_xticks(steps[::stride])
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: step_label(value)))
    axes.set_xlim(steps[0] - 0.06 * span, steps[-1] + 0.06 * span)
