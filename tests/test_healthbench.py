"""HealthBench: the shared 500-row subset, the grader's rendering, and scores equal to an independent
re-implementation of simple-evals' formulas (clipped mean, seeded bootstrap std, themes, axes);
eval_framework's variant; unscored items; pinned data offline; ``jurist run --bench healthbench`` end to
end."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks import healthbench
from jurist.benchmarks.base import Question
from jurist.benchmarks.registry import benchmark_names
from jurist.errors import JuristError
from jurist.families.rubric.score import reference_summary, score_rubric_points
from jurist.judging.base import JudgeItem
from jurist.judging.rubric import RubricJudge
from jurist.ratings.winrate import win_rate_from_entries
from test_cli import jurist
from test_rubric_judge import (
    FAKE_HB_SYSTEM,
    FAKE_HB_TEMPLATE,
    FakeClient,
    criterion_of,
    digest,
    garbage_rule,
    hb_grader,
    hb_reply,
    install_reply,
    met_rule,
    spec,
    write_hb_prompt,
)

DATA = SHARED_DATA / "healthbench" / "healthbench_500_subset.jsonl"
SEED = 0


@pytest.fixture(scope="module")
def questions() -> list[Question]:
    return healthbench.read_questions(DATA)


def lines_of_file() -> list[str]:
    """The file's JSON lines (split on newlines only: its texts hold other Unicode line breaks)."""
    return [line for line in DATA.read_text(encoding="utf-8").split("\n") if line.strip()]


def rows_of_file() -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines_of_file()]


# -- an independent re-implementation of simple-evals' numbers, from the raw rows ----------------------------
def example_metrics(row: dict[str, Any], met: Callable[[dict[str, Any]], bool]) -> dict[str, float]:
    def ratio(items: list[dict[str, Any]]) -> float | None:
        positive = sum(i["points"] for i in items if i["points"] > 0)
        return None if positive == 0 else sum(i["points"] for i in items if met(i)) / positive

    overall = ratio(row["rubrics"])
    assert overall is not None
    metrics = {"overall_score": overall, **{tag: overall for tag in row["example_tags"]}}
    for tag in {t for i in row["rubrics"] for t in i["tags"]}:
        score = ratio([i for i in row["rubrics"] if tag in i["tags"]])
        if score is not None:
            metrics[tag] = score
    return metrics


def simple_evals_stats(values: Sequence[float], seed: int, clip: bool = True) -> tuple[float, float]:
    """simple-evals' ``_compute_clipped_stats`` mean and bootstrap_std, its numpy calls one by one."""
    squash = (lambda x: float(np.clip(x, 0, 1))) if clip else float
    rng = np.random.RandomState(seed)
    means = [squash(np.mean(rng.choice(values, len(values)))) for _ in range(1000)]
    return squash(np.mean(values)), float(np.std(means))


def expected(
    rows: list[dict[str, Any]], met: Callable[[dict[str, Any]], bool], skip: Callable[[dict[str, Any]], bool]
) -> dict[str, list[float]]:
    values: dict[str, list[float]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: r["prompt_id"]):  # jurist's documented order: by uid
        if any(skip(i) for i in row["rubrics"]):
            continue
        for name, value in example_metrics(row, met).items():
            values[name].append(value)
    return values


def graded_points(
    questions: Sequence[Question],
    reply: Callable[[list[dict[str, Any]]], str],
    *,
    simple_evals: bool = True,
    samples: int = 1,
) -> list[dict[str, Any]]:
    kind = RubricJudge(hb_grader(simple_evals), spec())
    client = FakeClient(reply)

    async def main() -> list[dict[str, Any]]:
        points: list[dict[str, Any]] = []
        for question in questions:
            for sample in range(samples):
                item = JudgeItem("g", "m", question, sample, f"answer of sample-{sample}")
                points.extend(kind.outcomes(await kind.judge(client, item, cache="use")))  # type: ignore[arg-type]
        return points

    return asyncio.run(main())


