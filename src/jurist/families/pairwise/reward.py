"""The pairwise family's reward of one answer, read off the judgment ``jurist run`` stores for it.

- Two position-swapped games (Arena-Hard, starter, question files; ``debiased``, the default): the
  judgment's battles as the run scores them (a strong verdict weighing ``strong_weight`` as in Arena-Hard's
  weighted win rate; a game the protocol drops does not count), averaged as P(candidate beats baseline):
  a win 1, a tie 0.5, a loss 0. ``gen-base``: NeMo-Gym's one-game rule, 1.0 iff the game that shows the
  candidate first says ``A>>B`` or ``A>B``.
- AlpacaEval's preference kind (one game read as a soft preference): ``p_model``, the probability read
  from the judge's logprobs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from jurist.families.reward import RewardOptions, RewardRule, without_texts

if TYPE_CHECKING:
    from jurist.families.reward import AnswerReward
    from jurist.judging import JudgeKind

WINNING = ("A>>B", "A>B")
"""The labels NeMo-Gym's arena_judge rewards, in the game that shows the candidate as A."""
PREFERENCE_SHOWN = ("preference", "p_model", "switched", "verdict_source", "p_first", "label_logprobs")
"""The fields of a preference judgment a reply shows."""


def games_reward(
    record: dict[str, Any],
    battles: Callable[[dict[str, Any]], list[dict[str, Any]]],
    rule: RewardRule = "debiased",
) -> float | None:
    """The reward of a two-game judgment ``record`` for its ``model``; ``battles``: the kind's outcomes."""
    if rule == "gen-base":
        first = candidate_first_game(record)
        if first is None:
            return None
        return 1.0 if first.get("label") in WINNING else 0.0
    candidate = record.get("model")
    won = weight = 0.0
    for battle in battles(record):
        share = float(battle.get("weight", 1))
        if battle["winner"] == "tie":
            score = 0.5
        else:
            side = battle["model_a"] if battle["winner"] == "model_a" else battle["model_b"]
            score = 1.0 if side == candidate else 0.0
        won, weight = won + share * score, weight + share
    return won / weight if weight > 0 else None


def candidate_first_game(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The game that shows the candidate in position A (jurist's game 2; NeMo-Gym's ``gen_base``)."""
    return _game(record, record.get("model"))


def baseline_first_game(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The game that shows the baseline in position A (jurist's game 1; NeMo-Gym's ``base_gen``)."""
    return _game(record, record.get("baseline"))


def _game(record: Mapping[str, Any], first: Any) -> dict[str, Any] | None:
    for game in record.get("games") or []:
        if game.get("a") == first:
            return dict(game)
    return None


def preference_reward(record: Mapping[str, Any]) -> float | None:
    """AlpacaEval's preference of the candidate over the baseline, in [0, 1]."""
    p = record.get("p_model")
    return None if record.get("invalid") or p is None else float(p)


class GamesReward:
    """Two position-swapped games against the baseline's answer, rewarded by ``rule``."""

    label = "pairwise"
    judged = True
    against_baseline = True
    two_games = True
    scale = 1.0

    def __init__(self, battles: Callable[[dict[str, Any]], list[dict[str, Any]]], rule: RewardRule) -> None:
        self.battles, self.games_rule = battles, rule
        self.rule: str = rule

    def own_question(self, bench: str, has_instructions: bool) -> str | None:
        return None

    def of(self, record: dict[str, Any]) -> float | None:
        return games_reward(record, self.battles, self.games_rule)

    def shown(self, record: Mapping[str, Any]) -> dict[str, Any]:
        if not record:
            return {}
        games = [
            {
                **without_texts(game),
                "first": "candidate" if game.get("a") == record.get("model") else "baseline",
            }
            for game in record.get("games") or []
        ]
        return {"games": games}


class PreferenceReward:
    """One game against the baseline's answer, read as AlpacaEval's preference probability."""

    label = rule = "preference"
    judged = True
    against_baseline = True
    two_games = False
    scale = 1.0

    def own_question(self, bench: str, has_instructions: bool) -> str | None:
        return None

    def of(self, record: dict[str, Any]) -> float | None:
        return preference_reward(record)

    def shown(self, record: Mapping[str, Any]) -> dict[str, Any]:
        if not record:
            return {}
        return {"preference": {name: record[name] for name in PREFERENCE_SHOWN if name in record}}


def pairwise_reward(kind: JudgeKind | None, options: RewardOptions) -> AnswerReward:
    """The reward of an answer the judge ``kind`` compares with a baseline's: AlpacaEval's preference
    where the kind reads one game as a probability, else the two games by ``options.rule``."""
    from jurist.judging import AlpacaJudge

    assert kind is not None, "a pairwise benchmark is judged"
    if isinstance(kind, AlpacaJudge):
        return PreferenceReward()
    return GamesReward(kind.outcomes, options.rule)


__all__ = [
    "GamesReward",
    "PreferenceReward",
    "baseline_first_game",
    "candidate_first_game",
    "games_reward",
    "pairwise_reward",
    "preference_reward",
]
