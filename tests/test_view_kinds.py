"""The browser's data for every kind of result besides pairwise verdicts, from real runs
(tests/view_kinds_fixtures.py): rubric items with the answer's score, each family's summary on its own
scale, and the prompts of a run on a question file, kept in the run directory or read from its path."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import view_kinds_fixtures as vk
from conftest import SHARED_DATA
from jurist.benchmarks import Question
from jurist.run import kept_questions
from jurist.store import RunDir
from jurist.store.jsonl import read_jsonl
from jurist.view import codes
from jurist.view.index import ViewData
from jurist.view.summary import summarize


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
        with vk.kinds_runs(tmp_path_factory.mktemp("view-kinds")) as made:
            yield made


def judgments(run: Path, judge: str) -> dict[str, dict[str, Any]]:
    return {r["uid"]: r for r in read_jsonl(run / "judgments" / judge / "m.jsonl")}


def leaderboard(run: Path) -> dict[str, Any]:
    (row,) = json.loads((run / "leaderboard.json").read_text())
    assert isinstance(row, dict)
    return row


def test_rubric_items_come_with_the_answers_score(runs: dict[str, Path]) -> None:
    """Each HealthBench answer is one rubric judgment with every item (criterion, points, met, the grader's
    reply), scored as scoring scores it: the clipped mean of the shown scores is the leaderboard's."""
    run = runs["healthbench"]
    view = ViewData([run])
    stored = judgments(run, "g")
    assert view.judges == ["g"] and len(view.rows) == vk.HB_ROWS
    shown: list[float] = []
    for i, row in enumerate(view.rows):
        (judged,) = view.payload(i)["runs"][0]["judged"]  # its points are not listed a second time
        record = judged["record"]
        assert judged["kind"] == "rubric" and record == stored[row.uid] and judged["grading"] == "points"
        items = record["items"]
        assert all({"criterion", "points", "status", "raw"} <= set(item) for item in items)
        if any(item["status"] != "scored" for item in items):
            assert judged["score"] is None
            continue
        met = sum(item["points"] for item in items if item["met"])
        possible = sum(item["points"] for item in items if item["points"] > 0)
        assert judged["score"] == pytest.approx(met / possible)
        shown.append(judged["score"])
    assert len(shown) == vk.HB_ROWS - 1  # the first answer has an item the grader never read
    board = leaderboard(run)
    assert board["unscored_answers"] == 1 and board["n_answers"] == len(shown)
    assert board["score"] == pytest.approx(min(1.0, max(0.0, sum(shown) / len(shown))))
    index = view.index("static", {})
    n_models = len(view.models)
    cell_codes = [ord(index["cells"][i * n_models]) - codes.CODE_OFFSET for i in range(len(view.rows))]
    assert cell_codes[0] == codes.POINT_UNSCORED
    assert set(cell_codes[1:]) <= {codes.POINT_PASS, codes.POINT_PARTIAL, codes.POINT_FAIL}


def test_writingbench_criteria_scores_and_descriptions(runs: dict[str, Path]) -> None:
    run = runs["writingbench"]
    view = ViewData([run])
    scores = []
    for i in range(len(view.rows)):
        payload = view.payload(i)
        (judged,) = payload["runs"][0]["judged"]
        items = judged["record"]["items"]
        assert judged["score"] == pytest.approx(sum(item["score"] for item in items) / len(items))
        assert judged["grading"] == "criteria"  # how the page reads the items: the suite's, not its name
        assert all(payload["criteria"][item["name"]] for item in items)  # the checklist's descriptions
        scores.extend(item["score"] for item in items)
    assert leaderboard(run)["overall"] == pytest.approx(sum(scores) / len(scores))


def test_each_family_is_summarised_on_its_own_scale(runs: dict[str, Path]) -> None:
    views = [runs["healthbench"], runs["writingbench"], runs["custom"]]
    entries = summarize([ViewData([run]).runs[0] for run in views], categories=False)["runs"]
    hb, wb, custom = entries
    assert (hb["family"], hb["scale"]) == ("rubric", [0.0, 1.0]) and hb["title"].startswith("HealthBench")
    assert (wb["family"], wb["scale"]) == ("rubric", [1.0, 10.0]) and "1-10" in wb["title"]
    assert custom["family"] == "pairwise" and custom["title"] == (
        "Leaderboard: weighted win rate against the baseline (%)"
    )
    assert hb["points"] == [] and wb["points"] == []  # rubric grades are in the leaderboard, not here
    # the layout, column and breakdowns the page draws are each family's (and suite's) own
    assert (hb["board"]["layout"], hb["board"]["score_field"], hb["board"]["digits"]) == (
        "rubric",
        "score",
        3,
    )
    assert [part[0] for part in hb["board"]["breakdowns"]] == ["themes", "axes"]
    assert (wb["board"]["layout"], wb["board"]["score_field"], wb["board"]["digits"]) == (
        "rubric",
        "overall",
        2,
    )
    assert wb["board"]["score_label"] == "overall (1-10)" and wb["board"]["breakdowns"] == [
        ["domain1", "domain", "By domain (1-10)"]
    ]
    assert custom["board"]["layout"] == "pairwise"


