"""Indexes of a run's answers and judgments: offsets, not records, and the same answers as a full read."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from jurist.benchmarks.base import Benchmark, Question
from jurist.benchmarks.presets import JudgePreset
from jurist.config import ModelSpec
from jurist.errors import InputError
from jurist.judging.base import JudgeKind
from jurist.judging.pairwise import PairwiseJudge
from jurist.judging.protocols import protocol_set
from jurist.run.budget import BudgetPlan
from jurist.run.config import RunConfig
from jurist.run.plan import RunPlan
from jurist.run.work import JudgeWork
from jurist.store.jsonl import JsonlAppender, iter_jsonl_lines, read_jsonl_line
from jurist.store.line_index import AnswerIndex, JudgmentIndex
from jurist.store.run_dir import RunDir


def _write(path: Path, records: list[dict[str, object]], tail: bytes = b"") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records) + tail)


def test_lines_carry_offsets_that_read_back_the_same_record(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    records = [{"uid": str(i), "answer": "ünï\ncode " * i} for i in range(50)]
    _write(path, records[:25], b"\n\n")  # blank lines are skipped, numbers still count them
    with JsonlAppender(path) as out:
        for record in records[25:]:
            out.append(record)
    lines = list(iter_jsonl_lines(path))
    assert [number for number, _, _ in lines][:26] == [*range(1, 26), 28]
    assert [read_jsonl_line(path, offset, number) for number, offset, _ in lines] == records


def test_a_line_read_at_its_offset_whatever_its_length(tmp_path: Path) -> None:
    """Lines shorter and longer than the first read (several times over), and a last line without its
    newline, read back whole and nothing past them."""
    from jurist.store.jsonl import LINE_READ

    path = tmp_path / "a.jsonl"
    sizes = [0, 1, LINE_READ - 20, LINE_READ, LINE_READ + 1, 5 * LINE_READ + 7, 40 * LINE_READ, 3]
    records: list[dict[str, object]] = [
        {"uid": str(i), "answer": "é" * (size // 2) + "x" * (size % 2)} for i, size in enumerate(sizes)
    ]
    _write(path, records[:-1], json.dumps(records[-1]).encode())  # the last one without its newline
    offsets = [0]
    for line in path.read_bytes().split(b"\n")[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    assert [read_jsonl_line(path, offset, n) for n, offset in enumerate(offsets, 1)] == records


def test_a_last_line_without_newline_counts_when_whole_and_is_cut_when_torn(tmp_path: Path) -> None:
    whole = tmp_path / "whole.jsonl"
    _write(whole, [{"uid": "1"}], b'{"uid": "2"}')
    assert [json.loads(raw)["uid"] for _, _, raw in iter_jsonl_lines(whole)] == ["1", "2"]
    assert whole.read_bytes().endswith(b'{"uid": "2"}\n')  # repaired: the next append starts a line
    torn = tmp_path / "torn.jsonl"
    _write(torn, [{"uid": "1"}], b'{"uid": "2", "ans')
    assert [json.loads(raw)["uid"] for _, _, raw in iter_jsonl_lines(torn, repair=False)] == ["1"]
    assert torn.read_bytes().endswith(b'"ans')  # not repaired when asked not to
    assert len(list(iter_jsonl_lines(torn))) == 1
    assert torn.read_bytes() == b'{"uid": "1"}\n'


def test_answer_index_equals_a_full_read_last_line_winning(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    path = run.answers("m")
    rows: list[dict[str, object]] = [
        {"uid": "q1", "sample": 0, "answer": "old"},
        {"uid": "q2", "sample": 1, "answer": "two"},
        {"question_id": "q3", "messages": [{"role": "assistant", "content": {"answer": "arena"}}]},
        {"uid": "q1", "sample": 0, "answer": "new"},
    ]
    _write(path, rows)
    index = run.answer_index("m", shipped={"q1": "shipped", "q4": "shipped four"})
    full = run.load_answers("m")
    assert sorted(index.keys()) == sorted(full)
    for uid, sample in full:
        assert index.record(uid, sample) == full[(uid, sample)]
    assert index.text("q1", 0) == "new"  # what is on disk wins over the shipped text
    assert ("q4", 0) in index and index.text("q4", 0) == "shipped four"  # not yet written
    assert ("q4", 1) not in index and index.text("q4", 1) is None
    assert index.text("nope", 0) is None


def test_a_bad_answer_line_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    _write(path, [{"uid": "q1", "answer": "a"}, {"answer": "no uid"}])
    with pytest.raises(InputError) as error:
        AnswerIndex(path)
    assert "line 2" in str(error.value) and "uid" in str(error.value)


def test_judgment_index_knows_invalid_ones_without_reading_them_again(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    pairwise = {"kind": "pairwise", "games": []}
    _write(
        path,
        [{"key": "k1", "invalid": True}, {"key": "k2", **pairwise}, {"key": "k1", **pairwise}, {"key": "k4"}],
    )
    index = JudgmentIndex(path)
    assert len(index) == 3 and "k1" in index and not index.invalid("k1")  # the re-judge replaced it
    record = index.record("k2")
    assert record is not None and record["kind"] == "pairwise" and record["sample"] == 0
    assert index.record("k3") is None and not index.invalid("k3")
    with pytest.raises(InputError, match=r"j\.jsonl: line 4: field 'kind' is missing"):
        index.record("k4")  # an untagged record is refused, not guessed a kind from its other fields
    _write(path, [{"games": []}])
    with pytest.raises(InputError, match="line 1.*key"):
        JudgmentIndex(path)


def _work(tmp_path: Path, n: int, answer_size: int) -> JudgeWork:
    run = RunDir(tmp_path / f"run{n}")
    questions = [Question(f"q{i}", f"prompt {i}") for i in range(n)]
    bench = Benchmark("t", questions, baseline="base")
    for alias in ("m", "base"):
        _write(
            run.answers(alias),
            [{"uid": q.uid, "answer": f"{alias} {q.uid} " * answer_size} for q in questions],
        )
    spec = ModelSpec(alias="j", model="j")
    protocol, by_category = protocol_set("structured", spec, None, "structured")
    kind = PairwiseJudge(protocol, spec, by_category=by_category)
    return JudgeWork(_plan(bench, run, kind, samples=1))


def _plan(bench: Benchmark, run: RunDir, kind: JudgeKind, samples: int) -> RunPlan:
    """The plan of a run of ``bench`` with one candidate ``m`` judged by ``j`` against ``base``."""
    return RunPlan(
        config=RunConfig(),
        bench=bench,
        run_dir=run,
        specs={"j": ModelSpec(alias="j", model="j")},
        candidates=("m",),
        baselines=("base",),
        judges=("j",),
        kinds={"j": kind},
        samples=samples,
        mode="all",
        preset=JudgePreset(None, {}),
        budget=BudgetPlan({}, None),
        family="pairwise",
        scoring={"metrics": ["winrate"]},
    )


def test_judge_jobs_read_each_answer_when_taken(tmp_path: Path) -> None:
    work = _work(tmp_path, 30, 3)
    jobs = work.todo(rejudge_invalid=False)[("j", "m")]
    assert len(jobs) == 30
    taken = list(jobs)
    assert [job.item.answer for job in taken] == [f"m q{i} " * 3 for i in range(30)]
    assert [job.item.baseline_answer for job in taken] == [f"base q{i} " * 3 for i in range(30)]
    assert list(work.judged()) == []  # nothing judged yet


def test_judge_work_holds_offsets_not_answer_texts(tmp_path: Path) -> None:
    """Listing the work for 400 answers of 20 kB each must not hold their 16 MB of text."""
    # Held through the measurement: the uids it interns stay in the interpreter's table, whose one-off
    # growth (a resize of ~2 MB, when earlier tests filled it) is not what this test measures.
    warm = _work(tmp_path, 400, 2_000).todo(rejudge_invalid=False)
    work = _work(tmp_path, 400, 2_000)
    tracemalloc.start()
    try:
        jobs = work.todo(rejudge_invalid=False)
        _, peak = tracemalloc.get_traced_memory()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(jobs[("j", "m")]) == 400 == len(warm[("j", "m")])
    assert held < 2_000_000, f"{held} bytes held for 400 answers"
    assert peak < 4_000_000, f"{peak} bytes at peak"


def test_a_rerun_of_a_finished_run_reads_each_file_once_and_no_answer_text(
    tmp_path: Path, mock_server: object, run_quiet: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resuming a finished run looks judgments up by the answers' hashes kept in the indexes, and its
    scoring reuses the same indexes (and their stored token lengths): each answer and judgment file is
    indexed once, and no answer record is read back (a 50k-question re-run had read 200k of them)."""
    from typing import Any

    from conftest import write_models_file
    from jurist.store import line_index

    server = mock_server()  # type: ignore[operator]
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    args: dict[str, Any] = {"models_file": models, "models": ["strong"], "judges": ["judge-good"]}
    first = run_quiet(**args, out=tmp_path / "run", limit=6)  # type: ignore[operator]
    assert first.exit_code == 0
    indexed: list[str] = []
    reads: list[tuple[str, int]] = []
    answer_init, judgment_init = AnswerIndex.__init__, JudgmentIndex.__init__
    answer_record = AnswerIndex.record

    def counting_answers(self: AnswerIndex, path: Path, *rest: Any) -> None:
        indexed.append(f"answers/{path.name}")
        answer_init(self, path, *rest)

    def counting_judgments(self: JudgmentIndex, path: Path, *rest: Any) -> None:
        indexed.append(f"judgments/{path.name}")
        judgment_init(self, path, *rest)

    def counting_reads(self: AnswerIndex, uid: str, sample: int) -> Any:
        reads.append((uid, sample))
        return answer_record(self, uid, sample)

    monkeypatch.setattr(line_index.AnswerIndex, "__init__", counting_answers)
    monkeypatch.setattr(line_index.JudgmentIndex, "__init__", counting_judgments)
    monkeypatch.setattr(line_index.AnswerIndex, "record", counting_reads)
    requests = server.stats.requests  # type: ignore[attr-defined]
    again = run_quiet(**args, out=tmp_path / "run", limit=6)  # type: ignore[operator]
    assert again.exit_code == 0 and server.stats.requests == requests  # type: ignore[attr-defined]
    assert sorted(indexed) == sorted(set(indexed))  # nothing indexed twice
    assert "judgments/strong.jsonl" in indexed and "answers/strong.jsonl" in indexed
    assert reads == []
    assert again.leaderboard == first.leaderboard  # the same scores, avg_tokens included


