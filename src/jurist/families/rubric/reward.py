"""The rubric family's reward of one answer: the benchmark's own score of it, from the kind's graded
items (HealthBench's Σ points met / Σ positive points, unclipped as simple-evals scores one example;
WritingBench's mean criterion score, 1-10; a registered grader's points' mean)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jurist.benchmarks import rubric_suite
from jurist.families.reward import RewardOptions, without_texts
from jurist.families.rubric.answer import answer_score

if TYPE_CHECKING:
    from jurist.families.reward import AnswerReward
    from jurist.judging import JudgeKind


class RubricReward:
    """An answer graded on its own by its question's rubric."""

    label = rule = "rubric"
    judged = True
    against_baseline = False
    two_games = False

    def __init__(self, kind: JudgeKind) -> None:
        self.kind = kind
        suite = rubric_suite(str(getattr(getattr(kind, "grader", None), "metric", "")))
        self.scale = suite.scale[1] if suite is not None and suite.scale[1] > 1.0 else 1.0  # 1-10: its top

    def own_question(self, bench: str, has_instructions: bool) -> str | None:
        return f"{bench} grades with each question's rubric: give the uid"

    def of(self, record: dict[str, Any]) -> float | None:
        """The answer's score (None: an item unscored)."""
        return answer_score(self.kind.outcomes(record), rubric_suite(str(record.get("metric", ""))))

    def shown(self, record: Mapping[str, Any]) -> dict[str, Any]:
        return {"rubric": [without_texts(entry) for entry in record.get("items") or []]}


def rubric_reward(kind: JudgeKind | None, options: RewardOptions) -> AnswerReward:
    assert kind is not None, "a rubric benchmark is judged"
    return RubricReward(kind)


__all__ = ["RubricReward", "rubric_reward"]
