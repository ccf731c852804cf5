"""Arena-Hard-Local's Russian questions with its baseline's answers, judged with the simple protocol."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.store.jsonl import read_jsonl

LOCAL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arena-hard-local"
QUESTIONS = LOCAL / "question_ru.jsonl"
BASELINE = "Phi-3-medium-128k-instruct"
BASELINE_FILE = LOCAL / "model_answer" / f"{BASELINE}.jsonl"

pytestmark = pytest.mark.skipif(
    not (QUESTIONS.is_file() and BASELINE_FILE.is_file()), reason="shared Arena-Hard-Local data not present"
)


def test_russian_questions_reach_the_judge_intact(tmp_path: Path, mock_server: Any, run_quiet: Any) -> None:
    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    out = tmp_path / "run"
    (out / "answers").mkdir(parents=True)
    shutil.copyfile(BASELINE_FILE, out / "answers" / f"{BASELINE}.jsonl")  # the old choices/turns shape
    result = run_quiet(
        bench=str(QUESTIONS),
        models_file=models,
        models=["strong"],
        baseline=BASELINE,
        judges=["judge-good"],
        judge_protocol="simple",
        out=out,
        limit=5,
    )
    assert result.exit_code == 0 and result.failures == 0
    # The mock judge finds no [model] tag in Phi-3's answers (strength 2) and "strong" is 4: B>>A, A>>B.
    rows = {row["model"]: row for row in result.leaderboard}
    assert set(rows) == {"strong", BASELINE}
    assert (rows["strong"]["score"], rows["strong"]["n"], rows["strong"]["invalid"]) == (100.0, 5, 0)
    assert rows[BASELINE]["score"] == 50.0 and rows[BASELINE]["baseline"]

    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()[:5]]
    baseline_answers = {
        row["question_id"]: row["choices"][0]["turns"][0]["content"]
        for row in map(json.loads, BASELINE_FILE.read_text(encoding="utf-8").splitlines())
    }
    judge_prompts = [b["messages"][-1]["content"] for b in server.stats.bodies if b["model"] == "judge-good"]
    assert len(judge_prompts) == 10 and server.stats.requests == 5 + 10  # no baseline answers generated
    for question in questions:
        text = question["turns"][0]["content"]
        assert any(ord(ch) > 0x400 for ch in text)  # Cyrillic, not \\u escapes or mojibake
        shown = [p for p in judge_prompts if p.startswith(f"<|User Prompt|>\n{text}\n")]
        assert len(shown) == 2  # both games, the question verbatim
        assert all(baseline_answers[question["question_id"]] in p for p in shown)
    system = next(b for b in server.stats.bodies if b["model"] == "judge-good")["messages"][0]["content"]
    assert "language of the user prompt" in system
    records = read_jsonl(out / "judgments" / "judge-good" / "strong.jsonl")
    assert {r["uid"] for r in records} == {q["question_id"] for q in questions}
    assert {r["protocol"] for r in records} == {"simple"}
    assert all([g["label"] for g in r["games"]] == ["B>>A", "A>>B"] for r in records)
    answers = read_jsonl(out / "answers" / "strong.jsonl")
    assert {a["answer"] for a in answers} == {f"[strong] {q['turns'][0]['content']}" for q in questions}
