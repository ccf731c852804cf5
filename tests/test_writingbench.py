"""WritingBench: the shared queries and requirement index, the critic's rendering as upstream's str.format
gives it, and scores equal to an independent re-implementation of ``calculate_scores.py`` (micro overall,
x10, domains, requirements R and C); pinned data offline; ``jurist run --bench writingbench`` end to end."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks import writingbench
from jurist.benchmarks.base import Question
from jurist.benchmarks.registry import benchmark_names
from jurist.errors import JuristError
from jurist.families.rubric.score import reference_summary, score_rubric_points
from jurist.judging.base import JudgeItem
from jurist.judging.rubric import RubricJudge
from jurist.judging.rubric_prompts import WritingBenchGrader
from test_cli import jurist
from test_rubric_judge import (
    FAKE_WB_SYSTEM,
    FAKE_WB_TEMPLATE,
    FakeClient,
    install_reply,
    score_rule,
    spec,
    wb_reply,
    write_wb_prompt,
)

FOLDER = SHARED_DATA / "writingbench"


def raw_rows() -> list[dict[str, Any]]:
    text = (FOLDER / "benchmark_all.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def raw_requirements() -> dict[str, Any]:
    dimensions: dict[str, Any] = json.loads((FOLDER / "requirement_index.json").read_text())["dimensions"]
    return dimensions


@pytest.fixture(scope="module")
def questions() -> list[Question]:
    index = writingbench.read_requirement_index(FOLDER / "requirement_index.json")
    return writingbench.read_questions(FOLDER / "benchmark_all.jsonl", index)


def grader() -> WritingBenchGrader:
    return WritingBenchGrader(FAKE_WB_SYSTEM, FAKE_WB_TEMPLATE, "test", {"temperature": 1.0})


def graded_points(questions: Sequence[Question]) -> list[dict[str, Any]]:
    kind = RubricJudge(grader(), spec())
    client = FakeClient(wb_reply)

    async def main() -> list[dict[str, Any]]:
        points: list[dict[str, Any]] = []
        for question in questions:
            record = await kind.judge(client, JudgeItem("g", "m", question, 0, "a response"), cache="use")  # type: ignore[arg-type]
            points.extend(kind.outcomes(record))
        return points

    return asyncio.run(main())


def _mean(values: Sequence[float]) -> float | None:
    """A requirement no scored query involves: upstream writes 0, jurist None."""
    return sum(values) / len(values) if values else None


def calculate_scores(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``calculate_scores.py``'s numbers for the critic's known scores, written out again here."""
    per_query: dict[int, float] = {}
    per_criterion: dict[int, dict[str, int]] = {}
    total = count = 0
    for row in rows:
        scores = {c["name"]: score_rule(c) for c in row["checklist"]}
        per_criterion[row["index"]] = scores
        per_query[row["index"]] = sum(scores.values()) / len(scores)
        total, count = total + sum(scores.values()), count + len(scores)
    domains: dict[str, dict[str, list[float]]] = {"domain1": defaultdict(list), "domain2": defaultdict(list)}
    for row in rows:
        for level in domains:
            domains[level][row[level]].append(per_query[row["index"]])
    requirements: dict[str, tuple[float | None, float | None]] = {}
    for dim, data in raw_requirements().items():
        r_scores = [per_query[i] for i in data["R_indices"] if i in per_query]
        c_scores = [
            per_criterion[i][name]
            for i in data["R_indices"]
            if i in per_query
            for name in data["C_criteria_names"][str(i)]
        ]
        requirements[dim] = (_mean(r_scores), _mean(c_scores))
    return {
        "overall": total / count,
        "domain1": {k: sum(v) / len(v) for k, v in domains["domain1"].items()},
        "domain2": {k: sum(v) / len(v) for k, v in domains["domain2"].items()},
        "requirements": requirements,
    }