def test_prompts_of_a_question_file_are_kept_in_the_run(runs: dict[str, Path], tmp_path: Path) -> None:
    info = json.loads((runs["custom"] / "run.json").read_text())
    assert info["bench_path"] == str(runs["questions"].resolve())
    assert info["questions_kept"] == "questions.jsonl"
    kept = read_jsonl(runs["custom"] / "questions.jsonl")
    assert [set(row) for row in kept] == [{"uid", "category", "prompt"}] * len(vk.QUESTIONS)
    view = ViewData([runs["custom"]])
    assert [view.payload(i)["prompt"] for i in range(3)] == [p for _, p in vk.QUESTIONS]
    # the question file moved away: the copy still shows the prompts
    moved = tmp_path / "moved.jsonl"
    shutil.copy(runs["questions"], moved)
    copy = tmp_path / "run"
    shutil.copytree(runs["custom"], copy)
    info["bench_path"] = str(tmp_path / "gone.jsonl")
    (copy / "run.json").write_text(json.dumps(info))
    assert ViewData([copy]).payload(0)["prompt"] == vk.QUESTIONS[0][1]
    # no copy either: the page says why there are no prompts
    (copy / "questions.jsonl").unlink()
    gone = ViewData([copy])
    assert gone.payload(0)["prompt"] is None and gone.runs[0].prompt_note is not None
    assert "gone.jsonl" in gone.runs[0].prompt_note and "moved or deleted" in gone.runs[0].prompt_note
    assert gone.index("static", {})["runs"][0]["prompt_note"] == gone.runs[0].prompt_note
    # no copy, the file where run.json says: read from there
    info["bench_path"] = str(moved)
    (copy / "run.json").write_text(json.dumps(info))
    assert ViewData([copy]).payload(2)["prompt"] == vk.QUESTIONS[2][1]
    # a run made before either was recorded names only the file's stem
    del info["bench_path"]
    (copy / "run.json").write_text(json.dumps(info))
    old = ViewData([copy])
    assert old.payload(0)["prompt"] is None and "no benchmark jurist knows" in str(old.runs[0].prompt_note)


def test_the_kept_questions_grow_with_the_run_and_stay_small(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "q.jsonl"
    source.write_text("{}\n")
    run_dir = RunDir(tmp_path / "run")
    first = [Question(uid="a", prompt="first", category="x", metadata={"big": "y" * 1000})]
    fields = kept_questions.keep_questions(run_dir, str(source), first)
    assert fields == {"bench_path": str(source.resolve()), "questions_kept": "questions.jsonl"}
    second = [Question(uid="b", prompt="second", category="x")]
    kept_questions.keep_questions(run_dir, str(source), second)  # a later run of a --limit more
    rows = read_jsonl(run_dir.root / "questions.jsonl")
    assert rows == [
        {"uid": "a", "category": "x", "prompt": "first"},
        {"uid": "b", "category": "x", "prompt": "second"},
    ]
    assert kept_questions.keep_questions(run_dir, "healthbench", first) == {}  # a benchmark by name
    monkeypatch.setattr(kept_questions, "KEEP_LIMIT", 10)
    refused = kept_questions.keep_questions(RunDir(tmp_path / "big"), str(source), first)
    assert "questions_kept" not in refused and "over" in refused["questions_not_kept"]
    assert not (tmp_path / "big" / "questions.jsonl").exists()


def _hb(*items: tuple[float, bool | None]) -> dict[str, Any]:
    entries = [
        {"points": points, "met": met, "status": "scored" if met is not None else "unscored"}
        for points, met in items
    ]
    return {"kind": "rubric", "metric": "healthbench", "items": entries}


def test_an_answers_rubric_score_and_its_cell_code() -> None:
    """Penalties count against the met points and not in the possible ones; an unscored item, or no
    positive item, leaves the answer without a score; WritingBench's 1-10 floor is a fail."""
    from jurist.view.rubric import answer_score, rubric_code

    assert answer_score(_hb((10, True), (5, False), (-5, True))) == pytest.approx(5 / 15)
    assert rubric_code(_hb((10, True), (5, True))) == (codes.POINT_PASS, 1.0)
    assert rubric_code(_hb((10, False), (-5, True))) == (codes.POINT_FAIL, -0.5)  # unclipped, as scored
    assert rubric_code(_hb((10, True), (5, None))) == (codes.POINT_UNSCORED, None)
    assert answer_score(_hb((-5, False))) is None
    writing = {"metric": "writingbench", "items": [{"status": "scored", "score": s} for s in (1, 1)]}
    assert rubric_code(writing) == (codes.POINT_FAIL, 1.0)
    writing["items"].append({"status": "scored", "score": 10})
    assert rubric_code(writing) == (codes.POINT_PARTIAL, 4.0)
