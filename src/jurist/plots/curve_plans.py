"""What to draw, decided without matplotlib: figures, panels, lines, points and their error bars.

Kept apart from the drawing so the choices (which lines a figure gets, how they are labelled, which points
lack an error bar, which results are skipped) are plain data that tests can check, and so that the drawing
code only turns these plans into pictures.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from jurist.errors import JuristError
from jurist.plots.sweep_data import ResultRow, SweepData

ERROR_BARS = ("ci95", "sem", "std", "none")
BAR_CAPTIONS = {
    "ci95": "error bars: 95% CI",
    "sem": "error bars: ± standard error over samples",
    "std": "error bars: ± standard deviation over samples",
    "none": "no error bars",
}
ALL_TASKS = "all_tasks"
LONGEST_NAME = 48
"""Names from sweep.json longer than this are cut in titles and legends, so one cannot crowd out a plot."""


@dataclass(frozen=True)
class Point:
    """One checkpoint's value; ``below``/``above`` are the error bar's extents, None when it has none."""

    step: int
    value: float
    below: float | None
    above: float | None


@dataclass(frozen=True)
class Series:
    """One line: ``color`` and ``style`` are indexes into the drawing's palettes."""

    label: str
    color: int
    style: int
    points: tuple[Point, ...]


@dataclass(frozen=True)
class Panel:
    title: str
    y_label: str
    series: tuple[Series, ...]


@dataclass(frozen=True)
class FigurePlan:
    """One output figure; ``stem`` is its file name without the extension."""

    stem: str
    kind: str  # "task" | "grid" | "judges": decides the order files are written and listed in
    title: str
    caption: str
    panels: tuple[Panel, ...]


@dataclass(frozen=True)
class PlotPlan:
    figures: tuple[FigurePlan, ...]
    notes: tuple[str, ...]
    """One line each for what the reader should know: skipped results, failed checkpoints, missing bars."""


def plain(text: str) -> str:
    """Untrusted text (model, task, judge names) made safe for a one-line title: no control characters,
    bounded length. Mathtext is switched off where it is drawn; this only keeps the layout sane."""
    cleaned = "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in text)
    cleaned = re.sub(r"\s+", " ", cleaned).strip()
    return cleaned if len(cleaned) <= LONGEST_NAME else cleaned[: LONGEST_NAME - 1] + "…"


def file_stem(task: str) -> str:
    """A task name as a file name: letters, digits, ``.``, ``_`` and ``-`` only, never hidden."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", task).strip("._") or "task"
    return stem[:80]


# A series of a task is one sweep (by its position) and one judge (None for rule-checked tasks).
SeriesKey = tuple[int, str | None]


class _Index:
    """The drawable rows of all sweeps, grouped by task, series and metric, in first-seen order."""

    def __init__(self, sweeps: Sequence[SweepData]) -> None:
        self.sweeps = sweeps
        self.labels = _sweep_labels(sweeps)
        self.tasks: list[str] = []
        self.metrics: dict[str, list[str]] = defaultdict(list)
        self.judges: dict[tuple[str, int], list[str | None]] = defaultdict(list)
        self.rows: dict[tuple[str, SeriesKey, str], list[ResultRow]] = defaultdict(list)
        self.skipped: list[str] = []
        for position, sweep in enumerate(sweeps):
            for task in sweep.tasks:
                self._add_task(task)
            for row in sweep.results:
                if row.value is None:
                    self.skipped.append(f"{self.labels[position]} {row.checkpoint} {row.task} {row.metric}")
                    continue
                self._add_task(row.task)
                if row.metric not in self.metrics[row.task]:
                    self.metrics[row.task].append(row.metric)
                judges = self.judges[(row.task, position)]
                if row.judge not in judges:
                    judges.append(row.judge)
                self.rows[(row.task, (position, row.judge), row.metric)].append(row)
        for (_task, position), judges in self.judges.items():
            order = {name: k for k, name in enumerate(sweeps[position].judges)}
            judges.sort(key=lambda judge: (judge is not None, order.get(judge or "", len(order))))

    def _add_task(self, task: str) -> None:
        if task not in self.tasks:
            self.tasks.append(task)

    def keys(self, task: str) -> list[SeriesKey]:
        return [(p, judge) for p in range(len(self.sweeps)) for judge in self.judges.get((task, p), [])]

    def shared_judges(self, task: str, position: int) -> bool:
        """Did two or more judges of this sweep score at least one same checkpoint of the task?"""
        judged: dict[str, set[str | None]] = defaultdict(set)
        for (row_task, (p, judge), _), rows in self.rows.items():
            if row_task == task and p == position and judge is not None:
                for row in rows:
                    judged[row.checkpoint].add(judge)
        return any(len(judges) >= 2 for judges in judged.values())


def _sweep_labels(sweeps: Sequence[SweepData]) -> list[str]:
    """Each sweep's name for legends; repeated names get `` (2)``, `` (3)`` so no two lines share one."""
    labels: list[str] = []
    for sweep in sweeps:
        name = plain(sweep.name)
        label, k = name, 1
        while label in labels:
            k += 1
            label = f"{name} ({k})"
        labels.append(label)
    return labels