# -- data ----------------------------------------------------------------------------------------------------
def test_the_shared_queries_load_with_their_requirements(questions: list[Question]) -> None:
    assert len(questions) == 1000 and all(len(q.metadata["checklist"]) == 5 for q in questions)
    assert {q.category for q in questions} == {
        "Academic & Engineering",
        "Finance & Business",
        "Politics & Law",
        "Literature & Arts",
        "Education",
        "Advertising & Marketing",
    }
    counts = {
        dim: sum(dim in q.metadata["requirements"]["R"] for q in questions) for dim in writingbench.DIMENSIONS
    }
    assert counts == {"style": 442, "format": 498, "length": 222}
    named = sum(len(names) for q in questions for names in q.metadata["requirements"]["C"].values())
    assert named == 498 + 511 + 226


def test_upstreams_six_requirement_files_read_as_the_compact_index(tmp_path: Path) -> None:
    """The reader of upstream's files, on small files of that shape, against the index made of them."""
    paths: dict[tuple[str, str], Path] = {}
    index: dict[str, Any] = {"dimensions": {}}
    for offset, dim in enumerate(writingbench.DIMENSIONS):
        r_rows = [{"index": offset + k, "query": "q"} for k in (1, 4)]
        c_rows = [{"index": offset + 1, "checklist": [{"name": f"{dim}-a"}, {"name": f"{dim}-b"}]}]
        for suffix, rows in (("", r_rows), ("_C", c_rows)):
            paths[(dim, suffix)] = tmp_path / f"{dim}{suffix}.jsonl"
            paths[(dim, suffix)].write_text("".join(json.dumps(r) + "\n" for r in rows))
        index["dimensions"][dim] = {
            "R_indices": [offset + 1, offset + 4],
            "C_criteria_names": {str(offset + 1): [f"{dim}-a", f"{dim}-b"]},
        }
    (tmp_path / "index.json").write_text(json.dumps(index))
    from_files = writingbench.read_requirement_subsets(paths)
    assert from_files == writingbench.read_requirement_index(tmp_path / "index.json")
    assert from_files[0]["length"] == {3, 6} and from_files[1]["style"] == {1: ["style-a", "style-b"]}


def test_the_critic_request_is_upstreams_format_of_the_criterion(questions: list[Question]) -> None:
    question = Question(uid="7", prompt="Write {response} about {criteria}.", metadata=questions[0].metadata)
    messages = grader().messages(question, "My {query} answer", 2)
    criterion = questions[0].metadata["checklist"][2]
    assert messages == [
        {"role": "system", "content": FAKE_WB_SYSTEM},
        {
            "role": "user",
            "content": FAKE_WB_TEMPLATE.format(
                query="Write {response} about {criteria}.", response="My {query} answer", criteria=criterion
            ),
        },
    ]
    assert "'name': " in messages[1]["content"] and '{"score": n' in messages[1]["content"]


# -- scores --------------------------------------------------------------------------------------------------
def test_scores_equal_calculate_scores_on_every_query(questions: list[Question]) -> None:
    (row,) = score_rubric_points(
        graded_points(questions), suite="writingbench", variant=None, n_bootstrap=50, seed=0, ci_level=0.9
    )
    want = calculate_scores(raw_rows())
    assert row["overall"] == pytest.approx(want["overall"], abs=1e-12) and row["n_scores"] == 5000
    assert row["overall_x10"] == pytest.approx(10 * want["overall"], abs=1e-11)
    assert set(row["domain1"]) == set(want["domain1"]) and len(row["domain2"]) == len(want["domain2"]) == 100
    for level in ("domain1", "domain2"):
        for name, value in want[level].items():
            assert row[level][name] == pytest.approx(value, abs=1e-12), name
    for dim, (r_value, c_value) in want["requirements"].items():
        assert row["requirements"][dim]["R"] == pytest.approx(r_value, abs=1e-12)
        assert row["requirements"][dim]["C"] == pytest.approx(c_value, abs=1e-12)
    assert row["ci_low"] < row["overall"] < row["ci_high"]
    summary = reference_summary(row)
    assert summary["overall_avg"] == row["overall"] and summary["n_queries"] == 1000
    assert summary["requirement_C"]["format"] == row["requirements"]["format"]["C"]


def test_a_subset_scores_its_own_requirements(questions: list[Question]) -> None:
    chosen = [q for q in questions if int(q.uid) % 9 == 0]
    (row,) = score_rubric_points(
        graded_points(chosen), suite="writingbench", variant=None, n_bootstrap=50, seed=0, ci_level=0.9
    )
    want = calculate_scores([r for r in raw_rows() if r["index"] % 9 == 0])
    assert row["overall"] == pytest.approx(want["overall"], abs=1e-12)
    for dim, (r_value, c_value) in want["requirements"].items():
        assert (row["requirements"][dim]["R"], row["requirements"][dim]["C"]) == pytest.approx(
            (r_value, c_value)
        )


