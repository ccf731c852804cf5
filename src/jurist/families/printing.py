"""Printing a run's scores, whatever their family: ``jurist run`` (at its end) and ``jurist show`` both
print :class:`jurist.families.door.Scores` through :func:`print_scores`, so they print the same headline and
rows. ``table``: the family's tables on stdout, then its warnings; other formats: the rows alone on stdout.
Notes go to stderr in every format. What the tables hold is each family's (its ``print_scores``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist.families.registry import score_family
from jurist.report import print_notes, stderr_console, table_console

if TYPE_CHECKING:
    from rich.console import Console

    from jurist.families.door import Scores

FORMATS = ("table", "json", "csv", "markdown")


def print_scores(
    scores: Scores,
    fmt: str = "table",
    *,
    out: Console | None = None,
    err: Console | None = None,
    detail: bool = False,
) -> None:
    """The scores in ``fmt`` (``detail``: the per-instruction / subdomain breakdowns too)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    out = out or table_console()
    err = err or stderr_console()
    title = f"{scores.title} ({scores.headline})"
    score_family(scores.family).print_scores(scores, fmt, title, out, err, detail)
    print_notes(err, scores.notes)
