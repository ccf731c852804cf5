"""How a pairwise score is shown: the leaderboard with the judges' sanity under it in the terminal, the
browser summary's title, and the headline ``--tasks`` and a sweep report (the score, else a rating)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jurist.families.door import Headline
from jurist.report import print_notes, print_rows, print_warnings, render_sanity, render_table

if TYPE_CHECKING:
    from rich.console import Console

    from jurist.families.door import Scores
    from jurist.families.pairwise.options import Scored

METHOD_TITLES = {
    "winrate": "weighted win rate against the baseline (%)",
    "bt": "Bradley-Terry (Elo scale)",
    "style-control": "style-controlled win rate (%)",
    "lc-winrate": "length-controlled win rate (%)",
}
"""The browser summary's words for each method's score."""


def print_pairwise(scores: Scores, fmt: str, title: str, out: Console, err: Console) -> None:
    """The leaderboard, the judges' sanity and the warnings; other formats: the rows (warnings to stderr)."""
    sanity = scores.detail.sanity
    if fmt != "table":
        print_rows(scores.rows, fmt)
        print_warnings(err, sanity, scores.warnings)
        return
    ci_level = float(scores.settings["ci_level"])
    out.print(render_table(scores.rows, title=title, ci_level=ci_level, sanity=sanity))
    if sanity:
        out.print(render_sanity(sanity))
    print_warnings(out, sanity, scores.warnings)


def print_scored(
    console: Console, scored: Scored, *, title: str, notes_console: Console | None = None
) -> None:
    """The leaderboard, the judges' sanity and its warnings, then the notes (to ``notes_console``)."""
    console.print(
        render_table(scored.rows, title=title, ci_level=scored.settings["ci_level"], sanity=scored.sanity)
    )
    if scored.sanity:
        console.print(render_sanity(scored.sanity))
    print_warnings(console, scored.sanity, scored.warnings)
    print_notes(notes_console or console, scored.notes)


def summary_title(rows: Sequence[Mapping[str, Any]], method: Any) -> str:
    return "Leaderboard: " + METHOD_TITLES.get(str(method), str(method or "winrate"))


def row_headline(row: Mapping[str, Any]) -> Headline | None:
    """The win rate (``score``), else a Bradley-Terry ``rating``; None for a baseline's row."""
    if row.get("baseline"):
        return None
    for name in ("score", "rating"):
        if name in row:  # kept when None (every verdict unreadable): the table says there is no score
            return Headline(name, row[name], row.get("ci_low"), row.get("ci_high"))
    return None
