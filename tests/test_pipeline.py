"""End-to-end runs against the mock server: artifacts, scores, resume, judge-only, rejudging."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.benchmarks.starter import load_starter
from jurist.errors import JuristError
from jurist.store.jsonl import read_jsonl

MODELS = ["strong", "equal", "worse", "mixed"]


def expected_mixed_score() -> float:
    """``mixed`` wins weakly on even-length prompts and loses weakly on odd ones (one entry per game)."""
    prompts = [q.prompt.split("\n")[0] for q in load_starter().questions]
    wins = sum(1 for p in prompts if len(p) % 2 == 0)
    return 100.0 * wins / len(prompts)


@pytest.fixture
def setup(tmp_path: Path, mock_server: Any) -> tuple[Any, Path, Path]:
    server = mock_server()
    models = write_models_file(
        tmp_path / "models.yaml",
        server.base_url,
        {name: {} for name in MODELS + ["judge-good", "judge-reask", "judge-broken"]},
    )
    return server, models, tmp_path / "run"


def by_model(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["model"]: row for row in rows}


def test_full_run_scores_and_artifacts(setup: Any, run_quiet: Any) -> None:
    server, models, out = setup
    result = run_quiet(models_file=models, models=MODELS, judges=["judge-good"], out=out)
    assert result.exit_code == 0 and result.failures == 0
    n = len(load_starter().questions)
    # 4 models x 24 answers + 4 x 24 x 2 games; the starter baseline ships with the benchmark.
    assert server.stats.requests == 4 * n + 4 * n * 2
    rows = by_model(result.leaderboard)
    assert rows["strong"]["score"] == 100.0 and rows["strong"]["ci_low"] == 100.0
    assert rows["equal"]["score"] == 50.0
    assert rows["worse"]["score"] == 0.0
    assert rows["mixed"]["score"] == pytest.approx(expected_mixed_score())
    assert rows["mixed"]["ci_low"] <= rows["mixed"]["score"] <= rows["mixed"]["ci_high"]
    assert rows["reference"]["score"] == 50.0 and rows["reference"]["baseline"]
    for row in result.leaderboard:
        assert {"model", "score", "ci_low", "ci_high", "n", "invalid", "judge"} <= set(row)
    assert json.loads((out / "leaderboard.json").read_text()) == result.leaderboard
    for model in MODELS + ["reference"]:
        assert len(read_jsonl(out / "answers" / f"{model}.jsonl")) == n
    judgments = read_jsonl(out / "judgments" / "judge-good" / "strong.jsonl")
    assert len(judgments) == n
    game1, game2 = judgments[0]["games"]
    assert (game1["a"], game1["b"], game1["label"]) == ("reference", "strong", "B>>A")
    assert (game2["a"], game2["b"], game2["label"]) == ("strong", "reference", "A>>B")
    assert "[[B>>A]]" in game1["raw"] and game1["usage"]["completion_tokens"] > 0
    battles = read_jsonl(out / "battles.jsonl")
    assert len(battles) == 4 * n * 2
    strong = [b for b in battles if "strong" in (b["model_a"], b["model_b"])]
    assert all(b["weight"] == 3 and b["source"] == "llm-judge" and b["judge"] == "judge-good" for b in strong)
    ratings = json.loads((out / "ratings.json").read_text())
    assert (ratings["method"], ratings["seed"], ratings["bootstrap_rounds"]) == ("winrate", 0, 100)
    assert {m["model"]: m["n_battles"] for m in ratings["models"]}["strong"] == 2 * n
    answer = read_jsonl(out / "answers" / "strong.jsonl")[0]
    assert answer["metadata"]["token_len"] > 0 and set(answer["metadata"]) == {
        "token_len",
        "header_count",
        "list_count",
        "bold_count",
    }
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["status"] == "finished" and run_json["usage"]["requests"] == server.stats.requests


def test_rerun_sends_nothing_and_prints_same_leaderboard(setup: Any, run_quiet: Any) -> None:
    server, models, out = setup
    first = run_quiet(models_file=models, models=["mixed", "strong"], judges=["judge-good"], out=out)
    before = server.stats.requests
    second = run_quiet(models_file=models, models=["mixed", "strong"], judges=["judge-good"], out=out)
    assert server.stats.requests == before
    assert second.requests == 0
    assert second.leaderboard == first.leaderboard


def test_changed_answer_is_rejudged_and_stale_judgment_ignored(setup: Any, run_quiet: Any) -> None:
    server, models, out = setup
    run_quiet(models_file=models, models=["equal"], judges=["judge-good"], out=out, limit=4)
    path = out / "answers" / "equal.jsonl"
    records = read_jsonl(path)
    # A regenerated answer (last line wins): now it claims to come from the strong model.
    replacement = {**records[0], "answer": "[strong] better answer"}
    with path.open("a") as fh:
        fh.write(json.dumps(replacement) + "\n")
    before = server.stats.requests
    result = run_quiet(models_file=models, models=["equal"], judges=["judge-good"], out=out, limit=4)
    assert server.stats.requests - before == 2  # one question, two games; no regeneration
    row = by_model(result.leaderboard)["equal"]
    # Three questions tie (0.5 each, one entry per game), one is a strong win (3 entries of 1 per game).
    assert row["score"] == pytest.approx(100 * (3 * 2 * 0.5 + 2 * 3) / (3 * 2 + 2 * 3))


def test_inference_only_then_judge_only(setup: Any, run_quiet: Any) -> None:
    server, models, out = setup
    result = run_quiet(models_file=models, models=["strong"], out=out, limit=3, mode="inference-only")
    assert result.leaderboard == [] and server.stats.requests == 3
    assert not (out / "judgments").exists()
    result = run_quiet(
        models_file=models, models=["strong"], judges=["judge-good"], out=out, limit=3, mode="judge-only"
    )
    assert server.stats.requests == 3 + 6
    assert by_model(result.leaderboard)["strong"]["score"] == 100.0


def test_judge_only_without_answers_is_a_usage_error(setup: Any, run_quiet: Any) -> None:
    _, models, out = setup
    with pytest.raises(JuristError, match="no answers for 'strong'"):
        run_quiet(models_file=models, models=["strong"], judges=["judge-good"], out=out, mode="judge-only")


def test_invalid_verdicts_are_counted_not_crashing(setup: Any, run_quiet: Any) -> None:
    server, models, out = setup
    result = run_quiet(models_file=models, models=["strong"], judges=["judge-broken"], out=out, limit=3)
    assert result.exit_code == 1  # nothing could be scored: not a success
    row = by_model(result.leaderboard)["strong"]
    assert row["invalid"] == 3 and row["score"] is None
    assert by_model(result.leaderboard)["reference"]["baseline"]  # the baseline keeps its row
    assert json.loads((out / "run.json").read_text())["scored"] is False
    judgments = read_jsonl(out / "judgments" / "judge-broken" / "strong.jsonl")
    assert all(j["invalid"] and j["games"][0]["reask_raw"] for j in judgments)
    assert server.stats.requests_by_model["judge-broken"] == 3 * 2 * 2  # each game asked twice
    # Invalid verdicts are results: a re-run does not ask again...
    before = server.stats.requests
    run_quiet(models_file=models, models=["strong"], judges=["judge-broken"], out=out, limit=3)
    assert server.stats.requests == before
    # ...unless asked to.
    run_quiet(
        models_file=models, models=["strong"], judges=["judge-broken"], out=out, limit=3, rejudge_invalid=True
    )
    assert server.stats.requests == before + 12


def test_reask_recovers_a_missing_label(setup: Any, run_quiet: Any) -> None:
    server, models, out = setup
    result = run_quiet(models_file=models, models=["strong"], judges=["judge-reask"], out=out, limit=2)
    assert by_model(result.leaderboard)["strong"]["score"] == 100.0
    assert by_model(result.leaderboard)["strong"]["invalid"] == 0
    judgments = read_jsonl(out / "judgments" / "judge-reask" / "strong.jsonl")
    assert all("reask_raw" in g and g["label"] for j in judgments for g in j["games"])


def test_structured_verdicts_use_response_format(tmp_path: Path, mock_server: Any, run_quiet: Any) -> None:
    server = mock_server()
    models = write_models_file(
        tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {"structured_output": "llama_cpp"}}
    )
    result = run_quiet(
        models_file=models, models=["strong"], judges=["judge-good"], out=tmp_path / "r", limit=2
    )
    assert by_model(result.leaderboard)["strong"]["score"] == 100.0
    judge_bodies = [b for b in server.stats.bodies if b["model"] == "judge-good"]
    assert judge_bodies and all(b["response_format"]["type"] == "json_object" for b in judge_bodies)
    assert all(b["response_format"]["schema"]["properties"]["verdict"]["enum"] for b in judge_bodies)
