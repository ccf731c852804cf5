"""Arena placement tables: where the evaluated model lands among the arena's human-rated models.

One table per (judge, evaluated model): the models above and below it on the arena's scale (the whole list
with ``full``), each with its bootstrap rating, CI, battles and human-only rating; then one line saying the
rank (plain and by CI separation) and how far the judged battles moved the human scale (MAE); a judge's
calibration; the tally of judged battles that have no human votes to be placed among.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from jurist.report import interval_text

NEIGHBOURS = 5
"""Arena models shown on each side of the evaluated one (the table of a 100-model arena stays short)."""


def _window(ratings: Sequence[Mapping[str, Any]], full: bool) -> list[int]:
    if full:
        return list(range(len(ratings)))
    at = next((k for k, e in enumerate(ratings) if e["source"] == "evaluated"), 0)
    top = list(range(min(3, len(ratings))))
    near = list(range(max(0, at - NEIGHBOURS), min(len(ratings), at + NEIGHBOURS + 1)))
    return sorted(set(top) | set(near))


def render_report(report: Mapping[str, Any], *, full: bool = False) -> Table:
    """The arena models around the evaluated one (all of them with ``full``)."""
    extra = report.get("jurist") or {}
    per_model = extra.get("models") or {}
    level = extra.get("ci_level", 0.95)
    title = f"{report['model']} on {report['arena'] or 'the arena'} (judge {report['judge_model']})"
    table = Table(
        title=Text(title), caption=Text(f"{level:.0%} bootstrap intervals, {report['n_bootstraps']} rounds")
    )
    for name, justify in (("rank", "right"), ("model", "left"), ("rating", "right"), ("CI", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    table.add_column("battles", justify="right")
    table.add_column("human only", justify="right")
    ratings = report["ratings"]
    previous = -1
    for k in _window(ratings, full):
        if previous >= 0 and k != previous + 1:
            table.add_row("…", "", "", "", "", "")
        previous = k
        entry = ratings[k]
        info = per_model.get(entry["model"]) or {}
        human = info.get("human_rating")
        style = "bold" if entry["source"] == "evaluated" else None
        table.add_row(
            str(info.get("rank", k + 1)),
            Text(str(entry["model"])),
            f"{entry['rating']:.1f}",
            interval_text(
                entry["rating"], entry["ci_low"], entry["ci_high"], unreliable=bool(info.get("ci_unreliable"))
            ),
            str(entry["n_battles"]),
            "" if human is None else f"{human:.1f}",
            style=style,
        )
    return table


def summary_line(report: Mapping[str, Any]) -> str:
    """The sentence a user reads first: rating with CI, rank among the arena models, drift of the scale."""
    extra = report.get("jurist") or {}
    entry = next(e for e in report["ratings"] if e["source"] == "evaluated")
    of = extra.get("arena_models", len(report["ratings"]) - 1) + 1
    unreliable = bool((extra.get("models") or {}).get(report["model"], {}).get("ci_unreliable"))
    interval = interval_text(entry["rating"], entry["ci_low"], entry["ci_high"], unreliable=unreliable)
    return (
        f"{report['model']}: {entry['rating']:.1f} {interval}, rank "
        f"{extra.get('rank', '?')} of {of} (by CI: {extra.get('rank_ci', '?')}); "
        f"{extra.get('llm_judge_battles', '?')} judged + "
        f"{extra.get('human_anchor_battles', '?')} human battles; "
        f"MAE vs human-only Elo {extra.get('mae_vs_human', float('nan')):.2f}"
    )


def print_reports(
    console: Console,
    reports: Sequence[Mapping[str, Any]],
    notes: Sequence[str],
    *,
    title: str,
    full: bool = False,
) -> None:
    if not reports:
        console.print(f"{title}: nothing placed", style="yellow", markup=False, highlight=False)
    for report in reports:
        console.print(render_report(report, full=full))
        console.print(summary_line(report), markup=False, highlight=False)
    for note in notes:
        console.print(f"note: {note}", style="dim", markup=False, highlight=False)


def print_calibration(console: Console, document: Mapping[str, Any]) -> None:
    """Each judge's fitted temperature, with how often its verdicts agree with the human votes."""
    table = Table(title=Text(f"judge calibration on {document.get('arena') or 'the arena'}'s human votes"))
    for name in ("judge", "temperature", "pairs", "agreement", "invalid"):
        table.add_column(name, justify="left" if name == "judge" else "right")
    for judge, fit in (document.get("judges") or {}).items():
        agreement = fit.get("agreement")
        table.add_row(
            Text(judge),
            "—" if fit.get("temperature") is None else f"{fit['temperature']:.3f}",
            str(fit.get("n_pairs", 0)),
            "—" if agreement is None else f"{agreement:.1%}",
            str(fit.get("invalid", 0)),
        )
    console.print(table)


def print_tally(
    console: Console, rows: Sequence[Mapping[str, Any]], stored: Mapping[str, Any] | None, title: str
) -> None:
    """Judged battles without human votes: wins, losses and ties per (judge, model), then the EloReport
    stored beside them, if any (the battles cannot fit it again)."""
    table = Table(title=Text(title))
    for header in ("judge", "model", "wins", "losses", "ties", "winrate"):
        table.add_column(header)
    for row in rows:
        rate = row["winrate"]
        cells = [str(row[k]) for k in ("judge", "model", "wins", "losses", "ties")]
        table.add_row(*map(Text, cells), "—" if rate is None else f"{rate:.1%}")
    console.print(table)
    if stored is not None:
        console.print(render_report(stored, full=True))
        console.print(
            "(ratings as stored in elo_ratings.json; the battles file has no human votes to fit them again)"
        )