def score(points: list[dict[str, Any]], variant: str = "simple-evals") -> dict[str, Any]:
    (row,) = score_rubric_points(
        points, suite="healthbench", variant=variant, n_bootstrap=100, seed=SEED, ci_level=0.9
    )
    return row


# -- data ----------------------------------------------------------------------------------------------------
def test_the_shared_subset_loads_with_conversations_rubrics_and_themes(questions: list[Question]) -> None:
    assert len(questions) == 500 and sum(len(q.metadata["rubrics"]) for q in questions) == 5965
    turns = {len(q.metadata["messages"]) for q in questions}
    assert turns == {1, 3, 5, 7, 9, 11, 15}
    multi = next(q for q in questions if len(q.metadata["messages"]) == 3)
    assert multi.prompt == "\n\n".join(f"{m['role']}: {m['content']}" for m in multi.metadata["messages"])
    themes = {q.category for q in questions}
    assert themes == {
        "hedging",
        "global_health",
        "communication",
        "health_data_tasks",
        "emergency_referrals",
        "context_seeking",
        "complex_responses",
    }


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"prompt_id": "a", "prompt": [], "rubrics": []}', "line 1: field 'prompt' is not a non-empty list"),
        (
            '{"prompt_id": "a", "prompt": [{"role": "user", "content": "x"}], '
            '"rubrics": [{"criterion": "c", "points": -1, "tags": []}]}',
            "no item has positive points",
        ),
        (
            '{"prompt_id": "a", "prompt": [{"role": "user", "content": "x"}], '
            '"rubrics": [{"criterion": "c", "points": "3", "tags": []}]}',
            "item 1 needs a criterion and points",
        ),
    ],
)
def test_bad_rows_name_file_line_and_field(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "hb.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(JuristError, match=message):
        healthbench.read_questions(path)


def test_the_grader_request_as_each_variant_renders_it(questions: list[Question]) -> None:
    question = next(q for q in questions if len(q.metadata["messages"]) == 3)
    turns = [*question.metadata["messages"], {"role": "assistant", "content": "ANSWER <<rubric_item>>"}]
    rubric = question.metadata["rubrics"][0]
    se = hb_grader(True).messages(question, "ANSWER <<rubric_item>>", 0)
    conversation = "\n\n".join(f"{t['role']}: {t['content']}" for t in turns)
    shown = f"[{rubric['points']}] {rubric['criterion']}"
    assert se == [
        {"role": "system", "content": FAKE_HB_SYSTEM},
        {
            "role": "user",
            "content": FAKE_HB_TEMPLATE.replace("<<rubric_item>>", shown).replace(
                "<<conversation>>", conversation
            ),
        },  # the answer's look-alike placeholder stays text
    ]
    ef = hb_grader(False).messages(question, "ANSWER <<rubric_item>>", 0)
    conversation = "\n".join(f"{t['role']}: {t['content']}" for t in turns)
    assert ef == [
        {
            "role": "user",
            "content": FAKE_HB_TEMPLATE.replace("<<rubric_item>>", rubric["criterion"]).replace(
                "<<conversation>>", conversation
            ),
        }
    ]


# -- scores --------------------------------------------------------------------------------------------------
def test_scores_on_the_shared_subset_equal_simple_evals_formulas(questions: list[Question]) -> None:
    row = score(graded_points(questions, hb_reply))
    values = expected(rows_of_file(), lambda i: met_rule(i["criterion"]), lambda i: False)
    mean, std = simple_evals_stats(values["overall_score"], SEED)
    assert row["score"] == pytest.approx(mean, abs=1e-12) and row["bootstrap_std"] == pytest.approx(
        std, abs=1e-12
    )
    assert row["n_answers"] == 500 and row["unscored_answers"] == 0 and row["items"] == 5965
    assert 0.0 < row["score"] < 1.0 and 0.0 < row["bootstrap_std"] < 0.05
    themes = {name.split(":", 1)[1]: vals for name, vals in values.items() if name.startswith("theme:")}
    axes = {name.split(":", 1)[1]: vals for name, vals in values.items() if name.startswith("axis:")}
    assert set(row["themes"]) == set(themes) and len(themes) == 7
    assert (
        set(row["axes"])
        == set(axes)
        == {"accuracy", "completeness", "context_awareness", "communication_quality", "instruction_following"}
    )
    for table, want in ((row["themes"], themes), (row["axes"], axes)):
        for name, vals in want.items():
            theme_mean, theme_std = simple_evals_stats(vals, SEED)
            assert table[name]["score"] == pytest.approx(theme_mean, abs=1e-12), name
            assert table[name]["bootstrap_std"] == pytest.approx(theme_std, abs=1e-12), name
            assert table[name]["n"] == len(vals)
    summary = reference_summary(row)
    assert summary["score"] == row["score"] and summary["metrics"]["axis:accuracy:n_samples"] == len(
        axes["accuracy"]
    )


def test_unreadable_items_are_counted_unscored_and_the_rest_still_scores(questions: list[Question]) -> None:
    row = score(graded_points(questions, lambda m: hb_reply(m, garbage=True)))
    raw = rows_of_file()
    bad_items = sum(garbage_rule(i["criterion"]) for r in raw for i in r["rubrics"])
    bad_answers = sum(any(garbage_rule(i["criterion"]) for i in r["rubrics"]) for r in raw)
    assert row["unscored_items"] == bad_items > 0 and row["unscored_answers"] == bad_answers
    assert row["n_answers"] == 500 - bad_answers
    values = expected(raw, lambda i: met_rule(i["criterion"]), lambda i: garbage_rule(i["criterion"]))
    mean, std = simple_evals_stats(values["overall_score"], SEED)
    assert row["score"] == pytest.approx(mean, abs=1e-12) and row["bootstrap_std"] == pytest.approx(
        std, abs=1e-12
    )


def test_eval_framework_variant_does_not_clip(questions: list[Question]) -> None:
    def negative_met(messages: list[dict[str, Any]]) -> str:  # only undesirable criteria "met": scores <= 0
        user = messages[-1]["content"]
        criterion = criterion_of(user)
        points = next(
            i["points"] for q in questions for i in q.metadata["rubrics"] if i["criterion"] == criterion
        )
        return json.dumps({"explanation": "rule", "criteria_met": points < 0})

    subset = questions[:120]
    raw = {r["prompt_id"]: r for r in rows_of_file()}
    values = expected([raw[q.uid] for q in subset], lambda i: i["points"] < 0, lambda i: False)
    ef = score(graded_points(subset, negative_met, simple_evals=False), variant="eval-framework")
    unclipped = float(np.mean(values["overall_score"]))
    assert unclipped < 0 and ef["score"] == pytest.approx(unclipped, abs=1e-12)
    assert ef["bootstrap_std"] == pytest.approx(simple_evals_stats(values["overall_score"], SEED, False)[1])
    summary = reference_summary(ef)
    assert set(summary) == {"avg_score", "axis_avg", "n_examples"} and summary["n_examples"] == 120
    for axis, value in summary["axis_avg"].items():
        assert value == pytest.approx(float(np.mean(values[f"axis:{axis}"])), abs=1e-12)
    se = score(graded_points(subset, negative_met, simple_evals=False))
    assert se["score"] == 0.0 and se["ci_low"] == 0.0  # simple-evals clips the same grades to [0, 1]


def test_samples_add_the_question_clustered_interval(questions: list[Question]) -> None:
    def by_sample(messages: list[dict[str, Any]]) -> str:
        user = messages[-1]["content"]
        criterion = criterion_of(user)
        met = digest(criterion + ("1" if "sample-1" in user else "0"))[0] % 3 != 0
        return json.dumps({"explanation": "rule", "criteria_met": met})

    subset = questions[:80]
    row = score(graded_points(subset, by_sample, samples=2))
    assert row["n_answers"] == 160 and row["n_questions"] == 80 and row["samples"] == 2
    per_question: dict[str, list[float]] = defaultdict(list)
    flat = []
    for question in sorted(subset, key=lambda q: q.uid):
        for sample in range(2):
            items = question.metadata["rubrics"]
            got = sum(i["points"] for i in items if digest(i["criterion"] + str(sample))[0] % 3 != 0)
            overall = got / sum(i["points"] for i in items if i["points"] > 0)
            per_question[question.uid].append(overall)
            flat.append(overall)
    mean, std = simple_evals_stats(flat, SEED)  # simple-evals' n_repeats: every answer on its own
    assert row["score"] == pytest.approx(mean, abs=1e-12) and row["bootstrap_std"] == pytest.approx(
        std, abs=1e-12
    )
    uids = sorted(per_question)
    ci = win_rate_from_entries(
        [sum(per_question[u]) for u in uids], [2] * len(uids), n_bootstrap=100, seed=SEED, ci_level=0.9
    )
    assert (row["ci_low"], row["ci_high"]) == (ci.ci_low / 100, ci.ci_high / 100)
    assert row["ci_low"] < row["score"] < row["ci_high"]
    assert row["across_runs"]["n_runs"] == 2 and row["across_runs"]["std"] is not None


# -- pinned data, offline ------------------------------------------------------------------------------------
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.request

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network is off in this test")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def test_offline_without_a_data_dir_fails_at_once_naming_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_network(monkeypatch)
    monkeypatch.delenv("JURIST_DATA_DIR", raising=False)
    with pytest.raises(JuristError) as failed:
        healthbench.benchmark({})
    message = str(failed.value)
    assert (
        "\n" not in message
        and "JURIST_DATA_DIR" in message
        and "healthbench/healthbench_500_subset.jsonl" in message
    )


def test_the_shared_data_dir_works_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    bench = healthbench.benchmark({"variant": "eval-framework"})
    assert len(bench.questions) == 500 and bench.judge_kind == "rubric"
    assert bench.judge_protocol == "healthbench-eval-framework" and bench.info["sha256"].startswith(
        "648ba52f"
    )
    assert bench.info["grader"]["temperature"] == 1.0 and bench.info["grader"]["max_tokens"] == 2048
    with pytest.raises(JuristError, match="no variant 'other'"):
        healthbench.benchmark({"variant": "other"})


def test_official_subsets_are_read_locally_with_their_sha256_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(tmp_path))
    with pytest.raises(JuristError, match="hard_2025-05-08-21-00-10.jsonl is not in .*does not download it"):
        healthbench.benchmark({"subset": "hard"})
    (tmp_path / "healthbench").mkdir()
    (tmp_path / "healthbench" / "hard_2025-05-08-21-00-10.jsonl").write_text(
        "".join(line + "\n" for line in lines_of_file()[:3]), encoding="utf-8"
    )
    bench = healthbench.benchmark({"subset": "hard"})
    assert len(bench.questions) == 3 and bench.info["pinned"] is False and len(bench.info["sha256"]) == 64


