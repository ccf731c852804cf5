"""What a run keeps in ``.derived/``: indexes read back instead of parsing every line again; anything
changed is derived again."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from jurist.benchmarks.base import Benchmark, Question
from jurist.config import ModelSpec
from jurist.errors import InputError
from jurist.run.work import JudgeFeed, JudgeWork
from jurist.judging.pairwise import PairwiseJudge
from jurist.judging.protocols import protocol_set
from jurist.store import line_index
from jurist.store.derived import FileState
from jurist.store.jsonl import JsonlAppender
from jurist.store.line_index import AnswerIndex
from jurist.store.run_dir import RunDir


def _answers(n: int, start: int = 0, text: str = "answer") -> list[dict[str, Any]]:
    return [
        {
            "kind": "answer",
            "uid": f"q{i}",
            "sample": i % 2,
            "answer": f"{text} {i}",
            "metadata": {"token_len": i},
        }
        for i in range(start, start + n)
    ]


def _append(path: Path, records: list[dict[str, Any]]) -> None:
    with JsonlAppender(path) as out:
        for record in records:
            out.append(record)


def _parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Line numbers the indexes parse from now on."""
    numbers: list[int] = []
    parse = line_index.parse_jsonl_line

    def counting(path: Path, number: int, raw: bytes) -> dict[str, Any]:
        numbers.append(number)
        return parse(path, number, raw)

    monkeypatch.setattr(line_index, "parse_jsonl_line", counting)
    return numbers


def _entries(index: AnswerIndex) -> dict[tuple[str, int], tuple[str | None, int | None]]:
    return {key: (index.text_hash(*key), index.token_len(*key)) for key in index.keys()}


def test_a_saved_index_is_read_back_and_only_appended_lines_are_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = RunDir(tmp_path / "run")
    path = run.answers("m")
    _append(path, _answers(40))
    run.answer_index("m")
    run.save_indexes()
    assert (tmp_path / "run" / ".derived" / "index" / "answers" / "m.jsonl.idx").is_file()
    parsed = _parsed(monkeypatch)
    again = run.answer_index("m")
    assert parsed == [] and len(again) == 40
    _append(path, _answers(3, start=40) + _answers(1, text="regenerated"))  # q0 answered again
    appended = run.answer_index("m")
    assert parsed == [41, 42, 43, 44]  # line numbers go on from the saved index
    fresh = AnswerIndex(path)  # no derived file: every line
    assert _entries(appended) == _entries(fresh)
    assert appended.text(uid="q0", sample=0) == "regenerated 0"
    assert appended.token_len("q41", 1) == 41


@pytest.mark.parametrize("change", ["rewritten", "same-size edit", "truncated", "garbage index"])
def test_an_index_whose_file_changed_is_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    run = RunDir(tmp_path / "run")
    path = run.answers("m")
    _append(path, _answers(20))
    run.answer_index("m")
    run.save_indexes()
    data = path.read_bytes()
    if change == "rewritten":  # another file renamed over it (a new inode), one answer different
        other = path.with_name("new.jsonl")
        other.write_bytes(data.replace(b"answer 3", b"ANSWER 3"))
        os.replace(other, path)
    elif change == "same-size edit":  # the same inode and length, other bytes
        with open(path, "r+b") as fh:
            fh.write(data.replace(b"answer 3", b"ANSWER 3"))
    elif change == "truncated":
        path.write_bytes(data[: data.index(b'{"kind": "answer", "uid": "q10"')])
    else:
        derived = tmp_path / "run" / ".derived" / "index" / "answers" / "m.jsonl.idx"
        derived.write_bytes(derived.read_bytes()[:100] + b"\x00garbage")
    parsed = _parsed(monkeypatch)
    index = run.answer_index("m")
    assert parsed, "the changed file was parsed again"
    assert _entries(index) == _entries(AnswerIndex(path))
    if change in ("rewritten", "same-size edit"):
        assert index.text("q3", 1) == "ANSWER 3"
    if change == "truncated":
        assert len(index) == 10


