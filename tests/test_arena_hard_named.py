"""Arena-Hard by name: pinned questions and official baseline answers from a data dir laid out as the shared
data, each category's prompt and baseline, the README's official scoring, upstream's judge settings as the
reference judge, missing baseline answers reported (never a crash), and the offline error."""

from __future__ import annotations

import hashlib
import json
import os
import urllib.request
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks import base
from jurist.errors import JuristError

if "official_scoring" not in base.Benchmark.__dataclass_fields__:  # the proposed base.py diff is not applied
    pytest.skip("needs the proposed diffs (Benchmark.official_scoring)", allow_module_level=True)

from jurist.benchmarks import arena_hard_named as named  # noqa: E402
from jurist.benchmarks.registry import benchmark_names, load_benchmark  # noqa: E402
from jurist.families import ScoreOptions, score_run  # noqa: E402
from jurist.judging import upstream  # noqa: E402
from jurist.store.jsonl import read_jsonl  # noqa: E402

ARENA = SHARED_DATA / "arena-hard"
OFFICIAL = ARENA / "official-prompts"
pytestmark = pytest.mark.skipif(not OFFICIAL.is_dir(), reason="shared Arena-Hard data not present")
needs_registry = pytest.mark.skipif(
    "arena-hard-v2.0" not in benchmark_names(), reason="the proposed registry diff is not applied"
)
GEMINI = "gemini-2.0-flash-001"


def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network is off in this test")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def official_settings() -> dict[str, Any]:
    return dict(json.loads((OFFICIAL / "judge_settings.json").read_text(encoding="utf-8")))


def questions(version: str) -> list[dict[str, Any]]:
    path = ARENA / "data" / version / "question.jsonl"
    lines = path.read_text(encoding="utf-8").split("\n")  # not splitlines(): prompts hold U+2028
    return [json.loads(line) for line in lines if line.strip()]


def data_dir(tmp_path: Path, gemini: Path | None = None) -> Path:
    """A data dir laid out as the shared data (links to its files), the prompts included."""
    root = tmp_path / "data" / "arena-hard"
    answers = root / "data" / "arena-hard-v2.0" / "model_answer"
    answers.mkdir(parents=True)
    source = ARENA / "data" / "arena-hard-v2.0"
    os.symlink(source / "question.jsonl", root / "data" / "arena-hard-v2.0" / "question.jsonl")
    os.symlink(source / "model_answer" / "o3-mini-2025-01-31.jsonl", answers / "o3-mini-2025-01-31.jsonl")
    if gemini is not None:
        os.symlink(gemini, answers / f"{GEMINI}.jsonl")
    os.symlink(OFFICIAL, root / "official-prompts")
    return root.parent