class _Bars:
    """Error bars in the chosen mode; remembers which drawn rows had none, for one note at the end."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.missing: dict[tuple[str, str, str, str | None, str], None] = {}

    def point(self, row: ResultRow, label: str, scale: float) -> Point:
        value = row.value if row.value is not None else math.nan  # rows without a value are never drawn
        below = above = None
        if self.mode == "ci95" and row.ci95 is not None:
            below, above = max(0.0, value - row.ci95[0]), max(0.0, row.ci95[1] - value)
        elif self.mode in ("sem", "std"):
            spread = row.sem if self.mode == "sem" else row.std
            below = above = spread
        if self.mode != "none" and below is None:
            self.missing[(label, row.checkpoint, row.task, row.judge, row.metric)] = None
        return Point(
            step=row.step,
            value=value * scale,
            below=None if below is None else below * scale,
            above=None if above is None else above * scale,
        )

    def note(self) -> str | None:
        if not self.missing:
            return None
        examples = ", ".join(" ".join(p for p in key[:3] if p) for key in list(self.missing)[:3])
        more = " ..." if len(self.missing) > 3 else ""
        return (
            f"{len(self.missing)} point(s) have no {self.mode} (drawn without an error bar): {examples}{more}"
        )


def plan_plots(sweeps: Sequence[SweepData], error_bars: str = "ci95") -> PlotPlan:
    """Every figure for these sweeps: one per task, the all-tasks grid, a judge comparison where judges
    scored the same checkpoints of a task; notes on what could not be drawn as asked."""
    if error_bars not in ERROR_BARS:
        raise JuristError(f"--error-bars: {error_bars!r} is not one of {', '.join(ERROR_BARS)}")
    index = _Index(sweeps)
    bars = _Bars(error_bars)
    caption = BAR_CAPTIONS[error_bars]
    figures: list[FigurePlan] = []
    notes = _checkpoint_notes(sweeps, index.labels)
    if index.skipped:
        shown = "; ".join(index.skipped[:3]) + (" ..." if len(index.skipped) > 3 else "")
        notes.append(f"skipped {len(index.skipped)} result(s) with no value (every item unscored): {shown}")
    stems: set[str] = {ALL_TASKS}
    grid: list[Panel] = []
    for task in index.tasks:
        keys = index.keys(task)
        if not keys:
            notes.append(f"{plain(task)}: no values to plot")
            continue
        stem = _unique(file_stem(task), stems)
        figures.append(_task_figure(index, bars, task, keys, (stem, "task"), plain(task), caption))
        judged = [p for p in range(len(sweeps)) if index.shared_judges(task, p)]
        if judged:
            judge_keys = [key for key in keys if key[0] in judged and key[1] is not None]
            title = f"judges on {plain(task)}"
            figures.append(
                _task_figure(
                    index,
                    bars,
                    task,
                    judge_keys,
                    (_unique(f"judges_{stem}", stems), "judges"),
                    title,
                    caption,
                )
            )
        grid.append(_grid_panel(index, bars, task, keys))
    if grid:
        one = len(sweeps) == 1
        title = f"all tasks · {index.labels[0]}" if one else "all tasks"
        figures.append(FigurePlan(ALL_TASKS, "grid", title, caption, tuple(grid)))
    note = bars.note()
    if note:
        notes.append(note)
    return PlotPlan(figures=tuple(_ordered(figures)), notes=tuple(notes))


def _ordered(figures: list[FigurePlan]) -> list[FigurePlan]:
    """Task figures first, then the grid, then judge comparisons: the order files are listed in."""
    rank = {"task": 0, "grid": 1, "judges": 2}
    return sorted(figures, key=lambda figure: rank[figure.kind])


def _unique(stem: str, taken: set[str]) -> str:
    name, k = stem, 1
    while name in taken:
        k += 1
        name = f"{stem}_{k}"
    taken.add(name)
    return name


def _checkpoint_notes(sweeps: Sequence[SweepData], labels: list[str]) -> list[str]:
    notes: list[str] = []
    for sweep, label in zip(sweeps, labels, strict=True):
        with_rows = {row.checkpoint for row in sweep.results if row.value is not None}
        for checkpoint in sweep.checkpoints:
            name = f"{label}: checkpoint {plain(checkpoint.name)}"
            why = f" ({plain(checkpoint.error)})" if checkpoint.error else ""
            if checkpoint.name not in with_rows:
                state = (
                    "failed" if checkpoint.status == "failed" else f"is {checkpoint.status} with no values"
                )
                notes.append(f"{name} {state}{why}: not plotted")
            elif checkpoint.status != "complete":
                notes.append(f"{name} is {checkpoint.status}{why}: plotted from the results it has")
    return notes


def _unit(rows: list[ResultRow]) -> tuple[str, float]:
    """The y-axis unit of a panel and the factor for its fraction rows: fractions are shown as percent
    when they share a panel with percents."""
    if all(row.fraction for row in rows):
        return "0-1", 1.0
    return "%", 100.0


def _task_figure(
    index: _Index,
    bars: _Bars,
    task: str,
    keys: list[SeriesKey],
    name: tuple[str, str],
    title: str,
    caption: str,
) -> FigurePlan:
    """One panel per metric of the task; lines per sweep, or per judge, or per both (colour: sweep, line
    style: judge). ``name`` is the figure's (file stem, kind)."""
    positions = list(dict.fromkeys(p for p, _ in keys))
    judges = list(dict.fromkeys(judge for _, judge in keys if judge is not None))
    many_sweeps, many_judges = len(positions) > 1, len(judges) > 1
    if not many_sweeps:
        title += f" · {index.labels[positions[0]]}"
    if len(judges) == 1:
        title += f" · judge {plain(judges[0])}"
    panels: list[Panel] = []
    for metric in index.metrics[task]:
        present = [key for key in keys if index.rows.get((task, key, metric))]
        if not present:
            continue
        rows = [row for key in present for row in index.rows[(task, key, metric)]]
        unit, scale = _unit(rows)
        series: list[Series] = []
        for position, judge in present:
            parts = [index.labels[position]] if many_sweeps or not many_judges else []
            if many_judges:
                parts.append(plain(judge) if judge is not None else "no judge")
            judge_rank = judges.index(judge) if judge in judges else 0
            color = position if many_sweeps else judge_rank  # a sweep keeps its colour in every figure
            style = judge_rank if many_sweeps and many_judges else 0
            label = " · ".join(parts)
            chosen = index.rows[(task, (position, judge), metric)]
            series.append(Series(label, color, style, _points(chosen, bars, index.labels[position], scale)))
        panels.append(Panel(title="", y_label=f"{plain(metric)} ({unit})", series=tuple(series)))
    return FigurePlan(stem=name[0], kind=name[1], title=title, caption=caption, panels=tuple(panels))