def test_the_feed_hands_each_sample_of_each_job_out_once(tmp_path: Path) -> None:
    """Two samples per question; the baseline's answers arrive while the feed reads: each (question,
    sample) job comes out once, through answered() or through the pass, never both."""
    from jurist.run.work import JudgeFeed

    run = RunDir(tmp_path / "run")
    questions = [Question(f"q{i}", f"prompt {i}") for i in range(10)]
    bench = Benchmark("t", questions, baseline="base")
    _write(
        run.answers("m"),
        [{"uid": q.uid, "sample": s, "answer": f"m {q.uid} {s}"} for q in questions for s in (0, 1)],
    )
    _write(run.answers("base"), [{"uid": q.uid, "answer": f"base {q.uid}"} for q in questions[:4]])
    spec = ModelSpec(alias="j", model="j")
    protocol, by_category = protocol_set("structured", spec, None, "structured")
    kind = PairwiseJudge(protocol, spec, by_category=by_category)
    feed = JudgeFeed(JudgeWork(_plan(bench, run, kind, samples=2)), rejudge_invalid=False)
    handed: list[tuple[str, int]] = []
    parts = feed.todo_parts(questions=3)
    for jobs in next(parts).values():  # q0..q2 have both answers
        handed += [(job.item.question.uid, job.item.sample) for job in jobs]
    with JsonlAppender(run.answers("base")) as out:  # q4..q9's baseline answers arrive now
        for q in questions[4:]:
            out.append({"uid": q.uid, "answer": f"base {q.uid}"})
    for q in questions[4:]:
        for jobs in feed.answered("base", q.uid, 0).values():
            handed += [(job.item.question.uid, job.item.sample) for job in jobs]
    for part in parts:
        for jobs in part.values():
            handed += [(job.item.question.uid, job.item.sample) for job in jobs]
    assert sorted(handed) == sorted((q.uid, s) for q in questions for s in (0, 1))
    assert feed.todo() == {} or all(not jobs for jobs in feed.todo().values())


