"""Ratings that run off to infinity: the rows and warnings of a near-separated Bradley-Terry or style fit.

:mod:`jurist.ratings.separation` says, per model, whether the fit on all battles has a finite estimate and
in how many bootstrap replicates it has none. Here that becomes data a reader and a program both see: row
fields (``separation`` for an estimate that does not exist, ``ci_unreliable`` for an interval taken from
runaway replicates, kept in leaderboard.json and ratings.json) and one warning per model, printed under the
table by ``jurist run`` and ``jurist show`` alike.
"""

from __future__ import annotations

from typing import Any

from jurist.ratings import Row

SEPARATION_WORDS = {
    1: "won every game outright (no loss, no tie) against the rest",
    -1: "lost every game outright (no win, no tie) against the rest",
    2: "is cut off from the anchor (no result links it either way)",
}
"""Row field ``separation`` -> its meaning (the codes of :mod:`jurist.ratings.separation`)."""

_FIELD = {1: "won all", -1: "lost all", 2: "unlinked"}
RUNAWAY_FIELDS = ("separation", "ci_unreliable")
"""The row fields :func:`mark_runaways` may add."""


def mark_runaways(
    rows: list[Row], names: list[str], runaway: Any, ci_level: float, what: str, warnings: list[str] | None
) -> None:
    """Add ``separation`` / ``ci_unreliable`` to the rows of the models ``runaway`` (a
    :class:`jurist.ratings.Separation` over ``names``) flags, and a warning for each to ``warnings``.

    ``what`` names the fit in the warning ("Bradley-Terry (judge-x)"). Rows of unflagged models are left
    exactly as they were.
    """
    unreliable = runaway.interval_unreliable(ci_level)
    by_name = {row["model"]: row for row in rows}
    for k, name in enumerate(names):
        code = int(runaway.full[k])
        row = by_name.get(name)
        if row is None or not (code or unreliable[k]):
            continue
        if code:
            row["separation"] = _FIELD[code]
            message = (
                f"{what}: {name} {SEPARATION_WORDS[code]}, so its strength has no finite estimate: the "
                "printed number is where the solver stopped, not a measurement"
            )
        else:
            row["ci_unreliable"] = True
            message = _interval_message(what, name, runaway, k)
        if runaway.n_bootstrap and code:
            row["ci_unreliable"] = True
        if warnings is not None:
            warnings.append(message)


def _interval_message(what: str, name: str, runaway: Any, k: int) -> str:
    up, down, total = int(runaway.boot_up[k]), int(runaway.boot_down[k]), runaway.n_bootstrap
    sides = []
    if up:
        sides.append(f"won every game in {up}")
    if down:
        sides.append(f"lost every game in {down}")
    return (
        f"{what}: the interval of {name} is not trustworthy (marked *): it {' and '.join(sides)} of "
        f"{total} bootstrap replicates, where its rating runs off to infinity, and the interval's end is "
        "taken from those; more battles would bound it"
    )
