"""Stored judgments as the judge card reads them: the verdicts alone, without the judge's texts.

A run's judgments hold every reply in full; the card needs only who was shown where and what the judge
said, so each record is cut down to that once, and the run's answers are read again only for the few
items a probe sends. Every measure of judge quality reads these records: the card's probes, the gold file,
and the agreement of several judges (:mod:`jurist.audit.agreement`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jurist.judging import swap_label


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

    def decision(self, first: str) -> str | None:
        """The verdict in the pair's own order (``first``'s answer as A: "A>B" it won, "B>A" it lost, "A=B"
        a tie), whatever position each answer was shown in; None without a verdict. The swapped games of
        one question compare directly in this frame (:mod:`jurist.ratings.judge_quality`)."""
        if self.label is None:
            return None
        won = self.winner()
        return "A=B" if won is None else "A>B" if won == first else "B>A"

    def seen_from(self, model: str) -> str | None:
        """The five-level label as if ``model``'s answer had been shown as A; None for no verdict or a
        game that did not show ``model``."""
        if not isinstance(self.label, str):
            return None
        if self.a == model:
            return self.label
        return swap_label(self.label) if self.b == model else None


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


def games_of(record: Mapping[str, Any]) -> tuple[Game, ...]:
    """A stored pairwise judgment's games (numbered from 1 where the record does not number them)."""
    return tuple(
        Game(
            int(game.get("game", n + 1)),
            str(game["a"]),
            str(game["b"]),
            game.get("label"),
            game.get("p_b_better"),
        )
        for n, game in enumerate(record.get("games") or ())
    )


def verdicts_of(record: Mapping[str, Any]) -> Verdicts:
    return Verdicts(
        str(record["model"]),
        str(record["baseline"]),
        str(record["uid"]),
        int(record.get("sample", 0)),
        games_of(record),
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


def preference_decision(p_model: float | None) -> str | None:
    """A preference judgment's one game in the pair's own order (the baseline as A): the side its
    probability favours, a tie at one half; None without a probability."""
    if p_model is None:
        return None
    return "B>A" if p_model > 0.5 else "A>B" if p_model < 0.5 else "A=B"


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
