"""The tables ``jurist judges replace`` prints from replacement.json: items, leaderboard, map, verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


def _est(found: Mapping[str, Any] | None, digits: int = 3) -> str:
    if not found or found.get("estimate") is None:
        return "-"
    low, high = found.get("ci") or [None, None]
    interval = "" if low is None or high is None else f" [{low:.{digits}f}, {high:.{digits}f}]"
    return f"{found['estimate']:.{digits}f}{interval}"


def items_table(document: Mapping[str, Any]) -> Table | None:
    items = document["items"]
    if not items.get("agreement"):
        return None
    table = Table(title=Text(f"item level: the candidate against {document['retired_judge']}'s own verdicts"))
    for name in ("group", "n", "agreement [95% CI, clustered by question]"):
        table.add_column(name, justify="left" if name == "group" else "right")
    table.add_row("all", str(items["n"]), _est(items["agreement"]))
    table.add_row("Cohen's kappa", str(items["n"]), _est(items["kappa"]))
    groups = (
        ("by_category", "category"),
        ("by_length", "length (model / baseline)"),
        ("by_retired_choice", "length"),
    )
    for key, label in groups:
        for group in items.get(key) or []:
            table.add_row(f"{label}: {group['group']}", str(group["n"]), _est(group["agreement"]))
    longer = items["chose_longer"]
    table.add_row(
        "chose the longer output",
        "",
        f"{longer['candidate']:.3f} (retired {longer['retired']:.3f}, {longer['excess']:+.3f})",
    )
    return table


def board_table(document: Mapping[str, Any]) -> Table:
    board = document["leaderboard"]
    field = document["map"]["score_field"]
    title = (
        f"leaderboard level ({field}; retired scores on {board['retired_on']}): Spearman "
        f"{_est(board['spearman'])}, Kendall {_est(board['kendall'])}"
    )
    table = Table(title=Text(title))
    for name in ("model", "published", "retired", "candidate", "re-anchored", "held-out error", "rank shift"):
        table.add_column(name, justify="left" if name == "model" else "right")
    for row in board["models"]:
        table.add_row(
            row["model"],
            f"{row['published']:.1f}",
            f"{row['retired']:.1f}",
            f"{row['candidate']:.1f}",
            f"{row['mapped']:.1f}",
            f"{row['loo_error']:.1f}",
            f"{row['rank_displacement']:+d}",
        )
    return table


def summary_lines(document: Mapping[str, Any]) -> list[str]:
    board, mapping = document["leaderboard"], document["map"]
    worst = board["largest_rank_displacement"]
    knots = ", ".join(f"{x:.1f}->{y:.1f}" for x, y in zip(mapping["x"], mapping["y"], strict=True))
    lines = [
        f"mean |candidate - retired| {board['mean_abs_difference']:.2f} points; largest rank displacement "
        f"{worst['by']:+d} ({worst['model']})",
        f"re-anchoring map ({mapping['method']}; {len(mapping['replicates'])} replicates resampling "
        f"{mapping['resampled']}): {knots}",
        "map carried to a panel model left out of its fit: mean error "
        f"{mapping['loo_mean_abs_error']:.2f} points",
        f"verdict: {document['verdict']}",
        *(f"  - {reason}" for reason in document["reasons"]),
    ]
    return lines + [f"note: {note}" for note in document.get("notes") or []]


def print_replacement(document: Mapping[str, Any], out: Console) -> None:
    """The study's tables and verdict on ``out``."""
    table = items_table(document)
    if table is not None:
        out.print(table)
    out.print(board_table(document))
    for line in summary_lines(document):
        out.print(line, markup=False, highlight=False)
