"""Leaderboards for people (a rich table, with the judges' sanity under it) and for programs (CSV, Markdown).

``jurist run`` and ``jurist show`` print through here, so both show the same columns for the same rows.
Model and judge names, notes and titles are user text: they are printed as plain text, never as rich markup
(``gpt[4]`` or an install hint ``jurist[litellm]`` would otherwise lose their brackets).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jurist.benchmarks import ROW_FIELDS
from jurist.report.intervals import interval_text, pairwise_zero_reason

if TYPE_CHECKING:  # rich is imported where something is drawn: a run's start needs none of it (25 ms)
    from rich.console import Console
    from rich.table import Table

Row = dict[str, Any]
Column = tuple[str, Callable[[Row], str]]

_CSV_COLUMNS = (
    "category",
    "judge",
    "model",
    "score",
    "rating",
    "ci_low",
    "ci_high",
    "winrate",
    "winrate_ci_low",
    "winrate_ci_high",
    "win_rate",
    "win_rate_standard_error",
    "lc_estimate",
    "lc_standard_error",
    "difficulty_source",
    "avg_tokens",
    "n",
    "n_battles",
    "invalid",
    "baseline",
    "separation",
    "ci_unreliable",
)


DRAWING_MODULES = ("rich.table",)
"""What the closing report of every run draws its tables with (the scores, the ledger): imported while a
run waits on its last replies (:mod:`jurist.run.ahead`), not after them."""


def _columns(rows: list[Row], order: tuple[str, ...] = _CSV_COLUMNS) -> list[str]:
    present = {key for row in rows for key in row}
    return [c for c in order if c in present]


def render_csv(rows: list[Row], columns: tuple[str, ...] = _CSV_COLUMNS) -> str:
    """The rows as CSV, with the columns any row has, in a fixed order (``columns``: another row shape's)."""
    buffer = io.StringIO()
    fields = _columns(rows, columns)
    writer = csv.DictWriter(buffer, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def render_markdown(rows: list[Row], order: tuple[str, ...] = _CSV_COLUMNS) -> str:
    """The rows as a Markdown table, the same columns as :func:`render_csv`."""
    columns = _columns(rows, order)
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _table_columns(rows: list[Row], ci_level: float, sanity: list[Row] | None = None) -> list[Column]:
    """(header, row -> cell text) for the columns these rows need; ``sanity`` (the judges' rows) explains
    an interval of no width (a judge that always picked A)."""
    ci = f"{ci_level:.0%} CI"
    judges = {str(row.get("judge", "")): row for row in sanity or ()}

    def _interval(row: Row, value: str, low: str, high: str) -> str:
        return interval_text(
            row.get(value),
            row.get(low),
            row.get(high),
            zero_reason=pairwise_zero_reason(row, value, judges.get(str(row.get("judge", "")))),
            unreliable=bool(row.get("ci_unreliable")),
        )

    columns: list[Column] = []
    if any("category" in row for row in rows):
        columns.append(("category", lambda r: str(r.get("category", ""))))
    if len({row.get("judge") for row in rows}) > 1:
        columns.append(("judge", lambda r: str(r.get("judge", ""))))
    columns.append(("model", lambda r: str(r["model"]) + (" (baseline)" if r.get("baseline") else "")))
    if any("rating" in row for row in rows):
        columns += [
            ("rating", lambda r: _cell(r.get("rating"))),
            (ci, lambda r: _interval(r, "rating", "ci_low", "ci_high")),
            ("win rate", lambda r: _cell(r.get("winrate"))),
            (ci + " ", lambda r: _interval(r, "winrate", "winrate_ci_low", "winrate_ci_high")),
        ]
    else:
        columns += [
            ("score", lambda r: _cell(r.get("score"))),
            (ci, lambda r: _interval(r, "score", "ci_low", "ci_high")),
        ]
    if any("lc_estimate" in row for row in rows):  # the score is the win rate; LC only estimated
        columns.append(("LC (estimate)", lambda r: _cell(r.get("lc_estimate"))))
    elif any("win_rate" in row for row in rows):
        columns.append(("win rate", lambda r: _cell(r.get("win_rate"))))
    if any("anchored" in row for row in rows):  # --anchor: the retired judge's scale, its rank there
        columns += [
            ("anchored", lambda r: _cell((r.get("anchored") or {}).get("score"))),
            ("anchored 95% CI", lambda r: _anchored_ci(r.get("anchored"))),
            ("published rank", lambda r: _published_rank(r.get("anchored"))),
        ]
    if any("avg_tokens" in row for row in rows):
        columns.append(("avg tokens", lambda r: _tokens(r.get("avg_tokens"))))
    columns += [("n", lambda r: str(r.get("n", ""))), ("invalid", lambda r: _cell(r.get("invalid", 0)))]
    return columns


def _anchored_ci(anchored: Any) -> str:
    if not isinstance(anchored, dict) or None in (anchored.get("ci") or [None]):
        return "-"
    low, high = anchored["ci"]
    return f"[{low:.1f}, {high:.1f}]"


def _published_rank(anchored: Any) -> str:
    return "-" if not isinstance(anchored, dict) else f"{anchored['published_rank']}/{anchored['of']}"


def _tokens(value: Any) -> str:
    """Average answer length as Arena-Hard prints it: whole tokens."""
    return "-" if value is None else f"{value:.0f}"


def render_table(rows: list[Row], *, title: str, ci_level: float, sanity: list[Row] | None = None) -> Table:
    """A rich table: rank, model and the numbers of the chosen method, CIs as (-low / +high)
    (:func:`jurist.report.intervals.interval_text`)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title))
    columns = _table_columns(rows, ci_level, sanity)
    table.add_column("#", justify="right")
    for header, _ in columns:
        table.add_column(header, justify="left" if header in ("model", "judge", "category") else "right")
    for rank, row in enumerate(rows, start=1):
        table.add_row(str(rank), *(Text(cell(row)) for _, cell in columns))
    return table


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100.0 * value:.1f}%"


def table_console() -> Console:
    """stdout for tables; when it is not a terminal (a file, a CI log), wide enough that nothing is cut."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=160)


def stderr_console() -> Console:
    """stderr, for notes, warnings and progress (rich's Console, imported only now)."""
    from rich.console import Console

    return Console(stderr=True)


def render_sanity(rows: list[Row]) -> Table:
    """The judges' sanity: agreement of the two position-swapped games, ties, first-position wins."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="judge sanity (each question judged in both answer orders)")
    headers = ("judge", "consistent", "ties", "pos. A wins", "top verdict", "questions", "games")
    notes = any(row.get("note") for row in rows)
    for header in headers + (("note",) if notes else ()):
        if header == "judge":
            longest = max((len(str(row["judge"])) for row in rows), default=5)
            table.add_column(header, overflow="fold", min_width=min(longest, 40))  # never cut a name
        else:
            table.add_column(header, justify="left" if header == "note" else "right")
    for row in rows:
        top = "-" if row["label"] is None else f"{row['label']} {_share(row['label_share'])}"
        cells = [
            str(row["judge"]),
            _share(row["consistency"]),
            _share(row["tie_rate"]),
            _share(row["first_position_rate"]),
            top,
            str(row["n_questions"]),
            str(row["n_games"]),
        ]
        table.add_row(*(Text(cell) for cell in cells), *((Text(row.get("note") or ""),) if notes else ()))
    return table


def print_warnings(console: Console, sanity: list[Row], extra: list[str] | None = None) -> None:
    """One line per degenerate judge, in plain words (see :func:`jurist.ratings.sanity_warnings`), then
    the scoring's own warnings (e.g. an ill-conditioned style fit)."""
    from jurist.ratings import sanity_warnings

    for warning in [*sanity_warnings(sanity), *(extra or [])]:
        console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False, soft_wrap=True)


def print_rows(rows: list[Row], fmt: str, columns: tuple[str, ...] | None = None) -> None:
    """Rows on stdout as json, csv or markdown (``columns``: csv/markdown's, in order)."""
    if fmt == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    elif columns is None:
        print((render_csv if fmt == "csv" else render_markdown)(rows), end="")
    else:
        print((render_csv if fmt == "csv" else render_markdown)(rows, columns), end="")


def print_notes(console: Console, notes: list[str]) -> None:
    """What the reader should know about how the numbers were made (dimmed, never read as markup)."""
    from rich.text import Text

    for note in notes:
        console.print(Text(f"note: {note}", style="dim"), highlight=False, soft_wrap=True)


def _judgebench_cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def judgebench_table(rows: list[dict[str, Any]], *, title: str) -> Table:
    """Judge accuracy per judge; names and the title are plain text (``judge[x]`` keeps its brackets)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title))
    several_sets = len({row["response_model"] for row in rows}) > 1
    columns = [name for name in ROW_FIELDS if name != "response_model" or several_sets]
    for name in columns:
        if name in ("judge", "response_model"):
            table.add_column(name, overflow="fold")  # names are the point of the table: never cut them
        else:
            table.add_column(name, justify="right", min_width=len(name), no_wrap=True)
    for row in rows:
        table.add_row(*(Text(_judgebench_cell(row.get(name))) for name in columns))
    return table