def test_a_criterion_the_critic_does_not_grade_leaves_its_answer_unscored(questions: list[Question]) -> None:
    kind = RubricJudge(grader(), spec())
    first = questions[0].metadata["checklist"][0]["name"]
    client = FakeClient(
        lambda m: '{"score": 7.0, "reason": "x"}' if first in m[1]["content"] else wb_reply(m)
    )
    record = asyncio.run(kind.judge(client, JudgeItem("g", "m", questions[0], 0, "r"), cache="use"))  # type: ignore[arg-type]
    assert record["unscored"] == 1 and len(client.requests) == 5 + 1
    (row,) = score_rubric_points(
        kind.outcomes(record), suite="writingbench", variant=None, n_bootstrap=10, seed=0, ci_level=0.9
    )
    assert row["overall"] is None and row["unscored_answers"] == 1 and row["unscored_items"] == 1


# -- pinned data, offline ------------------------------------------------------------------------------------
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.request

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network is off in this test")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def test_offline_without_a_data_dir_names_every_file_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_network(monkeypatch)
    monkeypatch.delenv("JURIST_DATA_DIR", raising=False)
    with pytest.raises(JuristError) as failed:
        writingbench.benchmark({})
    message = str(failed.value)
    assert (
        "\n" not in message and "JURIST_DATA_DIR" in message and "writingbench/benchmark_all.jsonl" in message
    )
    assert "writingbench/requirement/style/style_subset_C.jsonl" in message
    assert "writingbench/requirement_index.json instead" in message


def test_the_shared_data_dir_works_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_network(monkeypatch)
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    bench = writingbench.benchmark({})
    assert (
        len(bench.questions) == 1000
        and bench.judge_kind == "rubric"
        and bench.judge_protocol == "writingbench"
    )
    assert bench.info["grader"]["top_p"] == 0.95 and "requirement_index.json" in bench.info["requirements"]


def test_an_altered_requirement_index_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "writingbench").mkdir()
    (tmp_path / "writingbench" / "requirement_index.json").write_text('{"dimensions": {}}')
    monkeypatch.setenv("JURIST_DATA_DIR", str(tmp_path))
    with pytest.raises(JuristError, match="sha256 .* is not that of the shared data's requirement index"):
        writingbench.benchmark({})


# -- jurist run, end to end ----------------------------------------------------------------------------------
@pytest.mark.skipif(
    "writingbench" not in benchmark_names(),
    reason="writingbench is not registered yet (the proposed registry and pipeline diffs are not applied)",
)
def test_jurist_run_writingbench_end_to_end(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mock_server()
    install_reply(server, wb_reply)
    write_models_file(tmp_path / "m.yaml", server.base_url, {"m": {}, "critic": {"temperature": None}})
    prompt = write_wb_prompt(tmp_path / "critic.py")
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    result = jurist(
        "run",
        "--bench",
        "writingbench",
        "--limit",
        "6",
        "--model",
        "m",
        "--judge",
        "critic",
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
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    (row,) = json.loads(result.stdout)
    rows = raw_rows()[:6]
    want = calculate_scores(rows)
    assert row["overall"] == pytest.approx(want["overall"], abs=1e-12) and row["n_scores"] == 30
    assert server.stats.requests_by_model["critic"] == 30
    critic = [b for b in server.stats.bodies if b["model"] == "critic"]
    assert {(b["temperature"], b["top_p"]) for b in critic} == {(1.0, 0.95)}  # upstream's, where unset
    for dim, (r_value, c_value) in want["requirements"].items():
        got = (row["requirements"][dim]["R"], row["requirements"][dim]["C"])
        assert got == ((None, None) if r_value is None else pytest.approx((r_value, c_value))), dim
    assert any(r is None for r, _ in want["requirements"].values())  # a requirement no query of these has
    shown = jurist("show", "run", "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0 and json.loads(shown.stdout) == [row]
