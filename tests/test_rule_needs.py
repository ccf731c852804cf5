"""The NLTK data a rule run checks for before its first request (jurist.rules.needs), and the checks
started as answers arrive (jurist.rules.ahead): the table holds what the checkers ask NLTK for, the
pre-flight imports no nltk, and a check started ahead gives what checking at the end gives."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA
from jurist.rules import ahead, nltk_data
from jurist.rules.evaluate import check_instruction, check_response, start_checking
from jurist.rules.ifbench_checks import IFBENCH_BY_VERSION
from jurist.rules.ifbench_common import punkt_sentences
from jurist.rules.needs import NLTK_NEEDS
from jurist.rules.registry import SUITES, checkers

SRC = Path(__file__).resolve().parents[1] / "src"


def _rows_with_answers() -> list[tuple[dict[str, Any], str]]:
    """IFEval's and IFBench's rows, each with the shipped model answer to its prompt."""
    found = []
    for folder, rows, answers in (
        ("ifeval", "input_data.jsonl", "input_response_data_gpt4_20231107_145030.jsonl"),
        ("ifbench", "IFBench_test.jsonl", "reference/sample_output.jsonl"),
    ):
        read = [json.loads(line) for line in (SHARED_DATA / folder / rows).read_text().splitlines() if line]
        by_prompt = {}
        for line in (SHARED_DATA / folder / answers).read_text().splitlines():
            if line.strip():
                answer = json.loads(line)
                by_prompt[answer["prompt"]] = answer["response"]
        found += [
            (row, by_prompt.get(row["prompt"], "A plain answer. It has two sentences.")) for row in read
        ]
    return found


def test_every_id_in_the_table_has_a_checker() -> None:
    known = {instruction_id for suite in SUITES for instruction_id in checkers(suite)}
    assert set(NLTK_NEEDS) <= known


def test_every_punkt_split_version_is_in_the_table() -> None:
    """db69a6f's checkers that split sentences with Punkt (``split=punkt_sentences``) need Punkt."""
    for table in IFBENCH_BY_VERSION.values():
        for instruction_id, checker in table.items():
            if isinstance(checker, functools.partial) and checker.keywords.get("split") is punkt_sentences:
                assert nltk_data.PUNKT_RESOURCE in NLTK_NEEDS.get(instruction_id, ()), instruction_id


