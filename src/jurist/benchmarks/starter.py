"""jurist's own starter benchmark: 24 short prompts in six categories, with reference answers as baseline.

Written for this project so a first run needs no download: small enough for a 135M model on a CPU, and the
references are concise so the judge prompt fits a 4k context.
"""

from __future__ import annotations

import json
from importlib.resources import files

from jurist.benchmarks.base import Benchmark, BenchmarkOptions, Question, take_options
from jurist.benchmarks.catalog import BenchmarkCard, Found, Need, package_file

NAME = "starter"
BASELINE = "reference"


def load_starter() -> Benchmark:
    text = files("jurist.benchmarks").joinpath("data/starter.jsonl").read_text(encoding="utf-8")
    questions: list[Question] = []
    references: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip():
            row = json.loads(line)
            questions.append(Question(uid=row["uid"], prompt=row["prompt"], category=row["category"]))
            references[row["uid"]] = row["reference"]
    return Benchmark(
        NAME,
        questions,
        shipped_answers={BASELINE: references},
        baseline=BASELINE,
        judge_protocol="jurist-pairwise",  # jurist's own benchmark, jurist's own judge prompt
    )


def benchmark(options: BenchmarkOptions) -> Benchmark:
    """Registry entry: the starter takes no options."""
    take_options(NAME, options, {})
    return load_starter()


def catalog_card(name: str) -> BenchmarkCard:
    """What ``jurist list`` shows: everything ships with jurist."""
    shipped = "shipped in the package (reinstall jurist)"
    return BenchmarkCard(
        name,
        "pairwise",
        1,
        None,
        (
            Need("data", lambda: package_file("jurist.benchmarks", "data/starter.jsonl"), shipped),
            Need("judge prompts", lambda: Found("package", "jurist-pairwise protocol"), shipped),
        ),
        about="24 short prompts written for jurist, judged against reference answers",
    )
