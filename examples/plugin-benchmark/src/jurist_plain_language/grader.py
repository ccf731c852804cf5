"""The grader of plain-language: one request per rubric criterion, asked with this package's own prompt.

It is what jurist's rubric judge kind asks of a grader (``jurist.judging.rubric_prompts.RubricGrader``):
the items of a question, the request for one item, how a reply is read and what a grade is worth. The
points it writes are scored as jurist scores a points rubric (``metric = "healthbench"``: an answer
scores the points of the criteria it meets over the positive points it could meet, clipped to [0, 1]).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from jurist.benchmarks import Question
from jurist.errors import InputError
from jurist.judging import JudgePromptSource

PROTOCOL = "plain-language"
PLACEHOLDERS = ("<<question>>", "<<answer>>", "<<criterion>>")
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS))
REASK = 'That reply could not be read. Reply with only {"met": true or false, "reason": "..."}.'
READER_VERSION = 1
"""Bump when :func:`read_grade` accepts other replies, so that stored grades are asked again."""


def packaged_prompt() -> Path:
    """The grader prompt this package ships (its own words)."""
    return Path(str(files("jurist_plain_language").joinpath("grader_prompt.txt")))


def read_grade(text: str) -> dict[str, Any] | None:
    """The grade in a reply: a JSON object (a Markdown fence around it is fine) whose ``met`` is a JSON
    boolean; None for anything else, so the rubric kind asks once more and then records "unscored"."""
    cleaned = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        data = json.loads(cleaned)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("met"), bool):
        return None
    reason = data.get("reason")
    return {"met": data["met"], "explanation": reason if isinstance(reason, str) else None}


@dataclass(frozen=True)
class PlainLanguageGrader:
    template: str
    source: str
    presets: Mapping[str, Any] = field(default_factory=dict)
    name: str = PROTOCOL
    metric: str = "healthbench"
    reask_text: str = REASK
    reads_written = False

    @property
    def fingerprint(self) -> str:
        """Everything that shapes a grade besides the answer: a change re-grades exactly what it touches."""
        data = [self.name, self.template, self.reask_text, dict(self.presets), READER_VERSION]
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def items(self, question: Question) -> list[dict[str, Any]]:
        return [dict(item) for item in question.metadata["rubric"]]

    def facts(self, question: Question) -> dict[str, Any]:
        return {"example_tags": [f"category:{question.category}"]}

    def shown(self, answer: str, written: str | None) -> str:
        return answer

    def messages(self, question: Question, answer: str, index: int) -> list[dict[str, str]]:
        values = {
            "<<question>>": question.prompt,
            "<<answer>>": answer,
            "<<criterion>>": str(question.metadata["rubric"][index]["criterion"]),
        }
        # one pass: an answer that contains "<<criterion>>" stays text
        return [{"role": "user", "content": _PLACEHOLDER.sub(lambda m: values[m.group(0)], self.template)}]

    def read(self, text: str) -> dict[str, Any] | None:
        return read_grade(text)

    def value(self, grade: Mapping[str, Any]) -> float:
        return 1.0 if grade["met"] else 0.0


def build_grader(prompt_file: Path | None, source: JudgePromptSource) -> PlainLanguageGrader:
    """The grader jurist's rubric kind asks for: this package's prompt, or ``--judge-prompt FILE``."""
    path = prompt_file if prompt_file is not None else source.files()[0]
    template = path.read_text(encoding="utf-8")
    for placeholder in PLACEHOLDERS:
        if placeholder not in template:
            raise InputError(path, "grader prompt", f"missing placeholder {placeholder}")
    origin = f"{path} (--judge-prompt)" if prompt_file is not None else source.origin
    return PlainLanguageGrader(template, origin, dict(source.presets))