def test_the_table_holds_what_the_checkers_ask_nltk_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every checker of every suite on the shipped answers (and a plain text): each resource it asks
    ``nltk_data.require`` for is in its row of the table."""
    asked: dict[str, set[str]] = defaultdict(set)
    current = [""]
    real = nltk_data.require

    def recording(resource: str) -> None:
        asked[current[0]].add(resource)
        real(resource)

    monkeypatch.setattr(nltk_data, "require", recording)
    from jurist.rules import ifbench_sentence, ifbench_words

    ifbench_sentence.english_stopwords.cache_clear()  # cached: each would ask only once per process
    ifbench_words._require_tagger.cache_clear()
    try:
        for suite in SUITES:
            table = checkers(suite)
            for row, answer in _rows_with_answers():
                for instruction_id, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True):
                    if instruction_id not in table:
                        continue
                    current[0] = instruction_id
                    for text in (answer, "Run. It is a plain answer."):
                        try:
                            check_instruction(table[instruction_id], instruction_id, text, kwargs or {}, "")
                        except nltk_data.MissingNltkData:
                            pass
    finally:
        ifbench_sentence.english_stopwords.cache_clear()
        ifbench_words._require_tagger.cache_clear()
    assert asked, "no checker asked for NLTK data"
    for instruction_id, resources in asked.items():
        assert resources <= set(NLTK_NEEDS.get(instruction_id, ())), instruction_id


def _preflight(env: dict[str, str], ids: list[str]) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        "from jurist.rules import checkers, require_resources\n"
        "table = checkers('ifbench')\n"
        f"require_resources(table, [(str(k), i, {{}}) for k, i in enumerate({ids!r})])\n"
        "print(sorted(m for m in ('nltk', 'langdetect', 'scipy') if m in sys.modules))\n"
    )
    full = {**os.environ, "PYTHONPATH": str(SRC), **env}
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, check=False)


def test_the_preflight_imports_no_nltk_and_still_refuses(tmp_path: Path) -> None:
    """Punkt found unpacked on NLTK_DATA: nothing heavy is imported; the stop words missing there (and
    nowhere else NLTK looks): one line naming the prompt, the instruction and the resource."""
    env = {
        "NLTK_DATA": str(SHARED_DATA / "nltk_data"),
        "JURIST_DATA_DIR": "",
        "JURIST_CACHE_DIR": str(tmp_path),
    }
    ok = _preflight(env, ["length_constraints:number_sentences", "keywords:existence"])
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "[]"
    refused = _preflight(env, ["keywords:existence", "ratio:stop_words"])
    if refused.returncode == 0:
        pytest.skip("NLTK's stop words are installed on this machine outside NLTK_DATA")
    assert "prompt 1 (ratio:stop_words)" in refused.stderr and "corpora/stopwords" in refused.stderr


def test_a_check_started_ahead_is_the_check_at_the_end() -> None:
    table = checkers("ifeval")
    rows = [(row, answer) for row, answer in _rows_with_answers() if row["instruction_id_list"][0] in table][
        :40
    ]
    for row, answer in rows:
        start_checking(table, answer, row["instruction_id_list"], row["kwargs"], row["prompt"])
    for row, answer in rows:
        key = ahead.check_key(table, answer, row["instruction_id_list"], row["kwargs"], row["prompt"])
        started = ahead.checked_ahead(key)
        assert started is not None
        with ahead.RUNNING:
            again = [
                check_instruction(table[i], i, answer, k or {}, row["prompt"])
                for i, k in zip(row["instruction_id_list"], row["kwargs"], strict=True)
            ]
        assert started.result() == again
        assert ahead.checked_ahead(key) is None  # taken once: a second ask checks again
        assert (
            check_response(table, answer, row["instruction_id_list"], row["kwargs"], row["prompt"]) == again
        )


def test_forgotten_checks_are_checked_again() -> None:
    table = checkers("ifeval")
    ids, kwargs = ["keywords:existence"], [{"keywords": ["plain"]}]
    start_checking(table, "a plain answer", ids, kwargs, "")
    ahead.forget_checked_ahead()
    assert ahead.checked_ahead(ahead.check_key(table, "a plain answer", ids, kwargs, "")) is None
    assert [r.strict for r in check_response(table, "a plain answer", ids, kwargs, "")] == [True]


def test_a_run_checks_its_answers_as_they_arrive(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every answer of an IFEval run is checked on the worker thread while the run is answering; the
    run's end finds each result there (no check runs on the main thread), and the points are those of
    checking at the end."""
    import threading

    from conftest import write_models_file
    from jurist.rules import evaluate

    rows = [
        {"key": k, "prompt": f"question {k}", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
        for k in range(12)
    ]
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"m": {}})
    threads: list[str] = []
    real = evaluate._check_all

    def counted(*args: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(evaluate, "_check_all", counted)
    result = run_quiet(
        bench="ifeval",
        bench_options={"file": str(questions)},
        models_file=tmp_path / "m.yaml",
        models=["m"],
        out=tmp_path / "run",
    )
    assert result.exit_code == 0
    assert threads == ["jurist-rule-checks"] * 12
    points = [json.loads(line) for line in (tmp_path / "run" / "points" / "m.jsonl").read_text().splitlines()]
    answers = {
        r["uid"]: r["answer"]
        for r in map(json.loads, (tmp_path / "run" / "answers" / "m.jsonl").read_text().splitlines())
    }
    table = checkers("ifeval")
    for point in points:
        with ahead.RUNNING:
            again = real(table, answers[point["uid"]], ["punctuation:no_comma"], [{}], "")
        assert [c["strict"] for c in point["detail"]["instructions"]] == [r.strict for r in again]
    assert not ahead._pending  # nothing left behind
