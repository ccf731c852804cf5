"""How far a pairwise judge's verdicts can be trusted, as arithmetic: position bias, swap consistency and
JudgeBench's pair rule. Pure: labels in, numbers out; every caller (the run's sanity table, the judge
card, JudgeBench's accuracy) adapts its own records to these arrays, so each measure has one definition.

Two label frames meet here. A *position* label says what the judge said about the positions it was shown
("A>B": the answer shown first won; five-level labels allowed). A *decision* is a game's verdict in the
pair's own order, whatever position each answer was shown in ("A>B": the pair's first answer won, "A=B"
a tie, None no verdict), so the two position-swapped games of one question can be compared directly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where the arrays are made: JudgeBench's pair rule and the run's
    import numpy as np  # sanity table need none of it, and it is 0.1 s of a run's start
    import numpy.typing as npt

TIE = "A=B"
DECISIONS: tuple[str, ...] = ("A>B", TIE, "B>A")
"""A game's or a pair's decision in the pair's own order (A: the pair's first answer), or a tie."""
_OPPOSITE = {"A>B": "B>A", "B>A": "A>B"}


def first_position_wins(labels: Sequence[str | None]) -> npt.NDArray[np.float64]:
    """Per game, from its position label: 1.0 when the answer shown first won, 0.0 when the second did,
    NaN for a tie or no verdict (neither position won)."""
    import numpy as np

    return np.array(
        [math.nan if label is None or label == TIE else float(label.startswith("A")) for label in labels],
        dtype=np.float64,
    )


def first_position_rate(labels: Sequence[str | None]) -> float:
    """Share of decisive games won by the answer shown first (0.5: no position bias); NaN with none."""
    import numpy as np

    wins = first_position_wins(labels)
    decisive = wins[~np.isnan(wins)]
    return float(decisive.sum() / decisive.size) if decisive.size else math.nan


def swap_agreements(first: Sequence[str | None], second: Sequence[str | None]) -> npt.NDArray[np.float64]:
    """Per question, from the decisions (pair order) of its two position-swapped games: 1.0 when both
    name the same winner (a tie in both counts as the same), 0.0 otherwise, a missing verdict included:
    agreement with a verdict that does not exist cannot be claimed."""
    if len(first) != len(second):
        raise ValueError(f"{len(first)} first games for {len(second)} second games")
    import numpy as np

    return np.array(
        [float(a is not None and a == b) for a, b in zip(first, second, strict=True)], dtype=np.float64
    )


def swap_consistency(first: Sequence[str | None], second: Sequence[str | None]) -> float:
    """Share of questions whose two position-swapped games agree (:func:`swap_agreements`); NaN with none."""
    agreed = swap_agreements(first, second)
    return float(agreed.sum() / agreed.size) if agreed.size else math.nan


def game_points(decision: str | None, label: str) -> int:
    """JudgeBench's points of one game (its decision in the pair's order) against the gold ``label``
    ("A>B" or "B>A"): +1 for the label, -1 for the opposite one, 0 for a tie or no decision."""
    if decision == label:
        return 1
    return -1 if decision is not None and decision == _OPPOSITE.get(label) else 0


def pair_points(label: str, games: Sequence[str | None]) -> int:
    """A pair's summed game points (in [-2, 2] for two games); JudgeBench counts the pair right when it
    is positive, so right+right and right+tie count, right+wrong (a position bias) and tie+tie do not."""
    return sum(game_points(decision, label) for decision in games)


def pair_decision(label: str, games: Sequence[str | None]) -> str:
    """One pair's decision from its games (each in the pair's order): the side its summed points favour,
    or a tie; by JudgeBench's rule the pair is right exactly when this equals ``label``."""
    total = pair_points(label, games)
    return label if total > 0 else _OPPOSITE[label] if total < 0 else TIE
