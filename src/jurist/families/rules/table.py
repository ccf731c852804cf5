"""Tables of rule-checked scores: one row per model, the four reference metrics as columns.

``table`` is a rich table (CIs as (-low / +high), the headline metric first); ``json`` prints the rows as
scored; ``csv`` and ``markdown`` flatten them to fixed columns so a spreadsheet or a paper can take them.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from jurist.families.rules.score import LABELS, METRICS
from jurist.report import interval_text, render_csv, render_markdown

Row = dict[str, Any]

FLAT_COLUMNS = (
    "model",
    *(name for metric in METRICS for name in (metric, f"{metric}_ci_low", f"{metric}_ci_high")),
    "n_questions",
    "n_answers",
    "samples",
    "truncated",
    "empty",
    "checker_errors",
)


def _ordered(rows: list[Row]) -> tuple[str, ...]:
    headline = rows[0]["headline"] if rows else METRICS[0]
    return (headline, *(m for m in METRICS if m != headline))


def _zero_reason(value: float) -> str | None:
    """Why a rule metric's interval has no width: every answer passed or every answer failed."""
    if value >= 100.0:
        return "every answer passed"
    return "every answer failed" if value <= 0.0 else None


def render_rule_table(rows: list[Row], *, title: str, ci_level: float) -> Table:
    table = Table(title=Text(title))
    table.add_column("#", justify="right")
    table.add_column("model")
    metrics = _ordered(rows)
    for metric in metrics:
        table.add_column(LABELS[metric], justify="right")
    table.add_column(f"{ci_level:.0%} CI of {LABELS[metrics[0]]}", justify="right")
    spread = any(int(row.get("samples") or 1) > 1 for row in rows)  # mean@N: how far its N runs lie apart
    if spread:
        table.add_column("sd over samples", justify="right")
    for header in ("n", "samples", "truncated"):
        table.add_column(header, justify="right")
    for rank, row in enumerate(rows, start=1):
        head = metrics[0]
        low, high = row.get(f"{head}_ci_low"), row.get(f"{head}_ci_high")
        interval = interval_text(row[head], low, high, zero_reason=_zero_reason(row[head]))
        cells = [f"{row[m]:.1f}" for m in metrics]
        if spread:
            cells.append(interval)
            interval = _spread_text(row, head)
        extra = [str(row["n_questions"]), str(row["samples"]), str(row["truncated"])]
        table.add_row(str(rank), Text(str(row["model"])), *cells, interval, *extra)
    return table


def _spread_text(row: Row, metric: str) -> str:
    """The standard deviation of ``metric`` across the row's samples (summary.json's ``across_runs``), as
    ``±2.0 (8 runs)``; ``-`` for one sample."""
    across = (row.get("across_runs") or {}).get(metric) or {}
    std = across.get("std")
    return "-" if std is None else f"±{std:.1f} ({across.get('n_runs')} runs)"


def render_per_instruction(rows: list[Row]) -> Table:
    """Per instruction id: strict and loose accuracy of every model (the reference's per-id report)."""
    table = Table(title="per instruction id (strict / loose, %)")
    table.add_column("instruction id")
    table.add_column("n", justify="right")
    for row in rows:
        table.add_column(Text(str(row["model"])), justify="right")
    ids = sorted({iid for row in rows for iid in row["per_instruction"]})
    for iid in ids:
        cells = []
        for row in rows:
            cell = row["per_instruction"].get(iid)
            cells.append("-" if cell is None else f"{cell['strict']:.1f} / {cell['loose']:.1f}")
        n = max((row["per_instruction"].get(iid, {}).get("n", 0) for row in rows), default=0)
        table.add_row(iid, str(n), *cells)
    return table


def print_rule_rows(
    console: Console,
    rows: list[Row],
    *,
    title: str,
    ci_level: float,
    fmt: str = "table",
    detail: bool = False,
) -> None:
    """The rows in ``fmt``: a table on ``console``, other formats as plain text on stdout."""
    if fmt == "table":
        console.print(render_rule_table(rows, title=title, ci_level=ci_level))
        truncated = sum(row["truncated"] for row in rows)
        if truncated:
            console.print(
                Text(f"{truncated} answer(s) ended inside their <think> block: scored as empty answers")
            )
        if detail:
            console.print(render_per_instruction(rows))
    elif fmt == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    elif fmt == "csv":
        print(render_csv(rows, FLAT_COLUMNS), end="")
    elif fmt == "markdown":
        print(render_markdown(rows, FLAT_COLUMNS), end="")
    else:
        raise ValueError(f"unknown format {fmt!r}")
