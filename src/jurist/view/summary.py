"""The summary tab's numbers: each run's leaderboard, per-category scores, judge sanity, task tables.

Numbers come from the run (``leaderboard.json``, ``ratings.json``) or from :mod:`jurist.families`, the scoring
``jurist run`` and ``jurist show`` use, so the page never shows a figure the command line would not; the
title, axis and layout of each run's board are its family's (``summary``: :class:`jurist.families.
SummaryBoard`). Only the rubric table is computed here: a mean of point values, with no interval.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from jurist.errors import JuristError
from jurist.families import score_family
from jurist.view.collect import RULES, RunData

_HEAVY = ("per_instruction", "across_runs")
"""Fields of a rule leaderboard row shown as their own tables, not as columns."""


def summarize(runs: list[RunData], *, categories: bool = True) -> dict[str, Any]:
    """One summary entry per run (same order as the runs)."""
    return {"runs": [_run_summary(run, categories) for run in runs]}


def _run_summary(run: RunData, categories: bool) -> dict[str, Any]:
    from jurist.families import read_json

    board = read_json(run.root / "leaderboard.json")
    rows = [row for row in board if isinstance(row, dict)] if isinstance(board, list) else []
    ratings = read_json(run.root / "ratings.json")
    ratings = ratings if isinstance(ratings, dict) else {}
    scoring = run.info.get("scoring")
    scoring = scoring if isinstance(scoring, dict) else {}
    family, unknown = _family(run)
    board = score_family(family).summary(rows, ratings.get("method", scoring.get("method")))
    entry: dict[str, Any] = {
        "family": family,
        "title": board.title + _published_label(rows),
        "scale": board.scale,
        "board": {
            "layout": board.layout,
            "score_field": board.score_field,
            "score_label": board.score_label,
            "digits": board.digits,
            "breakdowns": [list(part) for part in board.breakdowns],
        },
        "leaderboard": [{k: v for k, v in row.items() if k not in _HEAVY} for row in rows],
        "ci_level": ratings.get("ci_level", scoring.get("ci_level", 0.9)),
        "method": ratings.get("method", scoring.get("method")),
        "sanity": ratings.get("judge_sanity") or [],
        "categories": [],
        "notes": [unknown] if unknown else [],
    }
    judgebench = read_json(run.root / "judgebench.json")
    if isinstance(judgebench, list):
        entry["judge_accuracy"] = [row for row in judgebench if isinstance(row, dict)]
    if any("per_instruction" in row for row in rows):
        entry["instructions"] = _instruction_table(rows)
    entry["points"] = _point_table(run)
    if categories and (run.root / "battles.jsonl").is_file():
        _categories(run, entry)
    return entry


def _family(run: RunData) -> tuple[str, str | None]:
    """(the run's scoring family as run.json records it, :mod:`jurist.families.registry`; a note when it
    cannot be told)."""
    from jurist.families import family_of_run

    try:
        return str(family_of_run(run.root, run.info or None)), None
    except JuristError as exc:
        return "pairwise", f"scoring family unknown ({exc}); the summary is drawn as a pairwise one"


def _published_label(rows: list[dict[str, Any]]) -> str:
    """What the rows say of the published leaderboard (families/pairwise/anchor.py): re-anchored, or not
    comparable."""
    if any("anchored" in row for row in rows):
        return " (re-anchored onto the published scale: see each row's anchored score)"
    label = next((row["published"] for row in rows if isinstance(row.get("published"), str)), None)
    return f" ({label})" if label else ""


def _instruction_table(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per instruction id, each model's strict and loose pass rate (from the rule leaderboard rows)."""
    models = [str(row.get("model")) for row in rows]
    ids = sorted({iid for row in rows for iid in (row.get("per_instruction") or {})})
    table = []
    for iid in ids:
        cells = []
        n = 0
        for row in rows:
            cell = (row.get("per_instruction") or {}).get(iid)
            cells.append([cell.get("strict"), cell.get("loose")] if isinstance(cell, dict) else None)
            n = max(n, int(cell.get("n", 0)) if isinstance(cell, dict) else 0)
        table.append({"id": iid, "n": n, "cells": cells})
    return {"models": models, "rows": table}


def _point_table(run: RunData) -> list[dict[str, Any]]:
    """Point records written by a judge (rubric grades): mean value (%) and counts per (judge, model)."""
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for slot in run.slots.values():
        for judged in slot.judged:
            if judged.layout != "point" or judged.judge == RULES:  # rule checks have their own tables
                continue
            cell = sums[(judged.judge, judged.model)]
            cell[0] += 1
            if judged.value is None:
                cell[1] += 1
            else:
                cell[2] += judged.value
                cell[3] += judged.value >= 1.0
    table = []
    for (judge, model), (n, unscored, total, full) in sums.items():
        scored = n - unscored
        table.append(
            {
                "judge": judge,
                "model": model,
                "n": int(n),
                "unscored": int(unscored),
                "mean": 100.0 * total / scored if scored else None,
                "full": 100.0 * full / scored if scored else None,
            }
        )
    return sorted(table, key=lambda row: (row["judge"], -(row["mean"] or -1.0)))


def _categories(run: RunData, entry: dict[str, Any]) -> None:
    """Per-category scores with intervals, as ``jurist show --category`` gives them."""
    from jurist.families import ScoreOptions, score_run

    names = _battle_categories(run)
    if len(names) < 2:
        return
    try:
        scored = score_run(run.root, ScoreOptions(categories=tuple(names)))
    except (JuristError, KeyError, ValueError) as exc:
        entry["notes"].append(f"no per-category scores: {exc}")
        return
    entry["categories"] = [
        {k: row.get(k) for k in ("judge", "model", "category", "score", "ci_low", "ci_high", "n", "baseline")}
        for row in scored.rows
    ]
    if not entry["sanity"]:
        entry["sanity"] = scored.sanity


def _battle_categories(run: RunData) -> list[str]:
    from jurist.store import iter_jsonl

    seen: dict[str, None] = {}
    for battle in iter_jsonl(run.root / "battles.jsonl", repair=False):
        seen.setdefault(str(battle.get("category", "default")), None)
    return list(seen)
