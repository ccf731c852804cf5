"""Stored judgments as the judge card reads them: the verdicts alone, without the judge's texts.

A run's judgments hold every reply in full; the card needs only who was shown where and what the judge
said, so each record is cut down to that once, and the run's answers are read again only for the few
items a probe sends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Game:
    """One pairwise game: the models shown in positions A and B, and the verdict label (None: invalid)."""

    number: int
    a: str
    b: str
    label: str | None
    p_b_better: float | None = None
    """The probability that B is better, where the judge gave one (the logprob protocol)."""

    def winner(self) -> str | None:
        """The model the verdict prefers; None for a tie (or no verdict)."""
        if self.label is None or self.label == "A=B":
            return None
        return self.a if self.label.startswith("A") else self.b

    def score(self, model: str) -> float:
        """1 when the verdict prefers ``model``, 0.5 for a tie, 0 when it prefers the other."""
        won = self.winner()
        return 0.5 if won is None else float(won == model)


@dataclass(frozen=True, slots=True)
class Verdicts:
    """One stored pairwise judgment: its item and its games."""

    model: str
    baseline: str
    uid: str
    sample: int
    games: tuple[Game, ...]

    @property
    def valid(self) -> bool:
        return bool(self.games) and all(game.label is not None for game in self.games)

    def agreed_winner(self) -> str | None:
        """The model both position-swapped games prefer; None when they disagree, tie or are not two."""
        if len(self.games) != 2 or not self.valid:
            return None
        first, second = (game.winner() for game in self.games)
        return first if first is not None and first == second else None


@dataclass(frozen=True, slots=True)
class Grades:
    """One stored rubric judgment: its item and, per rubric item, its index, points and stored value."""

    model: str
    uid: str
    sample: int
    items: tuple[tuple[int, float | None, float | None], ...]
    """(item index, the item's points where it has some, the value the grader gave; None: unscored)."""


def verdicts_of(record: Mapping[str, Any]) -> Verdicts:
    games = tuple(
        Game(
            int(game.get("game", n + 1)),
            str(game["a"]),
            str(game["b"]),
            game.get("label"),
            game.get("p_b_better"),
        )
        for n, game in enumerate(record.get("games") or ())
    )
    return Verdicts(
        str(record["model"]), str(record["baseline"]), str(record["uid"]), int(record.get("sample", 0)), games
    )


def grades_of(record: Mapping[str, Any], values: Sequence[float | None]) -> Grades:
    """A rubric record with ``values`` (the grader's value of each item, None where unscored)."""
    items = tuple(
        (int(entry.get("item", n)), entry.get("points"), value)
        for n, (entry, value) in enumerate(zip(record.get("items") or (), values, strict=True))
    )
    return Grades(str(record["model"]), str(record["uid"]), int(record.get("sample", 0)), items)


@dataclass(frozen=True, slots=True)
class Preference:
    """One stored preference judgment (AlpacaEval's one game): P(the model's answer is better)."""

    model: str
    baseline: str
    uid: str
    sample: int
    p_model: float | None


def preference_of(record: Mapping[str, Any]) -> Preference:
    p = record.get("p_model")
    return Preference(
        str(record["model"]),
        str(record["baseline"]),
        str(record["uid"]),
        int(record.get("sample", 0)),
        None if p is None or record.get("invalid") else float(p),
    )


def hard(p: float) -> float:
    """A probability that one side is better as a verdict for that side: 1 won, 0.5 a tie, 0 lost."""
    return 1.0 if p > 0.5 else 0.0 if p < 0.5 else 0.5
