"""Arena placement tables: where the evaluated model lands among the arena's human-rated models.

One table per (judge, evaluated model): the models above and below it on the arena's scale (the whole list
with ``full``), each with its bootstrap rating, CI, battles and human-only rating; then one line saying the
rank (plain and by CI separation) and how far the judged battles moved the human scale (MAE). ``jurist
show`` on an arena run or a battles file prints the same tables through :func:`show_arena`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

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
            f"{entry['ci_low']:.1f} – {entry['ci_high']:.1f}",
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
    return (
        f"{report['model']}: {entry['rating']:.1f} ({entry['ci_low']:.1f} – {entry['ci_high']:.1f}), rank "
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


def judged_summary(battles: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (judge, evaluated side of each battle's first model pair): wins, losses, ties, as JudgeArena
    summarises a judge-only file (no human battles to place against)."""
    from jurist.scoring.placement import evaluated_models

    judged = [dict(b) for b in battles if b["source"] == "llm-judge"]
    rows = []
    for judge, model in evaluated_models(judged, set()):
        wins = losses = ties = 0
        for b in judged:
            if b["judge_model"] != judge or model not in (b["model_a"], b["model_b"]):
                continue
            won = "model_a" if b["model_a"] == model else "model_b"
            if b["winner"] == won:
                wins += 1
            elif b["winner"] in ("tie", "tie (bothbad)"):
                ties += 1
            else:
                losses += 1
        total = wins + losses + ties
        winrate = (wins + 0.5 * ties) / total if total else None
        rows.append(
            {"judge": judge, "model": model, "wins": wins, "losses": losses, "ties": ties, "winrate": winrate}
        )
    return rows


def show_arena(
    path: Path,
    *,
    n_bootstrap: int | None = None,
    seed: int | None = None,
    ci_level: float | None = None,
    fmt: str = "table",
    write: bool = False,
    full: bool = False,
) -> list[dict[str, Any]]:
    """``jurist show`` on an arena run or battles file: fit again, print, and with ``write`` save
    elo_ratings.json beside the battles. Returns the reports."""
    from jurist.interop.judgearena import find_battles
    from jurist.report.formats import render_csv, render_markdown, table_console
    from jurist.scoring.placement import CALIBRATION_FILE, rescore, summary_rows, write_reports

    calibration = path / CALIBRATION_FILE if path.is_dir() else None
    if calibration is not None and calibration.is_file() and find_battles(path) is None:
        document = json.loads(calibration.read_text(encoding="utf-8"))
        if fmt == "json":
            print(json.dumps(document, indent=2, ensure_ascii=False))
        else:
            print_calibration(table_console(), document)
        return []
    reports, notes, battles = rescore(path, n_bootstrap=n_bootstrap, seed=seed, ci_level=ci_level)
    err = Console(stderr=True)
    if not reports:
        _show_without_humans(path, battles, notes, fmt)
        return []
    if fmt == "json":
        print(json.dumps(reports if len(reports) > 1 else reports[0], indent=2, ensure_ascii=False))
    elif fmt in ("csv", "markdown"):
        print((render_csv if fmt == "csv" else render_markdown)(summary_rows(reports)), end="")
    else:
        print_reports(table_console(), reports, [], title=f"jurist show: {path.name}", full=full)
    for note in notes:
        err.print(f"note: {note}", style="dim", markup=False, highlight=False)
    if write:
        write_reports(path if path.is_dir() else path.parent, reports)
    return reports


def _show_without_humans(
    path: Path, battles: Sequence[Mapping[str, Any]], notes: Sequence[str], fmt: str
) -> None:
    """A judge-only battles file (JudgeArena saves only the judged battles): their tally, and the stored
    EloReport when one lies beside them."""
    from jurist.interop.judgearena import ELO_FILE, read_elo_report
    from jurist.report.formats import table_console

    rows = judged_summary(battles)
    folder = path if path.is_dir() else path.parent
    stored = read_elo_report(folder / ELO_FILE) if (folder / ELO_FILE).is_file() else None
    if fmt == "json":
        print(json.dumps({"judged": rows, "elo_report": stored}, indent=2, ensure_ascii=False))
        return
    console = table_console()
    table = Table(title=Text(f"judged battles in {path.name}"))
    for name in ("judge", "model", "wins", "losses", "ties", "winrate"):
        table.add_column(name)
    for row in rows:
        rate = row["winrate"]
        cells = [str(row[k]) for k in ("judge", "model", "wins", "losses", "ties")]
        table.add_row(*map(Text, cells), "—" if rate is None else f"{rate:.1%}")
    console.print(table)
    if stored is not None:
        console.print(render_report(stored, full=True))
        console.print(
            f"(ratings as stored in {ELO_FILE}; the battles file has no human votes to fit them again)"
        )
    for note in notes:
        Console(stderr=True).print(f"note: {note}", style="dim", markup=False, highlight=False)
