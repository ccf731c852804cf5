"""The one runner: a benchmark added through the registry alone, older run directories refused, samples, the
cache."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.benchmarks.base import Benchmark, BenchmarkOptions, Question, take_options
from jurist.benchmarks.registry import register, unregister
from jurist.errors import JuristError
from jurist.store.jsonl import read_jsonl


def toy_benchmark(options: BenchmarkOptions) -> Benchmark:
    """A benchmark defined in a test file: three questions, its own reference answers as baseline."""
    chosen = take_options("toy", options, {"n": "how many questions"})
    n = int(chosen.get("n", "3"))
    questions = [Question(uid=f"toy-{i}", prompt=f"toy question {i}?", category="toys") for i in range(n)]
    return Benchmark(
        name="toy",
        questions=questions,
        shipped_answers={"toy-ref": {q.uid: f"reference answer {i}" for i, q in enumerate(questions)}},
        baseline="toy-ref",
    )


@pytest.fixture
def toy() -> Iterator[None]:
    register("toy", toy_benchmark)
    yield
    unregister("toy")


@pytest.fixture
def models(tmp_path: Path, mock_server: Any) -> tuple[Any, Path]:
    server = mock_server()
    aliases = ["strong", "mixed", "judge-good", "judge-broken", "baseline-model"]
    return server, write_models_file(tmp_path / "models.yaml", server.base_url, {a: {} for a in aliases})


def by_model(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["model"]: row for row in rows if row.get("judge") == "judge-good"}


def test_a_benchmark_added_through_the_registry_runs_end_to_end(
    toy: None, models: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    server, models_file = models
    out = tmp_path / "run"
    args = {"bench": "toy", "bench_options": {"n": "5"}, "models_file": models_file, "out": out}
    result = run_quiet(**args, models=["strong"], judges=["judge-good"])
    assert result.exit_code == 0
    assert server.stats.requests == 5 + 5 * 2  # five answers, two games each
    rows = by_model(result.leaderboard)
    assert rows["strong"]["score"] == 100.0 and rows["strong"]["n"] == 5
    assert rows["toy-ref"].get("baseline")
    shipped = read_jsonl(out / "answers" / "toy-ref.jsonl")
    assert {r["source"] for r in shipped} == {"benchmark"} and {r["kind"] for r in shipped} == {"answer"}
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["schema_version"] == 2 and run_json["bench"] == "toy"
    assert run_json["bench_options"] == {"n": "5"}
    again = run_quiet(**args, models=["strong"], judges=["judge-good"])
    assert again.requests == 0 and by_model(again.leaderboard) == rows
    with pytest.raises(JuristError, match="-B colour: toy has no such option"):
        run_quiet(bench="toy", bench_options={"colour": "red"}, models_file=models_file, out=out)


def test_records_carry_kind_and_sample_and_samples_are_judged_apiece(
    toy: None, models: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    server, models_file = models
    out = tmp_path / "run"
    result = run_quiet(
        bench="toy", models_file=models_file, out=out, models=["mixed"], judges=["judge-good"], samples=3
    )
    assert result.exit_code == 0
    assert server.stats.requests == 3 + 3 * 3 * 2  # one request with n=3 per question, 2 games a sample
    answers = read_jsonl(out / "answers" / "mixed.jsonl")
    assert sorted((a["uid"], a["sample"]) for a in answers) == [
        (f"toy-{i}", s) for i in range(3) for s in range(3)
    ]
    judgments = read_jsonl(out / "judgments" / "judge-good" / "mixed.jsonl")
    assert {j["kind"] for j in judgments} == {"pairwise"} and len({j["key"] for j in judgments}) == 9
    battles = read_jsonl(out / "battles.jsonl")
    assert sorted({b["sample"] for b in battles}) == [0, 1, 2] and len(battles) == 18
    assert {b["kind"] for b in battles} == {"battle"}
    assert by_model(result.leaderboard)["mixed"]["n"] == 3  # questions, not answers: samples are clustered
    assert (
        run_quiet(
            bench="toy", models_file=models_file, out=out, models=["mixed"], judges=["judge-good"], samples=3
        ).requests
        == 0
    )


def test_a_run_directory_of_an_older_layout_is_refused_in_one_line(
    models: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    """A directory jurist wrote before kinds and samples (schema 1: its run.json has no schema_version) is
    neither resumed nor rewritten: one line names its run.json and the jurist that wrote it."""
    server, models_file = models
    out = tmp_path / "old"
    out.mkdir()
    run_json = {"run_id": "83d5c65830b5", "status": "finished", "jurist_version": "0.0.9", "bench": "starter"}
    (out / "run.json").write_text(json.dumps(run_json))
    with pytest.raises(JuristError) as refused:
        run_quiet(models_file=models_file, models=["strong"], judges=["judge-good"], out=out, limit=4)
    line = str(refused.value)
    assert "\n" not in line and line.startswith(f"{out / 'run.json'}: written by jurist 0.0.9")
    assert "schema 1" in line and server.stats.requests == 0
    assert sorted(p.name for p in out.iterdir()) == ["run.json"]  # nothing written, no lock left
    assert json.loads((out / "run.json").read_text()) == run_json


def test_inference_only_generates_the_baseline_for_a_later_judge_only(
    models: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    server, models_file = models
    questions = tmp_path / "question.jsonl"
    questions.write_text(
        "".join(json.dumps({"uid": f"q{i}", "prompt": f"prompt {i}"}) + "\n" for i in range(4))
    )
    out = tmp_path / "run"
    common = {"bench": str(questions), "models_file": models_file, "out": out, "baseline": "baseline-model"}
    first = run_quiet(**common, models=["strong"], mode="inference-only")
    assert first.exit_code == 0 and (out / "answers" / "baseline-model.jsonl").is_file()
    assert server.stats.requests_by_model == {"strong": 4, "baseline-model": 4}
    second = run_quiet(**common, models=["strong"], judges=["judge-good"], mode="judge-only")
    assert second.exit_code == 0 and server.stats.requests_by_model["judge-good"] == 8
    assert by_model(second.leaderboard)["strong"]["n"] == 4


def test_the_request_cache_is_shared_across_run_directories(
    models: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    server, models_file = models
    common = {"models_file": models_file, "models": ["strong"], "judges": ["judge-good"], "limit": 3}
    first = run_quiet(**common, out=tmp_path / "a")
    sent = server.stats.requests
    assert sent == 3 + 6 and first.requests == sent
    second = run_quiet(**common, out=tmp_path / "b")  # a new directory repeating the same work
    assert server.stats.requests == sent and second.requests == 0
    assert by_model(second.leaderboard) == by_model(first.leaderboard)
    usage = [r["usage"] for r in read_jsonl(tmp_path / "b" / "answers" / "strong.jsonl")]
    assert all(u.get("cached") for u in usage)
    third = run_quiet(**common, out=tmp_path / "c", cache=False)
    assert server.stats.requests == 2 * sent and third.requests == sent


def test_a_corrupt_cache_file_does_not_stop_the_run(
    models: tuple[Any, Path], tmp_path: Path, run_quiet: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server, models_file = models
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    (cache_dir / "requests.sqlite").write_bytes(b"this is not a sqlite database\x00" * 100)
    result = run_quiet(
        models_file=models_file,
        models=["strong"],
        judges=["judge-good"],
        limit=2,
        out=tmp_path / "r",
        cache_path=cache_dir,
    )
    assert result.exit_code == 0 and server.stats.requests == 2 + 4
    assert "requests.sqlite" in caplog.text


def test_rejudging_invalid_verdicts_bypasses_the_cache(
    models: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    server, models_file = models
    common = {"models_file": models_file, "models": ["strong"], "judges": ["judge-broken"], "limit": 2}
    run_quiet(**common, out=tmp_path / "r")
    before = server.stats.requests
    run_quiet(**common, out=tmp_path / "r", rejudge_invalid=True)
    assert server.stats.requests - before == 2 * 2 * 2  # each game asked again, and re-asked


def test_every_show_method_is_available_at_the_end_of_run(
    toy: None, models: tuple[Any, Path], tmp_path: Path, run_quiet: Any
) -> None:
    """run scores through the same layer as show: BT, style control, categories, ensembles, sanity."""
    _, models_file = models
    out = tmp_path / "run"
    common = {"bench": "toy", "bench_options": {"n": "6"}, "models_file": models_file, "out": out}
    base = run_quiet(**common, models=["strong", "mixed"], judges=["judge-good"])
    assert {r["model"] for r in base.leaderboard} == {"strong", "mixed", "toy-ref"}
    bt = run_quiet(**common, models=["strong", "mixed"], judges=["judge-good"], method="bt")
    assert bt.requests == 0 and all("rating" in r for r in bt.leaderboard)
    assert by_model(bt.leaderboard)["toy-ref"]["rating"] == 1000.0  # anchored at the baseline
    ratings = json.loads((out / "ratings.json").read_text())
    assert ratings["method"] == "bt" and ratings["judge_sanity"][0]["judge"] == "judge-good"
    styled = run_quiet(**common, models=["strong", "mixed"], judges=["judge-good"], style_control=("length",))
    assert json.loads((out / "ratings.json").read_text())["method"] == "style-control"
    assert styled.requests == 0
    per_category = run_quiet(**common, models=["strong"], judges=["judge-good"], categories=("toys",))
    assert {r.get("category") for r in per_category.leaderboard} == {"toys"}
    two = run_quiet(**common, models=["strong"], judges=["judge-good", "judge-broken"], ensemble=True)
    assert {r["judge"] for r in two.leaderboard} == {"judge-broken+judge-good"}  # sorted names