def _points(rows: list[ResultRow], bars: _Bars, label: str, scale: float) -> tuple[Point, ...]:
    """The rows as points in step order; ``scale`` applies to fraction rows only."""
    ordered = sorted(rows, key=lambda row: (row.step, row.checkpoint))
    return tuple(bars.point(row, label, scale if row.fraction else 1.0) for row in ordered)


def _grid_panel(index: _Index, bars: _Bars, task: str, keys: list[SeriesKey]) -> Panel:
    """The task's first (headline) metric, one line per sweep; a judged task shows each sweep's first
    judge (the task's own figure and the judge comparison show them all)."""
    metric = index.metrics[task][0]
    chosen: list[SeriesKey] = []
    for position in dict.fromkeys(p for p, _ in keys):
        for judge in index.judges[(task, position)]:
            if index.rows.get((task, (position, judge), metric)):
                chosen.append((position, judge))
                break
    rows = [row for key in chosen for row in index.rows[(task, key, metric)]]
    unit, scale = _unit(rows)
    judges = list(dict.fromkeys(plain(judge) for _, judge in chosen if judge is not None))
    title = plain(task) + (f" · judge {' / '.join(judges)}" if judges else "")
    series = tuple(
        Series(
            label=index.labels[position],
            color=position,
            style=0,
            points=_points(
                index.rows[(task, (position, judge), metric)], bars, index.labels[position], scale
            ),
        )
        for position, judge in chosen
    )
    return Panel(title=title, y_label=f"{plain(metric)} ({unit})", series=series)
