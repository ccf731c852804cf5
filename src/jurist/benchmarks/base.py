"""What a benchmark is: questions (and, optionally, the answers of its own baseline)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Question:
    """One prompt to answer. ``uid`` is unique within its benchmark."""

    uid: str
    prompt: str
    category: str = "default"
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Benchmark:
    """A named question set; ``baseline_answers`` (uid -> text) when the benchmark ships its own baseline."""

    name: str
    questions: list[Question]
    baseline: str | None = None
    baseline_answers: dict[str, str] | None = None
    judge_protocol: str = "arena-hard"

    def limited(self, limit: int | None) -> Benchmark:
        if limit is None or limit >= len(self.questions):
            return self
        return Benchmark(
            self.name, self.questions[:limit], self.baseline, self.baseline_answers, self.judge_protocol
        )
