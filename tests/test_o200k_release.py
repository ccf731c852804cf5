"""The o200k tables let go once a run's answers are written (jurist.tokens.release_o200k): they served the
answers' style metadata and would otherwise sit under the judging and the scoring (17 MB of Arena-Hard's
judged run). Runs answering at once in one process keep them until the last is done; a count made later
builds them again; a run whose judge counts its prompts (Anthropic's cache marks) keeps them."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import write_models_file
from jurist.config import ModelSpec
from jurist.run import pipeline
from jurist.store import RunDir
from jurist.store.jsonl import read_jsonl
from jurist.tokens import count_tokens, pieces


@pytest.fixture(autouse=True)
def no_caller_counting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pieces, "_users", 0)  # whatever runs of other tests left counted


def test_the_tables_go_when_the_last_caller_is_done_and_a_later_count_builds_them_again() -> None:
    text = "Byte-pair merges, counted twice: ünïcödé and 12345 digits."
    expected = count_tokens(text)
    pieces.hold_o200k()  # two runs answering in one process
    pieces.hold_o200k()
    pieces.o200k_counter()
    pieces.release_o200k()
    assert pieces._counter is not None  # the other run still counts
    pieces.release_o200k()
    assert pieces._counter is None
    assert count_tokens(text) == expected and pieces._counter is not None  # built again, counting the same


def test_a_caller_done_without_letting_go_leaves_them_for_the_next() -> None:
    pieces.hold_o200k()
    counter = pieces.o200k_counter()
    pieces.release_o200k(let_go=False)
    assert pieces._users == 0 and pieces._counter is not None
    pieces.hold_o200k()  # the next run in the process finds them built
    assert pieces.o200k_counter() == counter
    pieces.release_o200k()
    assert pieces._counter is None


def _pipeline(judges: dict[str, ModelSpec]) -> Any:
    run = pipeline.Pipeline.__new__(pipeline.Pipeline)
    run.plan = SimpleNamespace(judges=list(judges), specs=judges, mode="all")
    run._counting = True
    return run


@pytest.mark.parametrize(
    ("judges", "released"),
    [
        ({"judge": ModelSpec(model="gpt-4.1")}, True),
        ({"judge": ModelSpec(model="claude-sonnet-4", api_type="anthropic")}, False),  # counts its prompts
        ({}, False),  # answers only: the run ends with its answers
    ],
)
def test_a_run_lets_the_tables_go_only_where_nothing_it_does_next_counts(
    monkeypatch: pytest.MonkeyPatch, judges: dict[str, ModelSpec], released: bool
) -> None:
    calls: list[bool] = []
    monkeypatch.setattr(pipeline, "release_o200k", lambda let_go: calls.append(let_go))
    asked: list[int] = []
    monkeypatch.setattr(pipeline, "import_ahead", lambda modules: asked.append(1))  # test_import_ahead.py
    run = _pipeline(judges)
    run._answered()
    run._answered()  # once at most
    assert calls == [released]
    assert asked == ([1] if judges else [])  # the closing modules: once, for a run that judges


def test_a_judged_run_lets_them_go_once_its_answers_are_in_while_it_judges(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mock_server(delay=0.05)
    questions = tmp_path / "question.jsonl"
    questions.write_text(
        "".join(json.dumps({"uid": f"q{i}", "prompt": f"question {i}?"}) + "\n" for i in range(12))
    )
    models = write_models_file(
        tmp_path / "m.yaml", server.base_url, {"strong": {}, "baseline": {}, "judge-good": {}}
    )
    out = tmp_path / "run"
    seen: list[tuple[int, int]] = []

    def release(let_go: bool) -> None:  # what is on disk when the tables go
        answers = len(read_jsonl(RunDir(out).answers("strong")))
        judged = len(read_jsonl(RunDir(out).judgments("judge-good", "strong")))
        seen.append((answers, judged))
        pieces.release_o200k(let_go=let_go)

    monkeypatch.setattr(pipeline, "release_o200k", release)
    result = run_quiet(bench=str(questions), models_file=models, models=["strong"], baseline="baseline",
                       judges=["judge-good"], out=out, judge_card=0)  # fmt: skip
    assert result.exit_code == 0
    assert len(seen) == 1
    answers, judged = seen[0]
    assert answers == 12 and judged < 12  # every answer in, the last ones' judgments still to come
    assert pieces._counter is None
