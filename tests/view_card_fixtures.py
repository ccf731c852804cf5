"""Runs with a judge card, made for real against the mock server (tests/mock_openai.py), for the browser's
card view: the planted-fault judges of tests/test_judge_card.py (``judge-longer`` prefers the longer
answer, ``judge-obedient`` obeys a note to the judge, ``judge-first`` picks position A, ``judge-good`` is
fair) on a question file whose even questions carry hostile HTML (the candidates echo the question, and
the verbosity padding restates it, so the hostile text is in the answers and in what the probes add);
HealthBench graded by ``g-fair`` and ``g-lenient`` (marks every item met) where the shared data is there;
and the same pairwise run again with ``--no-judge-card``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import view_fixtures as vf
from conftest import FAST_RETRY, SHARED_DATA, run_config, write_models_file
from jurist.run.pipeline import run_pipeline
from mock_openai import MockOpenAI
from test_judge_card import JUDGES, MODELS, _grade
from test_rubric_judge import write_hb_prompt

BASELINE = "baseline"
QUESTIONS = 24
HEALTHBENCH = (SHARED_DATA / "healthbench").is_dir()


def question_file(path: Path) -> Path:
    rows = [
        {
            "uid": f"h{k:02d}",
            "category": "rivers",
            "prompt": f"Q{k}: name a river. " + (vf.EVIL if k % 2 == 0 else ""),
        }
        for k in range(QUESTIONS)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _grading(server: MockOpenAI) -> None:
    """Graders ``g-*`` answer as tests/test_judge_card.py's: lenient marks every item met."""
    original = server._reply

    def reply(model: str, messages: list[dict[str, Any]], body: dict[str, Any]) -> Any:
        response = original(model, messages, body)
        if model.startswith("g-"):
            payload = json.loads(response.body)
            payload["choices"][0]["message"]["content"] = _grade(model, messages)
            response.body = json.dumps(payload).encode()
        return response

    server._reply = reply  # type: ignore[method-assign]


@contextmanager
def card_runs(work: Path) -> Iterator[dict[str, Any]]:
    """``pair`` (a card with every pairwise judge), ``plain`` (the same run, no card), ``rubric`` (None
    without the shared HealthBench data) and ``server`` (the mock, its request bodies kept)."""
    server = MockOpenAI()
    _grading(server)
    server.start()
    try:
        aliases: dict[str, dict[str, Any]] = {n: {} for n in [*MODELS, *JUDGES, BASELINE]}
        aliases |= {"m": {}, "g-fair": {"temperature": 0.5}, "g-lenient": {}}
        models = write_models_file(work / "models.yaml", server.base_url, aliases)
        common: dict[str, Any] = {
            "progress": False,
            "retry": FAST_RETRY,
            "check": False,
            "models_file": models,
        }
        pair = {"bench": str(question_file(work / "questions.jsonl")), "models": MODELS, "baseline": BASELINE}
        run_pipeline(run_config(**common, **pair, judges=JUDGES, out=work / "pair"))
        run_pipeline(run_config(**common, **pair, judges=["judge-good"], judge_card=0, out=work / "plain"))
        rubric = None
        if HEALTHBENCH:
            rubric = work / "rubric"
            run_pipeline(
                run_config(
                    **common,
                    bench="healthbench",
                    limit=30,
                    models=["m"],
                    judges=["g-fair", "g-lenient"],
                    judge_prompt=write_hb_prompt(work / "grader.py"),
                    out=rubric,
                )
            )
        yield {"pair": work / "pair", "plain": work / "plain", "rubric": rubric, "server": server}
    finally:
        server.stop()
