"""The modules a run's closing steps need are imported in a thread while it waits on its last replies
(jurist.run.ahead): a judged run's once every answer is written (after the o200k tables go), a run
without judges' as it starts answering, an answers-only run's never; each family names its own."""

from __future__ import annotations

import importlib
import json
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.families import score_family, scoring_modules
from jurist.families.registry import _BUILT_IN
from jurist.report import DRAWING_MODULES
from jurist.run import pipeline
from jurist.run.ahead import import_ahead
from jurist.store import RunDir
from jurist.store.jsonl import read_jsonl


def test_the_modules_are_imported_in_a_thread_and_a_failing_one_is_left_for_its_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ahead_probe_one.py").write_text(
        "import threading\nTHREAD = threading.current_thread().name\n"
    )
    (tmp_path / "ahead_probe_broken.py").write_text("raise RuntimeError('broken on import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    listed_in: list[str] = []

    def names() -> list[str]:
        listed_in.append(threading.current_thread().name)  # worked out in the thread too
        return ["ahead_probe_broken", "no_such_module_anywhere", "ahead_probe_one", "ahead_probe_one"]

    for name in ("ahead_probe_one", "ahead_probe_broken"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    thread = import_ahead(names)
    thread.join(timeout=30)
    assert not thread.is_alive() and thread.daemon
    assert listed_in == ["jurist-import-ahead"]
    assert sys.modules["ahead_probe_one"].THREAD == "jurist-import-ahead"
    assert "ahead_probe_broken" not in sys.modules  # its own step imports it again and says why
    with pytest.raises(RuntimeError, match="broken on import"):
        importlib.import_module("ahead_probe_broken")


def test_a_list_that_fails_to_be_made_imports_nothing_and_raises_nothing() -> None:
    def names() -> Iterable[str]:
        raise RuntimeError("no family")

    thread = import_ahead(names)
    thread.join(timeout=30)
    assert not thread.is_alive()


@pytest.mark.parametrize("family", sorted(_BUILT_IN))
def test_every_module_a_family_names_for_its_scoring_imports(family: str) -> None:
    named = scoring_modules(family)
    assert named == tuple(getattr(score_family(family), "scoring_modules", ()))
    for name in named:
        importlib.import_module(name)
    for name in DRAWING_MODULES:
        importlib.import_module(name)


def _run_dir_and_models(tmp_path: Path, server: Any) -> tuple[Path, Path]:
    questions = tmp_path / "question.jsonl"
    questions.write_text(
        "".join(json.dumps({"uid": f"q{i}", "prompt": f"question {i}?"}) + "\n" for i in range(12))
    )
    models = write_models_file(
        tmp_path / "m.yaml", server.base_url, {"strong": {}, "baseline": {}, "judge-good": {}}
    )
    return questions, models


@pytest.mark.parametrize("card", [0, 5])
def test_a_judged_run_imports_them_once_its_answers_are_in_while_it_judges(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch, card: int
) -> None:
    questions, models = _run_dir_and_models(tmp_path, mock_server(delay=0.05))
    out = tmp_path / "run"
    seen: list[tuple[int, int, list[str]]] = []

    def ahead(modules: Callable[[], Iterable[str]]) -> None:  # what is on disk when they are asked for
        answers = len(read_jsonl(RunDir(out).answers("strong")))
        judged = len(read_jsonl(RunDir(out).judgments("judge-good", "strong")))
        seen.append((answers, judged, list(modules())))

    monkeypatch.setattr(pipeline, "import_ahead", ahead)
    result = run_quiet(bench=str(questions), models_file=models, models=["strong"], baseline="baseline",
                       judges=["judge-good"], out=out, judge_card=card)  # fmt: skip
    assert result.exit_code == 0
    assert len(seen) == 1
    answers, judged, names = seen[0]
    assert answers == 12 and judged < 12  # every answer in, the last ones' judgments still to come
    assert names[: len(scoring_modules("pairwise"))] == list(scoring_modules("pairwise"))
    assert names[-len(DRAWING_MODULES) :] == list(DRAWING_MODULES)
    card_part = names[len(scoring_modules("pairwise")) : -len(DRAWING_MODULES)]
    assert card_part == (["jurist.audit.probe_run", "jurist.audit.pairwise"] if card else [])


def test_an_answers_only_run_imports_only_its_report_tables_ahead(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It scores nothing, so no scoring module; its ledger is a table, drawn as the others' are. They are
    asked for once the last answer request is taken, while replies are still to come."""
    server = mock_server(delay=0.3)
    questions, models = _run_dir_and_models(tmp_path, server)
    out = tmp_path / "run"
    calls: list[tuple[int, list[str]]] = []

    def ahead(modules: Callable[[], Iterable[str]]) -> None:
        calls.append((len(RunDir(out).answers("strong").read_text().splitlines()), list(modules())))

    monkeypatch.setattr(pipeline, "import_ahead", ahead)
    result = run_quiet(bench=str(questions), models_file=models, models=["strong"], baseline="baseline",
                       judges=["judge-good"], out=out, mode="inference-only")  # fmt: skip
    assert result.exit_code == 0 and len(calls) == 1
    written, names = calls[0]
    assert names == list(DRAWING_MODULES)
    assert written < 12  # asked for while the last replies were still on their way, not after them


def test_a_rule_checked_run_imports_them_as_it_starts_answering(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    questions = tmp_path / "q.jsonl"
    rows = [
        {"key": k, "prompt": f"question {k}: no commas", "instruction_id_list": ["punctuation:no_comma"],
         "kwargs": [{}]}
        for k in range(6)
    ]  # fmt: skip
    questions.write_text("".join(json.dumps(row) + "\n" for row in rows))
    models = write_models_file(tmp_path / "m.yaml", mock_server(delay=0.0).base_url, {"m": {}})
    out = tmp_path / "run"
    seen: list[tuple[int, list[str]]] = []

    def ahead(modules: Callable[[], Iterable[str]]) -> None:
        answers = RunDir(out).answers("m")
        seen.append((len(read_jsonl(answers)) if answers.exists() else 0, list(modules())))

    monkeypatch.setattr(pipeline, "import_ahead", ahead)
    result = run_quiet(bench="ifeval", bench_options={"file": str(questions)}, models_file=models,
                       models=["m"], out=out)  # fmt: skip
    assert result.exit_code == 0
    assert seen == [(0, [*scoring_modules("rules"), *DRAWING_MODULES])]  # before the first answer