def test_an_index_begun_before_its_file_existed_is_saved_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh run indexes an answers file before its first answer is written, then follows it."""
    run = RunDir(tmp_path / "run")
    index = run.answer_index("m")
    _append(run.answers("m"), _answers(5))
    index.catch_up()
    run.save_indexes()
    parsed = _parsed(monkeypatch)
    assert len(run.answer_index("m")) == 5 and parsed == []


def test_an_index_is_not_saved_for_a_file_renamed_over_the_one_it_read(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    path = run.answers("m")
    _append(path, _answers(6))
    index = run.answer_index("m")
    other = path.with_name("other.jsonl")
    _append(other, _answers(6, text="other"))  # the same length, other texts
    os.replace(other, path)
    index.save()
    assert not (tmp_path / "run" / ".derived" / "index" / "answers" / "m.jsonl.idx").exists()
    assert run.answer_index("m").text("q2", 0) == "other 2"


def test_a_torn_tail_after_the_saved_part_is_cut_as_on_a_full_build(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    path = run.answers("m")
    _append(path, _answers(5))
    run.answer_index("m")
    run.save_indexes()
    whole = path.read_bytes()
    with open(path, "ab") as fh:
        fh.write(b'{"kind": "answer", "uid": "q9", "ans')  # a write cut short by a crash
    index = run.answer_index("m")
    assert len(index) == 5 and path.read_bytes() == whole
    with open(path, "ab") as fh:
        fh.write(b"{not json}\n")
    with pytest.raises(InputError, match="line 6"):
        run.answer_index("m")


def test_a_judgment_index_is_kept_too_with_its_invalid_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = RunDir(tmp_path / "run")
    path = run.judgments("j", "m")
    _append(path, [{"key": f"k{i}", "kind": "pairwise", "invalid": i % 3 == 0} for i in range(12)])
    first = run.judgment_index("j", "m")
    run.save_indexes()
    parsed = _parsed(monkeypatch)
    again = run.judgment_index("j", "m")
    assert parsed == [] and len(again) == 12
    assert [again.invalid(f"k{i}") for i in range(12)] == [first.invalid(f"k{i}") for i in range(12)]
    assert again.record("k4") == {"key": "k4", "invalid": False, "kind": "pairwise", "sample": 0}


def test_file_state_tells_appended_from_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"x" * 300_000 + b"\n")
    state = FileState.of(path)
    assert state is not None and state.same(path) and state.prefix_of(path)
    with open(path, "ab") as fh:
        fh.write(b"more\n")
    assert state.prefix_of(path) and not state.same(path)
    with open(path, "r+b") as fh:  # a byte in the last 64 KiB of what was recorded
        fh.seek(299_000)
        fh.write(b"y")
    assert not state.prefix_of(path)
    assert FileState.of(tmp_path / "missing") is None
    assert FileState.from_json({"inode": 1}) is None


# -- the judged digest ------------------------------------------------------------------------------------


def _work(run: RunDir, n: int) -> JudgeWork:
    questions = [Question(f"q{i}", f"prompt {i}") for i in range(n)]
    bench = Benchmark("t", questions, baseline="base")
    for alias in ("m", "base"):
        if not run.answers(alias).exists():
            _append(run.answers(alias), [{"uid": q.uid, "answer": f"{alias} {q.uid}"} for q in questions])
    spec = ModelSpec(alias="j", model="j")
    protocol, by_category = protocol_set("structured", spec, None, "structured")
    kind = PairwiseJudge(protocol, spec, by_category=by_category)
    return JudgeWork(bench, run, ["j"], ["m"], ["base"], 1, {"j": kind})


def _judge(run: RunDir, work: JudgeWork, count: int) -> None:
    """Store judgments (any content: only keys matter here) for the first ``count`` jobs still to do."""
    jobs = list(work.todo(rejudge_invalid=False)[("j", "m")])[:count]
    _append(run.judgments("j", "m"), [{"key": work.kinds["j"].key(job.item), "games": []} for job in jobs])


def test_the_feeds_digest_of_what_is_judged_is_the_one_computed_afresh(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    _judge(run, _work(run, 30), 20)
    work = _work(run, 30)
    fresh = work.judged_digest()
    feed = JudgeFeed(work, rejudge_invalid=False)
    assert feed.judged_digest() is None  # no pass over the answers yet
    for _ in feed.todo_parts(questions=7):
        pass
    assert feed.judged_digest() == fresh
    _judge(run, _work(run, 30), 1)  # one more judgment since the feed was built: its pass is stale
    assert feed.judged_digest() is None
    assert _work(run, 30).judged_digest() != fresh


# -- judgments of two judge prompts in one file ------------------------------------------------------------


@pytest.fixture
def scored_run(tmp_path: Path, mock_server: Any, run_quiet: Any) -> tuple[dict[str, Any], Any]:
    """A finished judged run (6 questions, one model, one judge): its arguments and result."""
    from conftest import write_models_file

    server = mock_server()
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    args: dict[str, Any] = {"models_file": models, "models": ["strong"], "judges": ["judge-good"]}
    args |= {"out": tmp_path / "run", "limit": 6, "n_bootstrap": 20}
    first = run_quiet(**args)
    assert first.exit_code == 0
    return args, first


def test_a_judge_prompt_switched_back_finds_its_own_judgments_and_scores_them_again(
    scored_run: tuple[dict[str, Any], Any], run_quiet: Any, tmp_path: Path
) -> None:
    """Judgments of two judge prompts in one file: switching back to the first sends nothing, and its
    judgments are the ones scored, not the other prompt's."""
    args, first = scored_run
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("[system]\nBe fair.\n[user]\n{question}\nA: {answer_a}\nB: {answer_b}\nVerdict?\n")
    other = run_quiet(**args, judge_prompt=prompt)
    assert other.requests > 0  # the mock judge's verdicts do not parse with this prompt: no matter
    back = run_quiet(**args)
    assert back.exit_code == 0 and back.requests == 0
    assert back.leaderboard == first.leaderboard
