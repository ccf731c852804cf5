"""What a reward is, per family, read off the very record ``jurist run`` stores for the same judgment.

Nothing here asks a judge or parses a reply: the judge kinds did that (:mod:`jurist.judging`), and these
functions only turn their stored judgment (or the rule checks) into one number, so the reward and the
benchmark's score are computed from the same verdicts.

- **pairwise** (``debiased``, the default): the judgment's battles as the run scores them (both
  position-swapped games, a strong verdict weighing ``strong_weight`` as in Arena-Hard's weighted win rate;
  a game the protocol drops does not count), averaged as P(candidate beats baseline): a win 1, a tie 0.5,
  a loss 0. ``gen-base``: NeMo-Gym's one-game rule, 1.0 iff the game that shows the candidate first says
  ``A>>B`` or ``A>B``.
- **preference** (AlpacaEval): ``p_model``, the preference probability read from the judge's logprobs.
- **rubric**: the benchmark's own score of that answer: HealthBench's Σ points met / Σ positive points
  (unclipped, as simple-evals scores one example), WritingBench's mean criterion score (1-10).
- **rules**: the share of the prompt's instructions followed, strict (or loose).

None means there is no reward: the judgment is invalid (no readable verdict, an unscored rubric item).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from jurist.benchmarks import rubric_suite
from jurist.families import answer_score

RewardRule = Literal["debiased", "gen-base"]
WINNING = ("A>>B", "A>B")
"""The labels NeMo-Gym's arena_judge rewards, in the game that shows the candidate as A."""


def pairwise_reward(
    record: dict[str, Any],
    battles: Callable[[dict[str, Any]], list[dict[str, Any]]],
    candidate: str,
    rule: RewardRule = "debiased",
) -> float | None:
    """The reward of a pairwise (or preference) judgment ``record``; ``battles``: the kind's outcomes."""
    if rule == "gen-base":
        first = candidate_first_game(record)
        if first is None:
            return None
        return 1.0 if first.get("label") in WINNING else 0.0
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


def candidate_first_game(record: dict[str, Any]) -> dict[str, Any] | None:
    """The game that shows the candidate in position A (jurist's game 2; NeMo-Gym's ``gen_base``)."""
    return _game(record, record.get("model"))


def baseline_first_game(record: dict[str, Any]) -> dict[str, Any] | None:
    """The game that shows the baseline in position A (jurist's game 1; NeMo-Gym's ``base_gen``)."""
    return _game(record, record.get("baseline"))


def _game(record: dict[str, Any], first: Any) -> dict[str, Any] | None:
    for game in record.get("games") or []:
        if game.get("a") == first:
            return dict(game)
    return None


def preference_reward(record: dict[str, Any]) -> float | None:
    """AlpacaEval's preference of the candidate over the baseline, in [0, 1]."""
    p = record.get("p_model")
    return None if record.get("invalid") or p is None else float(p)


def rubric_reward(points: Sequence[dict[str, Any]], metric: str) -> float | None:
    """One answer's score as its benchmark scores it, from the kind's points (None: an item unscored);
    a registered grader's: its points' mean."""
    return answer_score(points, rubric_suite(metric))


def rules_reward(checks: Sequence[dict[str, Any]], *, loose: bool = False) -> float:
    """The share of instructions followed (strict, or loose); a prompt with none scores 1."""
    if not checks:
        return 1.0
    field = "loose" if loose else "strict"
    return sum(1 for check in checks if check[field]) / len(checks)


__all__ = [
    "RewardRule",
    "baseline_first_game",
    "candidate_first_game",
    "pairwise_reward",
    "preference_reward",
    "rubric_reward",
    "rules_reward",
]
