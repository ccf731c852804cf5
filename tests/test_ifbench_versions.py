"""IFBench's two upstream versions, change by change: each of upstream's commits between ``c94da02`` and
``db69a6f`` shows on a small answer, and ``-B version`` / ``-B data`` reach the benchmark, run.json and
``--answers`` (unanswered prompts, trimmed prompts, stored points kept per version)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurist.benchmarks.answers_file import read_answers_file
from jurist.errors import JuristError
from jurist.rules.evaluate import check_instruction
from jurist.rules.registry import checkers
from test_cli import jurist

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

SPAN = {"prompt_to_repeat": "alpha beta gamma"}

# (instruction id, kwargs, answer, followed at c94da02, followed at db69a6f)
CHANGES: list[tuple[str, dict[str, Any], str, bool, bool]] = [
    # 8e6a9be: Punkt splits sentences (the regex cuts after every "?", "!" and "." it does not protect)
    ("ratio:sentence_type", {}, "Is it?It is.Ok.", True, False),
    ("ratio:sentence_type", {}, "Is it? e.g. this. Ok.", True, False),
    ("count:person_names", {"N": 2}, "Leonardo lives in Miami.", True, False),
    ("count:person_names", {"N": 2}, "Leo and Mia.", True, True),
    ("sentence:keyword", {"word": "cat", "N": 1}, "Concatenate it.", True, False),
    ("sentence:keyword", {"word": "cat", "N": 1}, "A CAT sat.", True, True),
    ("format:quote_unquote", {}, "He said \u201chello\u201d", False, True),
    ("format:quote_unquote", {}, 'He said "hello"', False, False),
    ("format:title_case", {}, "The Cat Saw a Dog", True, False),
    ("format:title_case", {}, "The 3rd Cat", True, True),
    ("words:last_first", {}, "Wait?! Wait.", None, False),  # None: c94da02 crashes (an IndexError)
    ("words:alphabet", {}, "...", None, False),
    ("ratio:overlap", {"reference_text": "abcdef", "percentage": 50}, "ab", None, False),
    # 86ee248: words_position looks past a trailing punctuation token, in any case
    ("words:words_position", {"keyword": "sun"}, "The sun rose as the sun set.", False, True),
    ("words:words_position", {"keyword": "sun"}, "The sun rose, the sun.", True, False),
    ("words:words_position", {"keyword": "sun"}, "The Sun rose and the SUN set", False, True),
    # 34f0927: more pronouns
    ("count:pronouns", {"N": 3}, "This is all that matters.", False, True),
    # 1091c4c: repeat_span in characters (inclusive); keywords_specific_position without punctuation
    ("repeat:repeat_span", {**SPAN, "n_start": 0, "n_end": 4}, "alpha", False, True),
    ("repeat:repeat_span", {**SPAN, "n_start": 0, "n_end": 2}, "alpha beta", True, False),
    ("words:keywords_specific_position", {"keyword": "sun", "n": 1, "m": 3}, "Oh, the sun.", False, True),
    ("words:keywords_specific_position", {"keyword": "sun", "n": 1, "m": 3}, "Oh , the Sun.", False, True),
]  # fmt: skip


@pytest.mark.parametrize(("instruction_id", "kwargs", "answer", "old", "new"), CHANGES)
def test_each_upstream_change_shows_in_its_version_only(
    instruction_id: str, kwargs: dict[str, Any], answer: str, old: bool | None, new: bool
) -> None:
    for version, expected in (("c94da02", old), ("db69a6f", new)):
        checker = checkers(f"ifbench@{version}")[instruction_id]
        result = check_instruction(checker, instruction_id, answer, kwargs, "")
        if expected is None:  # upstream stops its run; jurist records the crash as not followed
            assert not result.strict and result.error is not None, version
        else:
            assert result.strict is expected and result.error is None, version


def test_unchanged_ids_share_their_checker() -> None:
    old, new = checkers("ifbench@c94da02"), checkers("ifbench@db69a6f")
    assert old["format:parentheses"] is new["format:parentheses"]
    assert old["custom:csv_city"] is new["custom:csv_city"]
    with pytest.raises(KeyError, match="no rule suite"):
        checkers("ifbench@0000000")


@pytest.fixture
def data_dir(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    return SHARED_DATA


def test_version_and_data_options(data_dir: Path) -> None:
    from jurist.benchmarks.ifbench import benchmark

    default = benchmark({})
    assert default.rule_suite == "ifbench@db69a6f" and len(default.questions) == 300
    assert default.info["version"] == "db69a6f" and default.info["data"] == "current"
    assert default.info["upstream"].endswith("db69a6f05689830b0068b8f1529ebcfd2f3b164c")
    old = benchmark({"version": "c94da02", "data": "v1"})
    assert old.rule_suite == "ifbench@c94da02" and len(old.questions) == 294
    assert (old.info["unanswered"], old.info["prompt_match"]) == ("left out", "exact")
    with pytest.raises(JuristError, match=r"-B data= now"):
        benchmark({"version": "v1"})
    with pytest.raises(JuristError, match="-B data: ifbench has no data 'v2'"):
        benchmark({"data": "v2"})
    with pytest.raises(JuristError, match="one or the other"):
        benchmark({"data": "v1", "file": "x.jsonl"})


def _questions(tmp_path: Path) -> Path:
    rows = [
        {"key": 1, "prompt": "Say hi", "instruction_id_list": ["format:no_whitespace"], "kwargs": [{}]},
        {"key": 2, "prompt": "Say bye ", "instruction_id_list": ["format:no_whitespace"], "kwargs": [{}]},
        {"key": 3, "prompt": "Say it", "instruction_id_list": ["format:no_whitespace"], "kwargs": [{}]},
    ]
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_answers_match_trimmed_prompts_and_pass_over_others_at_db69a6f_only(tmp_path: Path) -> None:
    from jurist.benchmarks.ifbench import benchmark

    questions = _questions(tmp_path)
    answers = tmp_path / "a.jsonl"
    lines = [{"prompt": " Say hi\n", "response": "hi"}, {"prompt": "Say bye", "response": "bye"}]
    answers.write_text("".join(json.dumps(r) + "\n" for r in [*lines, {"prompt": "gone", "response": "x"}]))
    new = benchmark({"file": str(questions)})
    assert read_answers_file(answers, new) == {"1": "hi", "2": "bye"}
    old = benchmark({"file": str(questions), "version": "c94da02"})
    with pytest.raises(JuristError, match="line 1: field 'prompt': matches no prompt"):
        read_answers_file(answers, old)


def test_unanswered_prompts_count_failed_and_points_follow_the_version(tmp_path: Path) -> None:
    questions = _questions(tmp_path)
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"prompt": "Say hi", "response": "hi"}) + "\n")

    def run(version: str) -> dict[str, Any]:
        result = jurist(
            "run", "--bench", "ifbench", "-B", f"file={questions}", "-B", f"version={version}",
            "--answers", str(answers), "--model", "m", "--out", "run", "--format", "json", "--no-progress",
            cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        (row,) = json.loads(result.stdout)
        return dict(row)

    new = run("db69a6f")
    assert (new["n_questions"], new["unanswered"], new["prompt_strict"]) == (3, 2, pytest.approx(100 / 3))
    points = [json.loads(line) for line in (tmp_path / "run" / "points" / "m.jsonl").read_text().splitlines()]
    assert {p["metric"] for p in points} == {"ifbench@db69a6f"}
    assert sorted(p["uid"] for p in points if p["detail"].get("unanswered")) == ["2", "3"]
    old = run("c94da02")  # the same directory: its points are checked again, not reused
    assert (old["n_questions"], old["unanswered"], old["prompt_strict"]) == (1, 0, 100.0)
    points = [json.loads(line) for line in (tmp_path / "run" / "points" / "m.jsonl").read_text().splitlines()]
    assert [p["metric"] for p in points] == ["ifbench@c94da02"]
    shown = jurist("show", "run", "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)[0]["prompt_strict"] == 100.0