# -- jurist run, end to end ----------------------------------------------------------------------------------
needs_registry = pytest.mark.skipif(
    "healthbench" not in benchmark_names(),
    reason="healthbench is not registered yet (the proposed registry and pipeline diffs are not applied)",
)


@needs_registry
def test_jurist_run_healthbench_end_to_end(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mock_server()
    install_reply(server, lambda m: hb_reply(m, garbage=True))
    write_models_file(tmp_path / "m.yaml", server.base_url, {"m": {}, "g": {}})
    prompt = write_hb_prompt(tmp_path / "grader.py")
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    args = [
        "run",
        "--bench",
        "healthbench",
        "--limit",
        "5",
        "--model",
        "m",
        "--judge",
        "g",
        "--models-file",
        "m.yaml",
        "--judge-prompt",
        str(prompt),
        "--out",
        "run",
        "--format",
        "json",
        "--no-progress",
        "--no-check",
    ]
    first = jurist(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (row,) = json.loads(first.stdout)
    raw = rows_of_file()[:5]
    items = [i for r in raw for i in r["rubrics"]]
    bad = sum(garbage_rule(i["criterion"]) for i in items)
    assert server.stats.requests_by_model["m"] == 5
    assert server.stats.requests_by_model["g"] == len(items) + bad  # one re-ask per unreadable item
    answered = [b for b in server.stats.bodies if b["model"] == "m"]
    sent = sorted(json.dumps(body["messages"]) for body in answered)  # in whatever order they arrived
    asked = [[{"role": t["role"], "content": t["content"]} for t in source["prompt"]] for source in raw]
    assert sent == sorted(json.dumps(turns) for turns in asked)  # every turn of a multi-turn prompt is sent
    values = expected(raw, lambda i: met_rule(i["criterion"]), lambda i: garbage_rule(i["criterion"]))
    mean, std = simple_evals_stats(values["overall_score"], SEED)
    assert row["score"] == pytest.approx(mean, abs=1e-12) and row["bootstrap_std"] == pytest.approx(
        std, abs=1e-12
    )
    assert row["unscored_items"] == bad and row["n_answers"] == len(values["overall_score"])
    judgments = [
        json.loads(x) for x in (tmp_path / "run" / "judgments" / "g" / "m.jsonl").read_text().splitlines()
    ]
    assert {j["kind"] for j in judgments} == {"rubric"} and len(judgments) == 5
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (
        summary["schema"] == "jurist.rubric.summary/1"
        and summary["rows"][0]["summary"]["score"] == row["score"]
    )
    shown = jurist("show", "run", "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == [row]
    sent = server.stats.requests
    again = jurist(*args, cwd=tmp_path)
    assert again.returncode == 0 and server.stats.requests == sent  # everything found on disk


@needs_registry
def test_the_cli_offline_without_data_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "jurist_data_dir")}
    env |= {
        "https_proxy": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "JURIST_CACHE_DIR": str(tmp_path / "cache"),
    }
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--bench", "healthbench", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 2 and time.monotonic() - started < 60
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "JURIST_DATA_DIR" in errors[0] and "healthbench_500_subset.jsonl" in errors[0]


@needs_registry
def test_a_failed_item_alone_is_asked_next_run_and_rejudging_asks_only_unscored_items(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = rows_of_file()[:3]
    target = next(i["criterion"] for i in raw[1]["rubrics"] if not garbage_rule(i["criterion"]))
    assert sum(json.dumps(r).count(json.dumps(target)[1:-1]) for r in raw) == 1  # it names one request
    server = mock_server(faults={target: ["400"]})
    broken = {"on": True}
    install_reply(server, lambda m: hb_reply(m, garbage=broken["on"]))
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    common = {
        "bench": "healthbench",
        "limit": 3,
        "models": ["m"],
        "judges": ["g"],
        "models_file": write_models_file(tmp_path / "m.yaml", server.base_url, {"m": {}, "g": {}}),
        "judge_prompt": write_hb_prompt(tmp_path / "grader.py"),
        "out": tmp_path / "run",
    }
    first = run_quiet(**common)
    assert first.exit_code == 1 and first.failures == 1
    kept = [json.loads(x) for x in (tmp_path / "run" / "partial_games.jsonl").read_text().splitlines()]
    assert len(kept) == len(raw[1]["rubrics"]) - 1  # every item of that answer but the failed one
    asked = server.stats.requests_by_model["g"]
    second = run_quiet(**common)
    assert second.exit_code == 0 and server.stats.requests_by_model["g"] - asked == 1
    bad = sum(garbage_rule(i["criterion"]) for r in raw for i in r["rubrics"])
    (row,) = second.leaderboard
    assert bad > 0 and row["unscored_items"] == bad
    broken["on"] = False
    asked = server.stats.requests_by_model["g"]
    third = run_quiet(**common, rejudge_invalid=True)
    assert third.exit_code == 0 and server.stats.requests_by_model["g"] - asked == bad
    (row,) = third.leaderboard
    values = expected(raw, lambda i: met_rule(i["criterion"]), lambda i: False)
    assert row["unscored_items"] == 0 and row["n_answers"] == 3
    assert row["score"] == pytest.approx(simple_evals_stats(values["overall_score"], SEED)[0], abs=1e-12)
