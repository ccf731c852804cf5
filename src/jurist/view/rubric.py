"""A rubric judgment (HealthBench, WritingBench) read for the browser: the answer's score on its own scale.

A ``rubric`` record holds one graded entry per item of one answer (:mod:`jurist.judging.rubric`); the page
shows every item and this module gives the answer's score the way :mod:`jurist.families.rubric.score` computes
it before averaging: HealthBench, Σ points of the met items / Σ positive points (unclipped, may be negative);
WritingBench, the mean of the criterion scores (1-10). An answer with an unscored item has no score, as in
scoring, where it is left out and counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jurist.benchmarks import rubric_suite
from jurist.view import codes


@dataclass(frozen=True)
class Scale:
    """The range an answer's score lies in, and how its items make it (the suite's grading)."""

    low: float
    high: float
    grading: str


_DEFAULT_SUITE = "healthbench"
"""A rubric record that names no declared suite is read as HealthBench's (points met over possible)."""


def scale_of(record: Mapping[str, Any]) -> Scale:
    """The scale of the record's suite (:class:`jurist.benchmarks.base.RubricSuite`, found by the record's
    metric, else its protocol), else HealthBench's fraction of the possible points."""
    suite = rubric_suite(record.get("metric")) or rubric_suite(record.get("protocol"))
    suite = suite or rubric_suite(_DEFAULT_SUITE)
    assert suite is not None
    return Scale(suite.scale[0], suite.scale[1], suite.grading)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def answer_score(record: Mapping[str, Any]) -> float | None:
    """The answer's score on :func:`scale_of`'s scale; None when an item is unscored or none is scorable."""
    items = [item for item in record.get("items") or [] if isinstance(item, Mapping)]
    if not items or any(item.get("status") != "scored" for item in items):
        return None
    if scale_of(record).grading == "criteria":
        scores = [_number(item.get("score")) for item in items]
        known = [score for score in scores if score is not None]
        return sum(known) / len(known) if len(known) == len(scores) else None
    possible = met = 0.0
    for item in items:
        points = _number(item.get("points"))
        if points is None or not isinstance(item.get("met"), bool):
            return None
        possible += max(points, 0.0)
        met += points if item["met"] else 0.0
    return met / possible if possible > 0 else None


def rubric_code(record: Mapping[str, Any]) -> tuple[int, float | None]:
    """(cell code, answer score): full marks pass, the scale's floor fails, anything between is partial."""
    score = answer_score(record)
    if score is None:
        return codes.POINT_UNSCORED, None
    scale = scale_of(record)
    return codes.point_code((score - scale.low) / (scale.high - scale.low)), score
