"""Run directories of the kinds the browser must show besides pairwise verdicts, made by real runs
against the mock server (tests/mock_openai.py): HealthBench and WritingBench graded item by item (the
fake grader prompts of tests/test_rubric_judge.py, the shared data), and a pairwise run on a question
file given as ``--bench PATH``.

The HealthBench run reads four rows of the shared subset through ``-B file=``, two of them changed: one
item of the first can never be read (so that answer goes unscored) and one criterion of the third carries
hostile HTML, which the grader's explanation quotes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import view_fixtures as vf
from conftest import SHARED_DATA, run_config
from jurist.engine.pacing.retry import RetryPolicy
from jurist.run.pipeline import run_pipeline
from mock_openai import MockOpenAI
from test_rubric_judge import (
    criterion_of,
    install_reply,
    met_rule,
    wb_reply,
    write_hb_prompt,
    write_wb_prompt,
)

UNREADABLE = " (UNREADABLE to the grader)"
HB_ROWS = 4
WB_LIMIT = 2
QUESTIONS = [
    ("ask", "CUSTOM-Q1: name three rivers of Europe."),
    ("ask", "CUSTOM-Q2: what is the boiling point of water at sea level?"),
    ("ask", "CUSTOM-Q3 " + vf.EVIL),
]


def grader_reply(messages: list[dict[str, Any]]) -> str:
    """The fake HealthBench grader: met by :func:`met_rule`, never readable on an UNREADABLE item, and
    quoting a criterion that holds HTML in its explanation; WritingBench criteria as tests/ scores them."""
    user = next(m["content"] for m in messages if m["role"] == "user")
    if user.startswith("FAKE CRITIC"):
        return wb_reply(messages)
    criterion = criterion_of(user)
    if UNREADABLE in criterion:
        return "Hmm, hard to say. {not json}"
    met = met_rule(criterion)
    said = f"rule says {met}" + (f"; the criterion reads: {criterion}" if "<script>" in criterion else "")
    return "```json\n" + json.dumps({"explanation": said, "criteria_met": met}) + "\n```"


def healthbench_file(path: Path) -> Path:
    rows = []
    with open(SHARED_DATA / "healthbench" / "healthbench_500_subset.jsonl", encoding="utf-8") as fh:
        for _ in range(HB_ROWS):
            rows.append(json.loads(fh.readline()))
    rows[0]["rubrics"][1]["criterion"] += UNREADABLE
    rows[2]["rubrics"][0]["criterion"] += " " + vf.EVIL
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _run(**kwargs: Any) -> None:
    retry = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02)
    run_pipeline(run_config(progress=False, check=False, cache=False, retry=retry, **kwargs))


@contextmanager
def kinds_runs(work: Path) -> Iterator[dict[str, Path]]:
    """``healthbench``, ``writingbench`` (model ``m``, graders ``g`` and ``critic``) and ``custom`` (the
    toy models on ``questions.jsonl``, ``mixed`` as the baseline); the mock server stops afterwards."""
    server = MockOpenAI()
    install_reply(server, grader_reply)
    server.start()
    try:
        aliases = ["m", "g", "critic", "strong", "mixed", "judge-good"]
        models = vf.write_models(work / "kinds-models.json", server.base_url, aliases)
        hb = healthbench_file(work / "hb_rows.jsonl")
        _run(
            bench="healthbench",
            bench_options={"file": str(hb)},
            models_file=models,
            models=["m"],
            judges=["g"],
            judge_prompt=write_hb_prompt(work / "hb_prompt.py"),
            out=work / "healthbench",
        )
        _run(
            bench="writingbench",
            models_file=models,
            models=["m"],
            judges=["critic"],
            limit=WB_LIMIT,
            judge_prompt=write_wb_prompt(work / "wb_prompt.py"),
            out=work / "writingbench",
        )
        questions = work / "custom" / "questions.jsonl"
        questions.parent.mkdir(parents=True, exist_ok=True)
        rows = [{"uid": f"c{k}", "category": c, "prompt": p} for k, (c, p) in enumerate(QUESTIONS)]
        questions.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        _run(
            bench=str(questions),
            models_file=models,
            models=["strong"],
            baseline="mixed",
            judges=["judge-good"],
            out=work / "custom-run",
        )
        yield {
            "healthbench": work / "healthbench",
            "writingbench": work / "writingbench",
            "custom": work / "custom-run",
            "questions": questions,
            "work": work,
        }
    finally:
        server.stop()
