"""Tables of rubric scores: HealthBench (score, bootstrap std, themes, axes) and WritingBench (overall, x10,
domains, requirements R/C), one row per (model, judge).

``table`` prints rich tables; ``json`` the rows as scored; ``csv`` and ``markdown`` flatten the headline
columns, so a spreadsheet or a paper can take them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from jurist.benchmarks import rubric_suite
from jurist.report import interval_text, render_csv, render_markdown

Row = dict[str, Any]

HEALTHBENCH_COLUMNS = (
    "model",
    "judge",
    "variant",
    "score",
    "bootstrap_std",
    "ci_low",
    "ci_high",
    "score_length_adjusted",
    "n_answers",
    "n_questions",
    "samples",
    "unscored_answers",
    "unscored_items",
)
WRITINGBENCH_COLUMNS = (
    "model",
    "judge",
    "overall",
    "overall_x10",
    "ci_low",
    "ci_high",
    *(f"{dim}_{kind}" for dim in ("style", "format", "length") for kind in ("R", "C")),
    "n_scores",
    "n_answers",
    "samples",
    "unscored_answers",
    "unscored_items",
)


def _num(value: Any, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _flat(row: Row) -> Row:
    """WritingBench's requirement cells as columns (``style_R``...) for csv and markdown."""
    flat = dict(row)
    if isinstance(row.get("length_adjusted"), Mapping):
        flat["score_length_adjusted"] = row["length_adjusted"]["score"]
    for dim, value in (row.get("requirements") or {}).items():
        flat[f"{dim}_R"], flat[f"{dim}_C"] = value["R"], value["C"]
    return flat


def render_healthbench(rows: list[Row], *, title: str, ci_level: float) -> Table:
    table = Table(title=Text(title))
    adjusted = any(row.get("length_adjusted") for row in rows)  # -B length_penalty/length_center
    headers = ["#", "model", "judge", "score", "bootstrap std", f"{ci_level:.0%} CI"]
    headers += ["length-adjusted", "its std"] if adjusted else []
    for header in (*headers, "n", "unscored"):
        table.add_column(header, justify="left" if header in ("model", "judge") else "right")
    for rank, row in enumerate(rows, start=1):
        interval = interval_text(row["score"], row["ci_low"], row["ci_high"], digits=4)
        unscored = (
            f"{row['unscored_answers']} ({row['unscored_items']} items)" if row["unscored_answers"] else "0"
        )
        length = row.get("length_adjusted") or {}
        beside = [_num(length.get("score"), 4), _num(length.get("bootstrap_std"), 4)] if adjusted else []
        table.add_row(
            str(rank),
            Text(str(row["model"])),
            Text(str(row["judge"])),
            _num(row["score"], 4),
            _num(row["bootstrap_std"], 4),
            interval,
            *beside,
            str(row["n_answers"]),
            unscored,
        )
    return table


def render_breakdown(rows: list[Row], field: str, label: str, digits: int = 4) -> Table:
    """One line per theme / axis / domain (``label``), one column per (model, judge)."""
    table = Table(title=Text(f"by {label}"))
    table.add_column(label)
    for row in rows:
        table.add_column(Text(f"{row['model']} ({row['judge']})"), justify="right")
    names = sorted({name for row in rows for name in row.get(field, {})})
    for name in names:
        cells = []
        for row in rows:
            cell = row.get(field, {}).get(name)
            value = cell.get("score") if isinstance(cell, Mapping) else cell
            cells.append(_num(value, digits))
        table.add_row(Text(name), *cells)
    return table


def render_writingbench(rows: list[Row], *, title: str, ci_level: float) -> Table:
    table = Table(title=Text(title))
    headers = ("#", "model", "judge", "overall (1-10)", "x10", f"{ci_level:.0%} CI (x10)")
    for header in (*headers, "style R/C", "format R/C", "length R/C", "n", "unscored"):
        table.add_column(header, justify="left" if header in ("model", "judge") else "right")
    for rank, row in enumerate(rows, start=1):
        interval = interval_text(row["overall"], row["ci_low"], row["ci_high"], scale=10.0)
        reqs = [
            f"{_num(row['requirements'][d]['R'], 2)} / {_num(row['requirements'][d]['C'], 2)}"
            for d in ("style", "format", "length")
        ]
        table.add_row(
            str(rank),
            Text(str(row["model"])),
            Text(str(row["judge"])),
            _num(row["overall"], 3),
            _num(row["overall_x10"], 2),
            interval,
            *reqs,
            str(row["n_answers"]),
            str(row["unscored_answers"]),
        )
    return table


def _points_tables(console: Console, rows: list[Row], title: str, ci_level: float, detail: bool) -> None:
    console.print(render_healthbench(rows, title=title, ci_level=ci_level))
    console.print(render_breakdown(rows, "themes", "theme"))
    console.print(render_breakdown(rows, "axes", "axis"))


def _criteria_tables(console: Console, rows: list[Row], title: str, ci_level: float, detail: bool) -> None:
    console.print(render_writingbench(rows, title=title, ci_level=ci_level))
    console.print(render_breakdown(rows, "domain1", "domain (1-10)", 3))
    if detail:
        console.print(render_breakdown(rows, "domain2", "subdomain (1-10)", 3))


_TABLES = {"points": _points_tables, "criteria": _criteria_tables}
_COLUMNS = {"points": HEALTHBENCH_COLUMNS, "criteria": WRITINGBENCH_COLUMNS}
"""A suite's grading -> its tables and its csv/markdown columns."""


def _grading(rows: list[Row]) -> str:
    """How the rows' suite grades (:class:`jurist.benchmarks.base.RubricSuite`); points when none is named."""
    suite = rubric_suite(rows[0].get("suite")) if rows else None
    return suite.grading if suite is not None else "points"


def print_rubric_rows(
    console: Console,
    rows: list[Row],
    *,
    title: str,
    ci_level: float,
    fmt: str = "table",
    detail: bool = False,
) -> None:
    """The rows in ``fmt``: tables on ``console`` (breakdowns too; domain2 only with ``detail``), other
    formats as plain text on stdout."""
    grading = _grading(rows)
    if fmt == "table":
        _TABLES[grading](console, rows, title, ci_level, detail)
        unscored = sum(row["unscored_answers"] for row in rows)
        if unscored:
            console.print(
                Text(
                    f"{unscored} answer(s) have items the grader did not grade, even when re-asked: they are "
                    "left out of the scores (see the judgments' raw replies; --rejudge-invalid asks again)"
                )
            )
    elif fmt == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    elif fmt in ("csv", "markdown"):
        columns = _COLUMNS[grading]
        flat = [_flat(row) for row in rows]
        if fmt == "csv":
            print(render_csv(flat, columns), end="")
        else:  # markdown's own cells keep one decimal: too few for scores between 0 and 1
            shown = [{k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()} for row in flat]
            print(render_markdown(shown, columns), end="")
    else:
        raise ValueError(f"unknown format {fmt!r}")