def synthetic_gemini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, leave_out: int = 0) -> Path:
    """A stand-in for upstream's gemini-2.0-flash-001 answers (not in the shared data), pinned by its own
    sha256 for the test; its first ``leave_out`` creative questions have no answer."""
    creative = [q for q in questions("arena-hard-v2.0") if q["category"] == "creative_writing"]
    path = tmp_path / f"{GEMINI}.jsonl"
    rows = [
        {
            "uid": q["uid"],
            "model": GEMINI,
            "messages": [
                {"role": "user", "content": q["prompt"]},
                {"role": "assistant", "content": {"answer": f"A creative answer to {q['uid']}."}},
            ],
        }
        for q in creative[leave_out:]
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    version = named.VERSIONS["arena-hard-v2.0"]
    pin = replace(version.answers[GEMINI], sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    answers = {**version.answers, GEMINI: pin}
    monkeypatch.setitem(named.VERSIONS, "arena-hard-v2.0", replace(version, answers=answers))
    return path


# -- facts, checked against upstream's files -----------------------------------------------------------------


def test_pins_baselines_and_reference_judges_are_upstreams() -> None:
    settings = official_settings()
    for name, version in named.VERSIONS.items():
        config = yaml.safe_load((OFFICIAL / f"{name}.yaml").read_text(encoding="utf-8"))
        reference = version.reference
        assert (reference.model, reference.temperature, reference.max_tokens) == (
            config["judge_model"],
            config["temperature"],
            config["max_tokens"],
        )
        for category, baseline in version.baselines.items():
            assert settings[category]["baseline"] == baseline
        for pinned in [version.questions, *version.answers.values()]:
            local = ARENA / pinned.local_paths[0].removeprefix("arena-hard/")
            if local.is_file():  # gemini-2.0-flash-001's answers are not in the shared data
                assert hashlib.sha256(local.read_bytes()).hexdigest() == pinned.sha256
    v2, v01 = (yaml.safe_load((OFFICIAL / f"{n}.yaml").read_text()) for n in named.VERSIONS)
    assert v2["prompt_template"] == v01["prompt_template"]  # one template serves both versions


def test_the_shared_data_dir_works_as_it_is_with_both_baselines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared data holds gemini-2.0-flash-001's answers (the creative_writing baseline) beside
    o3-mini's: all 750 questions are judged offline, each category against its own baseline."""
    no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    bench = named.benchmark_v2({})
    categories = Counter(q.category for q in bench.questions)
    assert len(bench.questions) == 750 and categories == {"hard_prompt": 500, "creative_writing": 250}
    assert dict(bench.baselines_by_category) == {
        "hard_prompt": "o3-mini-2025-01-31",
        "creative_writing": GEMINI,
    }
    assert {alias: len(answers) for alias, answers in bench.shipped_answers.items()} == {
        "o3-mini-2025-01-31": 500,
        GEMINI: 250,
    }
    assert not bench.info.get("missing_baseline_answers") and not bench.info["notes"]
    assert bench.info["reference_judge"]["model"] == "gpt-4.1" and bench.judge_protocol == "arena-hard"
    assert bench.official_scoring.style_control == ("markdown", "length")
    old = named.benchmark_v01({})
    assert len(old.questions) == 500 and old.baselines() == ["gpt-4-0314"] and not old.info["notes"]
    assert old.info["reference_judge"]["max_tokens"] == 4096 and not old.official_scoring.style_control


def test_offline_without_a_data_dir_fails_at_once_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    no_network(monkeypatch)
    monkeypatch.delenv("JURIST_DATA_DIR", raising=False)
    for factory, files in (
        (
            named.benchmark_v2,
            ("arena-hard-v2.0/question.jsonl", "o3-mini-2025-01-31.jsonl", f"{GEMINI}.jsonl"),
        ),
        (named.benchmark_v01, ("arena-hard-v0.1/question.jsonl", "gpt-4-0314.jsonl")),
    ):
        with pytest.raises(JuristError) as failed:
            factory({})
        message = str(failed.value)
        assert "\n" not in message and "JURIST_DATA_DIR" in message and "official-prompts" in message
        assert all(name in message for name in files)


def test_a_question_without_its_baseline_answer_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_network(monkeypatch)
    gemini = synthetic_gemini(tmp_path, monkeypatch, leave_out=2)
    monkeypatch.setenv("JURIST_DATA_DIR", str(data_dir(tmp_path, gemini)))
    bench = named.benchmark_v2({})
    assert len(bench.questions) == 748 and bench.score_categories == ("hard_prompt", "creative_writing")
    (note,) = bench.info["notes"]
    assert (
        note.startswith("arena-hard-v2.0: 2 creative_writing question(s)")
        and "has no answer for them" in note
    )
    creative = [q["uid"] for q in questions("arena-hard-v2.0") if q["category"] == "creative_writing"]
    assert bench.info["missing_baseline_answers"][GEMINI]["uids"] == creative[:2]
    assert bench.baseline_for(next(q for q in bench.questions if q.category == "creative_writing")) == GEMINI


def test_the_prompts_are_found_in_the_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    no_network(monkeypatch)
    monkeypatch.delenv(upstream.PROMPTS_ENV, raising=False)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    settings = upstream.load_arena_hard_settings()
    assert settings.source == str(SHARED_DATA / "arena-hard" / "official-prompts")
    assert (
        settings.system_prompts["creative_writing"]
        == official_settings()["creative_writing"]["system_prompt"]
    )
    monkeypatch.delenv("JURIST_DATA_DIR")
    with pytest.raises(JuristError, match=r"JURIST_DATA_DIR to one holding arena-hard/official-prompts/"):
        upstream.load_arena_hard_settings()


# -- runs with a mock judge ----------------------------------------------------------------------------------


def first_line(text: str) -> str:
    return text.split("\n", 1)[0]


@needs_registry
def test_v2_by_name_from_a_data_dir_with_a_mock_judge(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """The shared data's layout, no network, the prompts from the data dir: hard prompts judged against
    o3-mini's official answers (creative writing reported as missing its baseline), scored style-controlled;
    the judge entry's unset sampling is sent as upstream's, and the run names where the judge departs."""
    no_network(monkeypatch)
    monkeypatch.delenv(upstream.PROMPTS_ENV, raising=False)
    monkeypatch.setenv("JURIST_DATA_DIR", str(data_dir(tmp_path)))
    server = mock_server()
    unset = {"temperature": None, "max_tokens": None}
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"mixed": {}, "judge-good": unset})
    out = tmp_path / "run"
    result = run_quiet(
        bench="arena-hard-v2.0",
        models_file=models,
        models=["mixed"],
        judges=["judge-good"],
        out=out,
        limit=24,
    )
    assert result.exit_code == 0
    chosen = [q for q in questions("arena-hard-v2.0") if q["category"] == "hard_prompt"][:24]
    # mixed is strength 3 where the prompt's first line has even length (1 where odd) against o3-mini's 2:
    # both games go to the stronger, so each question is won or lost outright
    wins = sum(len(first_line(q["prompt"])) % 2 == 0 for q in chosen)
    plain = score_run(out, ScoreOptions(n_bootstrap=0)).rows
    (row,) = [r for r in plain if r["model"] == "mixed"]
    assert row["score"] == pytest.approx(100.0 * wins / 24) and row["n"] == 24
    ratings = json.loads((out / "ratings.json").read_text())
    assert ratings["method"] == "style-control" and ratings["style_features"] == ["markdown", "length"]
    judge_bodies = [b for b in server.stats.bodies if b["model"] == "judge-good"]
    assert len(judge_bodies) == 48 and {(b["temperature"], b["max_tokens"]) for b in judge_bodies} == {
        (0.0, 16000)
    }
    og = official_settings()["hard_prompt"]["system_prompt"]
    assert all(b["messages"][0] == {"role": "system", "content": og} for b in judge_bodies)
    run_json = json.loads((out / "run.json").read_text())
    preset = run_json["judge_preset"]
    assert preset["reference"]["model"] == "gpt-4.1" and preset["follows_reference"] is False
    assert preset["judges"]["judge-good"]["deviations"] == ["model judge-good (reference gpt-4.1)"]
    assert run_json["bench_info"]["missing_baseline_answers"][GEMINI]["n"] == 250
    err = capsys.readouterr().err
    assert err.count("250 creative_writing question(s) have no official gemini-2.0-flash-001 answer") == 1
    assert (
        err.count("judge judge-good deviates from the reference judge: model judge-good (reference gpt-4.1)")
        == 1  # said once, when the run starts (issue 42)
    )


@needs_registry
def test_both_categories_each_with_its_prompt_baseline_and_scoring(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_network(monkeypatch)
    gemini = synthetic_gemini(tmp_path, monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(data_dir(tmp_path, gemini)))
    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"mixed": {}, "judge-good": {}})
    out = tmp_path / "run"
    result = run_quiet(
        bench="arena-hard-v2.0", models_file=models, models=["mixed"], judges=["judge-good"], out=out,
        limit=12, limit_sample="stratified",
    )  # fmt: skip
    assert result.exit_code == 0
    judgments = read_jsonl(out / "judgments" / "judge-good" / "mixed.jsonl")
    by_category = {j["category"]: j for j in judgments}
    assert by_category["creative_writing"]["baseline"] == GEMINI
    assert by_category["hard_prompt"]["baseline"] == "o3-mini-2025-01-31"
    creative_prompt = official_settings()["creative_writing"]["system_prompt"]
    prompts = {b["messages"][0]["content"] for b in server.stats.bodies if "A creative answer to" in str(b)}
    assert prompts == {creative_prompt}
    rows = {(r["category"], r["model"]): r for r in result.leaderboard if "category" in r}
    assert {category for category, _ in rows} == {"hard_prompt", "creative_writing"}
    ratings = json.loads((out / "ratings.json").read_text())
    assert ratings["style_categories"] == ["hard_prompt"]
    creative = [j for j in judgments if j["category"] == "creative_writing"]
    question = {q["uid"]: q["prompt"] for q in questions("arena-hard-v2.0")}
    wins = sum(len(first_line(question[j["uid"]])) % 2 == 0 for j in creative)
    # creative writing is the plain weighted win rate (no style control), against gemini's answers
    assert rows[("creative_writing", "mixed")]["score"] == pytest.approx(
        100.0 * wins / len(creative), abs=1e-9
    )


@needs_registry
def test_v01_by_name_needs_no_extra_file(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    bench = load_benchmark("arena-hard-v0.1")
    assert bench.name == "arena-hard-v0.1" and bench.baselines() == ["gpt-4-0314"]
    result = run_quiet(
        bench="arena-hard-v0.1", models_file=models, models=["strong"], judges=["judge-good"],
        out=tmp_path / "run", limit=5, n_bootstrap=0,
    )  # fmt: skip
    (row,) = [r for r in result.leaderboard if r["model"] == "strong"]
    assert row["score"] == 100.0 and row["n"] == 5  # 4 against 2: every game a strong win
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run_json["judge_preset"]["reference"]["model"] == "gpt-4-1106-preview"
