"""A family's reward for ``jurist serve reward``: one answer's stored judgment (or rule checks) turned into
one number as the family scores it, and the part of the reply that says what decided it.

The reward is written once per family, in the family's own place (``families/<family>/reward.py``); a
family serves rewards through an optional ``reward(kind, options)`` method of its class (a plugin family
without one serves none). :func:`family_reward` finds the family of a benchmark's metrics through the
registry, so the server (:mod:`jurist.serve`) holds only the HTTP, the batching, the limits and the wire
shapes, and never asks which family or benchmark it serves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from jurist.errors import JuristError
from jurist.families.registry import family_of_metrics, score_family

if TYPE_CHECKING:
    from jurist.benchmarks import Benchmark
    from jurist.judging import JudgeKind

RewardRule = Literal["debiased", "gen-base"]
"""A pairwise reward's rule: both position-swapped games (``debiased``) or NeMo-Gym's one game."""


@dataclass(frozen=True)
class RewardOptions:
    """What the server was asked of the reward: the pairwise rule, and the rules' loose evaluation."""

    rule: RewardRule = "debiased"
    loose: bool = False


class AnswerReward(Protocol):
    """One family's reward of one answer, for one benchmark and judge kind."""

    label: str
    """The family as the reply names it (``pairwise``, ``preference``, ``rubric``, ``rules``)."""
    rule: str
    """What the reward is, as ``/health`` says it (the pairwise rule; else the label)."""
    judged: bool
    """Whether an answer goes to the judge (False: it is checked by the benchmark's rule suite)."""
    against_baseline: bool
    """Whether the judge compares the answer with a baseline answer (the item's own, else the shipped one)."""
    two_games: bool
    """Whether a judgment is two position-swapped games (NeMo-Gym's ``/verify`` shape needs them)."""
    scale: float
    """The top of the reward's range: OpenRLHF's ``scores`` are the rewards over it, in [0, 1]."""

    def own_question(self, bench: str, has_instructions: bool) -> str | None:
        """Why a question that is no benchmark question cannot be rewarded (None: it can)."""
        ...

    def of(self, record: dict[str, Any]) -> float | None:
        """The reward of a stored judgment (or of a rule-check record); None: invalid, no reward."""
        ...

    def shown(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """What the reply shows of the record that decided the reward (empty record: a failed judge)."""
        ...


NOT_SHOWN = frozenset({"raw", "raw_chars", "usage", "reasks", "reask_raw", "reask_raw_chars", "reask_usage"})
"""A record's fields a reply leaves out: the judge's texts and usage."""


def without_texts(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A game or graded item as a reply shows it (:data:`NOT_SHOWN` left out)."""
    return {k: v for k, v in entry.items() if k not in NOT_SHOWN}


def family_reward(bench: Benchmark, kind: JudgeKind | None, options: RewardOptions) -> AnswerReward:
    """The reward of ``bench``'s family (the family of its metrics), for its judge ``kind`` (None: a
    benchmark checked by rules); one JuristError where the family serves no reward, or where ``options``
    ask for what its reward does not use (refused, never ignored)."""
    family = score_family(family_of_metrics(bench.metrics))
    make = getattr(family, "reward", None)
    if make is None:
        raise JuristError(f"{bench.name}: the {family.name} family serves no reward")
    reward: AnswerReward = make(kind, options)
    if options.loose and reward.judged:
        raise JuristError(
            f"--loose: {bench.name} is judged, not checked by rules: there is no loose evaluation"
        )
    if options.rule != "debiased" and reward.label != "pairwise":
        raise JuristError(
            f"--reward {options.rule}: {bench.name}'s reward is its {reward.label} one; the rule applies "
            "to two position-swapped games against a baseline (Arena-Hard's pairwise judging)"
        )
    return reward


__all__ = [
    "NOT_SHOWN",
    "AnswerReward",
    "RewardOptions",
    "RewardRule",
    "family_reward",
    "without_texts",
]
