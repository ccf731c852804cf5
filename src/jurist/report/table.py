"""Leaderboard rendering: a rich table for people, JSON for programs."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def leaderboard_table(rows: list[dict[str, Any]], *, title: str, ci_level: float) -> Table:
    several_judges = len({row.get("judge") for row in rows}) > 1
    table = Table(title=title)
    table.add_column("#", justify="right")
    table.add_column("model")
    if several_judges:
        table.add_column("judge")
    table.add_column("score", justify="right")
    table.add_column(f"{ci_level:.0%} CI", justify="right")
    table.add_column("n", justify="right")
    table.add_column("invalid", justify="right")
    for rank, row in enumerate(rows, start=1):
        score, low, high = row.get("score"), row.get("ci_low"), row.get("ci_high")
        ci = (
            "-"
            if score is None or low is None or high is None
            else f"(-{score - low:.1f} / +{high - score:.1f})"
        )
        cells = [str(rank), str(row["model"]) + (" (baseline)" if row.get("baseline") else "")]
        if several_judges:
            cells.append(str(row.get("judge", "")))
        cells += [_fmt(score), ci, str(row.get("n", "")), str(row.get("invalid", 0))]
        table.add_row(*cells)
    return table


def print_leaderboard(console: Console, rows: list[dict[str, Any]], *, title: str, ci_level: float) -> None:
    console.print(leaderboard_table(rows, title=title, ci_level=ci_level))
