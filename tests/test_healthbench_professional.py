"""HealthBench Professional's input handling (``-B professional=FILE``): a synthetic file in the schema the
published ``healthbench_professional_eval.jsonl`` has (the real file is on the HF hub and OpenAI's blob
storage only, not reachable here), read into HealthBench questions; simple-evals PR #108's guardrail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, run_config
from jurist.benchmarks import healthbench
from jurist.benchmarks.healthbench_professional import read_professional
from jurist.errors import InputError, JuristError

PROFESSIONAL = {"grader": "gpt-5.4", "length_penalty": "0.0147", "length_center": "2000"}


def rows() -> list[dict[str, Any]]:
    """Three rows as the published file writes them: a conversation object with messages, or a list."""
    return [
        {
            "id": "9f0c1a",
            "conversation": {"messages": [{"role": "user", "content": "When is adenoidectomy offered?"}]},
            "rubric_items": [
                {"criterion_text": "Cites an indication for adenoidectomy", "points": 7},
                {"criterion_text": "Says the age cut-off varies", "points": 8},
                {"criterion_text": "Recommends antibiotics for every episode", "points": -5},
            ],
            "use_case": "consult",
            "type": "good_faith",
            "difficulty": "typical",
            "specialty": "ent",
            "physician_response": "Adenoidectomy is considered when ...",
        },
        {
            "id": "b27e44",
            "conversation": [
                {"role": "user", "content": "Draft a discharge note."},
                {"role": "assistant", "content": "Which patient?"},
                {"role": "user", "content": "A 28-year-old with Ramsay Hunt syndrome."},
            ],
            "rubric_items": [
                {"criterion_text": "Mentions valaciclovir", "points": 5, "tags": ["axis:accuracy"]}
            ],
            "use_case": "writing",
            "type": "red_teaming",
            "difficulty": "difficult",
            "specialty": "neurology",
            "physician_response": "Discharge summary: ...",
        },
        {
            "id": "c3",
            "conversation": {
                "messages": [{"role": "user", "content": [{"type": "text", "text": "Evidence?"}]}]
            },
            "rubric_items": [{"criterion_text": "Names a trial", "points": 3}],
            "use_case": "research",
        },
    ]


def write(path: Path, data: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in data), encoding="utf-8")
    return path


def test_a_professional_file_becomes_healthbench_questions(tmp_path: Path) -> None:
    questions = read_professional(write(tmp_path / "pro.jsonl", rows()))
    first, second, third = questions
    assert [q.uid for q in questions] == ["9f0c1a", "b27e44", "c3"]
    assert first.metadata["messages"] == [{"role": "user", "content": "When is adenoidectomy offered?"}]
    assert first.metadata["rubrics"][2] == {
        "criterion": "Recommends antibiotics for every episode",
        "points": -5,
        "tags": [],
    }
    assert first.metadata["example_tags"] == [
        "use_case:consult",
        "type:good_faith",
        "difficulty:typical",
        "specialty:ent",
    ]
    assert first.category == "consult" and first.metadata["physician_response"].startswith("Adenoidectomy")
    assert len(second.metadata["messages"]) == 3 and second.metadata["rubrics"][0]["tags"] == [
        "axis:accuracy"
    ]
    assert third.metadata["messages"][0]["content"] == "Evidence?" and third.metadata["example_tags"] == [
        "use_case:research"
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("id"), "line 1: field 'id' is missing"),
        (lambda r: r.update(rubric_items=[]), "line 1: field 'rubric_items' is not a non-empty list"),
        (lambda r: r.update(rubric_items=[{"criterion": "x", "points": 1}]), "item 1 needs a criterion_text"),
        (
            lambda r: r.update(rubric_items=[{"criterion_text": "x", "points": -1}]),
            "no item has positive points",
        ),
        (lambda r: r.update(conversation={"messages": []}), "field 'conversation' is not a non-empty list"),
        (
            lambda r: r.update(
                conversation=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
            ),
            "the last message is not the user's",
        ),
        (lambda r: r.update(specialty=3), "field 'specialty' is not a string"),
    ],
)
def test_bad_rows_name_file_line_and_field(tmp_path: Path, change: Any, message: str) -> None:
    data = rows()
    change(data[0])
    with pytest.raises(InputError, match=message):
        read_professional(write(tmp_path / "bad.jsonl", data))


def test_professional_mode_is_simple_evals_guardrail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    path = write(tmp_path / "pro.jsonl", rows())
    with pytest.raises(JuristError, match="needs -B grader=gpt-5.4 and -B length_penalty="):
        healthbench.benchmark({"professional": str(path)})
    with pytest.raises(JuristError, match="needs -B length_penalty="):
        healthbench.benchmark({"professional": str(path), "grader": "gpt-5.4"})
    with pytest.raises(JuristError, match="no -B subset"):
        healthbench.benchmark({"professional": str(path), "subset": "500", **PROFESSIONAL})
    bench = healthbench.benchmark({"professional": str(path), **PROFESSIONAL})
    assert [q.uid for q in bench.questions] == ["9f0c1a", "b27e44", "c3"]
    assert bench.info["subset"] == "professional" and bench.info["pinned"] is False
    assert bench.info["length_adjustment"]["center"] == 2000.0
    assert bench.judge_protocol == "healthbench-gpt-5.4"


def test_a_professional_run_end_to_end(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The candidate on the chat-completions mock, the GPT-5.4 grader on a mock of /v1/responses: every
    rubric item graded, the length-adjusted score beside the headline, as the formula gives it."""
    import yaml

    from jurist.run.pipeline import run_pipeline
    from test_responses_api import ResponsesMock

    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    candidate = mock_server()
    grader = ResponsesMock()
    grader.reply = lambda body: json.dumps({"explanation": "ok", "criteria_met": "valaciclovir" in str(body)})
    grader.start()
    try:
        models = tmp_path / "m.yaml"
        models.write_text(
            yaml.safe_dump(
                {
                    "m": {"model": "m", "endpoints": [{"api_base": candidate.base_url, "api_key": None}]},
                    "g": {
                        "model": "gpt-5.4-2026-03-05",
                        "api_type": "openai-responses",
                        "endpoints": [{"api_base": grader.base_url, "api_key": "sk-test-000"}],
                    },
                }
            )
        )
        path = write(tmp_path / "pro.jsonl", rows())
        result = run_pipeline(
            run_config(
                bench="healthbench",
                bench_options={"professional": str(path), **PROFESSIONAL},
                models_file=models,
                models=["m"],
                judges=["g"],
                out=tmp_path / "run",
                progress=False,
                check=False,
            )
        )
    finally:
        grader.stop()
    assert result.exit_code == 0
    assert len(grader.bodies) == 3 + 1 + 1  # one request per rubric item
    assert all(set(body) == {"model", "input", "reasoning"} for body in grader.bodies)
    (row,) = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
    answers = [
        json.loads(line) for line in (tmp_path / "run" / "answers" / "m.jsonl").read_text().splitlines()
    ]
    met = {"9f0c1a": 0.0, "b27e44": 1.0, "c3": 0.0}  # only the item naming valaciclovir is met
    adjusted = [met[a["uid"]] - 0.0147 * (len(a["answer"]) - 2000) / 500 for a in answers]
    assert row["score"] == pytest.approx(sum(met.values()) / 3, abs=1e-12)
    assert row["length_adjusted"]["score"] == pytest.approx(min(1.0, max(0.0, sum(adjusted) / 3)), abs=1e-12)
