"""THE interval format of every table: ``(-x / +y)``, distances below and above the point estimate.

One formatter, so a leaderboard, a rubric table, a rule table, a placement table and the tasks summary all
read alike. An interval with no width at the printed precision is not shown as a bare ``(-0.0 / +0.0)``,
which reads as certainty: it says why it has none (``(±0: won every game)``), one narrower than the
printed precision says so (``(±<0.1)``), and an interval that is not
trustworthy (taken from bootstrap replicates whose estimate ran off: near-separated data) carries a ``*``
that the warning under the table explains.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NO_WIDTH = "every resample gave the same value"
"""The reason of a zero-width interval when the caller knows no better one."""

UNRELIABLE_MARK = "*"


def interval_text(
    value: Any,
    low: Any,
    high: Any,
    *,
    digits: int = 1,
    scale: float = 1.0,
    zero_reason: str | None = None,
    unreliable: bool = False,
) -> str:
    """``(-x / +y)`` for a point ``value`` in [``low``, ``high``] (each times ``scale``), ``-`` when any
    is missing; ``(±0: reason)`` when the interval has no width, ``(±<0.1)`` when its width is below the
    printed precision; ``*`` after an interval that is not trustworthy."""
    if not all(isinstance(v, (int, float)) for v in (value, low, high)):
        return "-"
    below, above = scale * (value - low), scale * (high - value)
    zero = f"{0.0:.{digits}f}"
    mark = UNRELIABLE_MARK if unreliable else ""
    if f"{abs(below):.{digits}f}" == zero and f"{abs(above):.{digits}f}" == zero:
        if max(abs(below), abs(above)) <= 1e-9 * max(abs(scale * value), 1.0):
            return f"(±0: {zero_reason or NO_WIDTH}){mark}"
        return f"(±<{10.0**-digits:.{digits}f}){mark}"  # some width, below the printed precision
    return f"(-{max(below, 0.0):.{digits}f} / +{max(above, 0.0):.{digits}f}){mark}"


def pairwise_zero_reason(row: Mapping[str, Any], value_key: str, sanity: Mapping[str, Any] | None) -> str:
    """Why a pairwise row's interval has no width, from the row itself and its judge's sanity row."""
    value = row.get(value_key)
    if row.get("baseline"):
        return "the anchor" if value_key == "rating" else "the baseline"
    if value_key in ("score", "winrate") and isinstance(value, (int, float)):
        if value >= 100.0:
            return "won every game"
        if value <= 0.0:
            return "lost every game"
    if sanity:
        first = sanity.get("first_position_rate")
        if sanity.get("tie_rate") == 1.0:
            return "every game a tie"
        if first in (0.0, 1.0) and sanity.get("consistency") == 0.0:
            return f"the judge always picked {'A' if first == 1.0 else 'B'}"
    return NO_WIDTH
