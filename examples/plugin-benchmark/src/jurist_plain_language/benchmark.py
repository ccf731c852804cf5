"""plain-language: three questions a layperson asks, each answer graded per rubric criterion.

jurist finds this module through the entry point in ``pyproject.toml`` (group ``jurist.benchmarks``) and
reads it as it reads its own benchmark modules: ``benchmark(options)`` builds the benchmark and
``catalog_card(name)`` says what ``jurist list`` shows. Nothing in jurist names this package.
"""

from __future__ import annotations

import json
from importlib.resources import files

from jurist.benchmarks import (
    Benchmark,
    BenchmarkCard,
    BenchmarkOptions,
    Found,
    Need,
    Question,
    package_file,
    take_options,
)
from jurist.judging import JudgePromptSource
from jurist_plain_language.grader import PROTOCOL, build_grader, packaged_prompt

NAME = "plain-language"
PACKAGE = "jurist_plain_language"

PROMPT = JudgePromptSource(
    origin="jurist-plain-language's own grader prompt",
    files=lambda: [packaged_prompt()],
    grader=build_grader,
)
"""What the benchmark hands jurist's rubric kind: its prompt file and the grader that reads it."""


def questions() -> list[Question]:
    text = files(PACKAGE).joinpath("questions.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [
        Question(
            uid=row["uid"], prompt=row["prompt"], category=row["category"], metadata={"rubric": row["rubric"]}
        )
        for row in rows
    ]


def benchmark(options: BenchmarkOptions) -> Benchmark:
    """The benchmark; it takes no ``-B`` options (an unknown one is refused in one line)."""
    take_options(NAME, options, {})
    return Benchmark(
        NAME,
        questions(),
        baseline=None,  # each answer is graded on its own: no baseline to judge against
        judge_kind="rubric",
        judge_protocol=PROTOCOL,
        judge_prompt_source=PROMPT,
        metrics=("rubric",),
        info={"source": "jurist-plain-language 0.1.0"},
    )


def catalog_card(name: str) -> BenchmarkCard:
    """What ``jurist list`` shows: the questions and the grader prompt both ship in this package."""
    shipped = "reinstall jurist-plain-language"
    return BenchmarkCard(
        name,
        "rubric",
        1,
        None,
        (
            Need("data", lambda: package_file(PACKAGE, "questions.jsonl"), shipped),
            Need("judge prompts", lambda: Found("package", str(packaged_prompt())), shipped),
        ),
        about="3 questions a layperson asks, graded per rubric criterion by the package's own prompt",
    )
