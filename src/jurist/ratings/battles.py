"""The battle vocabulary: outcome values, the whole-run category key, rounding. Every reader of battles
(the pairwise and placement families, the judges' sanity) uses these, so it sits below them all.
"""

from __future__ import annotations

from typing import Any

OUTCOME = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}
"""P(model_a wins) for each ``winner`` value of a battle."""

ALL = "*"
"""The category key of whole-run counts."""

Battle = dict[str, Any]
Row = dict[str, Any]


def r(value: float) -> float:
    """Published numbers carry four decimals (ratings.json and leaderboard.json agree to the digit)."""
    return round(float(value), 4)