def _index_state(index: AnswerIndex) -> tuple[object, ...]:
    return dict(index._lines), index.end, index._last_line


def test_an_index_learns_what_it_was_told_as_a_full_read_would_find_it(tmp_path: Path) -> None:
    """``learned`` (a line this process appended, indexed from its record) leaves the index exactly as
    reading the file would; a line appended by someone else in between is read, not skipped over."""
    path = tmp_path / "a.jsonl"
    _write(path, [{"uid": "q0", "answer": "first"}], b"\n")
    learning = AnswerIndex(path)
    with JsonlAppender(path) as out:
        for i in range(1, 6):
            record = {"kind": "answer", "uid": f"q{i}", "sample": i % 2, "answer": f"ünï {i}",
                      "metadata": {"token_len": i}}  # fmt: skip
            learning.learned(out.append(record), record)
        with JsonlAppender(path) as other:  # another writer's line the index was not told of
            other.append({"kind": "answer", "uid": "q6", "sample": 0, "answer": "theirs"})
        late = {"kind": "answer", "uid": "q7", "sample": 0, "answer": "after theirs"}
        learning.learned(out.append(late), late)
    assert _index_state(learning) == _index_state(AnswerIndex(path))
    assert learning.text("q6", 0) == "theirs" and learning.token_len("q3", 1) == 3
    assert learning.text("q7", 0) == "after theirs"
