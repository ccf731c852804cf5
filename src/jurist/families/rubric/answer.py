"""One rubric answer's score, as its suite scores it (the reward server's reward for a graded answer)."""

from __future__ import annotations

from collections.abc import Sequence

from jurist.benchmarks import RubricSuite
from jurist.families.rubric.score import Point, healthbench_metrics


def answer_score(points: Sequence[Point], suite: RubricSuite | None) -> float | None:
    """One answer's score as its suite scores it, from its graded items (None: an item unscored, or no
    positive points): met over possible points, the mean of the 1-10 criterion scores, or, for a suite
    nobody declared (a registered grader's own), the mean of the items' values."""
    if not points or any(point.get("value") is None for point in points):
        return None
    if suite is None:
        return sum(float(point["value"]) for point in points) / len(points)
    if suite.grading == "criteria":
        scores = [float(point["detail"]["score"]) for point in points]
        return sum(scores) / len(scores)
    return healthbench_metrics(points).get("overall_score")
