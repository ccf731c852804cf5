"""What a benchmark is: data plus choices.

A benchmark is its questions (with per-question metadata), the answers it ships (a reference baseline, or
JudgeBench's fixed response pairs), which baseline each question is judged against, its judge kind (or
none, for rule-checked tasks), the metrics it reports and how many samples it takes per prompt by default.
The runner reads only these fields, so a new benchmark is one module plus one registry line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from jurist.errors import JuristError

JudgeKindName = Literal["pairwise"]
"""The judge kinds the runner knows; rubric and rule kinds are added as modules beside pairwise."""

Metric = Literal["winrate", "judge-accuracy"]
"""What scoring reports: a win rate against the baseline (with every ``show`` method), or judge accuracy."""

BenchmarkOptions = Mapping[str, str]
"""``-B key=value`` options of ``jurist run``, passed to the benchmark's factory untouched."""


@dataclass(frozen=True, slots=True)
class Question:
    """One prompt to answer. ``uid`` is unique within its benchmark; ``metadata`` is the benchmark's own."""

    uid: str
    prompt: str
    category: str = "default"
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Benchmark:
    """A named set of questions and the choices that say how to answer, judge and score them."""

    name: str
    questions: Sequence[Question]
    shipped_answers: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Answers the benchmark brings: model alias -> uid -> text (written to ``answers/`` as sample 0)."""
    baseline: str | None = None
    """The baseline every question is judged against, unless ``baselines_by_category`` names another."""
    baselines_by_category: Mapping[str, str] = field(default_factory=dict)
    candidates: tuple[str, ...] = ()
    """Models the benchmark fixes itself (JudgeBench judges its shipped pairs); empty: ``--model`` decides."""
    judge_kind: JudgeKindName | None = "pairwise"
    judge_protocol: str = "arena-hard"
    metrics: tuple[Metric, ...] = ("winrate",)
    default_samples: int = 1
    info: Mapping[str, Any] = field(default_factory=dict)
    """Facts for run.json and reports (a split name, the model that wrote shipped answers...)."""

    def baseline_for(self, question: Question) -> str | None:
        """The baseline ``question`` is judged against (Arena-Hard v2.0: one per category)."""
        return self.baselines_by_category.get(question.category, self.baseline)

    def baselines(self) -> list[str]:
        """Every baseline some question is judged against, in first-use order."""
        named = (self.baseline_for(q) for q in self.questions)
        return list(dict.fromkeys(name for name in named if name is not None))

    def limited(self, limit: int | None) -> Benchmark:
        if limit is None or limit >= len(self.questions):
            return self
        return dataclasses.replace(self, questions=list(self.questions[:limit]))

    def with_baseline(self, baseline: str) -> Benchmark:
        """Every question judged against ``baseline`` (``--baseline`` overrides the benchmark's choice)."""
        return dataclasses.replace(self, baseline=baseline, baselines_by_category={})


def take_options(benchmark: str, options: BenchmarkOptions, allowed: Mapping[str, str]) -> dict[str, str]:
    """The ``-B`` options of ``benchmark``, refusing any it does not take (``allowed``: name -> help)."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        takes = ", ".join(f"{name} ({text})" for name, text in allowed.items()) or "none"
        raise JuristError(f"-B {unknown[0]}: {benchmark} has no such option (it takes: {takes})")
    return dict(options)
