"""Shipped answer files read lazily: the plan learns the aliases from a uid scan that must agree with a
full read row for row, each row is parsed once where its uid is first asked for (a run parses the rows it
writes, no others), and a malformed file still stops a run with exit 2 naming file, line and field."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks.arena_hard import load_question_file, read_answer_file, read_answer_row
from jurist.benchmarks.lazy_answers import LazyAnswerFiles, _whole_file_rows, answer_rows, answer_uids
from jurist.errors import InputError
from jurist.store import RunDir

V2 = SHARED_DATA / "arena-hard" / "data" / "arena-hard-v2.0"
O3 = "o3-mini-2025-01-31"


def full_read_uids(path: Path) -> set[str]:
    return set(full_read_rows(path))


def full_read_rows(path: Path) -> dict[str, dict[str, Any]]:
    """uid -> its last row, as a full read of the file finds it."""
    rows = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    return {str(row.get("uid", row.get("question_id", ""))): row for row in rows}


def assert_rows_lie_where_scanned(path: Path) -> None:
    """Each uid's row, read at the offsets the scan gives, is the row a full read keeps for it."""
    data, last = path.read_bytes(), full_read_rows(path)
    lines = data.split(b"\n")
    for uid, (number, start, end) in answer_rows(path).items():
        assert json.loads(data[start:end]) == last[uid], uid
        assert lines[number - 1].strip() == data[start:end].strip(), uid


def test_the_uid_scan_agrees_with_a_full_read_on_awkward_rows(tmp_path: Path) -> None:
    rows = [
        '{"uid":"plain","messages":[{"role":"assistant","content":"x"}]}',
        '{"uid":"first","x":1,"uid":"last"}',  # a duplicate key: JSON keeps the last
        '{"uid":"a","\\u0075id":"spelled"}',  # a key spelled with an escape
        '{"uid":"esc\\"aped","answer":"y"}',
        '{"uid":"caf\\u00e9","answer":"y"}',
        '{"uid":7,"answer":"y"}',
        '{"question_id":"old","choices":[]}',
        '{"uid":"n","answer":"quotes \\"uid\\" inside"}',
        '{"uid":"v","meta":{"uid":"nested"}}',
        '{"answer":"no id"}',
        '{"uid": "spaced", "answer": "json.dumps spacing"}',
        ' { "uid" : "wide" , "answer": "y"}',
        '{"uid":"bad\\\\","answer":"y"}',
        "",
        '{"uid":"last-line-no-newline","answer":"z"}',
    ]
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(rows))
    assert answer_uids(path) == full_read_uids(path)
    assert_rows_lie_where_scanned(path)
    for kept in range(len(rows)):  # each row alone as a newline-ended file: the whole-file scan's cases
        single = tmp_path / f"row{kept}.jsonl"
        single.write_text(f"{rows[kept]}\n{rows[0]}\n\n")
        assert answer_uids(single) == full_read_uids(single), rows[kept]
        assert_rows_lie_where_scanned(single)
    assert {
        "last",
        "spelled",
        'esc"aped',
        "café",
        "7",
        "old",
        "n",
        "v",
        "",
        "spaced",
        "wide",
        "bad\\",
    } <= answer_uids(path)


@pytest.mark.skipif(not V2.is_dir(), reason="shared data not present")
def test_the_uid_scan_agrees_with_a_full_read_on_the_shipped_files(tmp_path: Path) -> None:
    for file in sorted((V2 / "model_answer").glob("*.jsonl")):
        assert answer_uids(file) == full_read_uids(file), file
        assert answer_rows(file) == _whole_file_rows(file.read_bytes())  # settled in one pass
        assert_rows_lie_where_scanned(file)
        rows = [json.loads(line) for line in file.read_bytes().splitlines()]
        spaced = tmp_path / file.name  # as json.dumps writes them (bench/e2e_systems.py does)
        spaced.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
        assert answer_uids(spaced) == full_read_uids(spaced) == {row["uid"] for row in rows}


@pytest.mark.skipif(not V2.is_dir(), reason="shared data not present")
def test_the_plan_asks_without_parsing_and_the_texts_equal_an_eager_read() -> None:
    bench = load_question_file(V2 / "question.jsonl")
    files = bench.shipped_answers._files  # type: ignore[attr-defined]
    assert O3 in bench.shipped_answers and "gemini-2.0-flash-001" not in bench.shipped_answers
    assert list(bench.shipped_answers) == [O3] and files.parsed(O3) == 0  # nothing parsed yet
    file = V2 / "model_answer" / f"{O3}.jsonl"
    texts, metadata = read_answer_file(file, {q.uid for q in bench.questions})  # the eager read
    uid = bench.questions[3].uid
    assert bench.shipped_answers[O3][uid] == texts[uid] and files.parsed(O3) == 1  # one row asked, one read
    assert bench.shipped_metadata[O3].get(uid) == metadata.get(uid) and files.parsed(O3) == 1
    assert len(texts) == len(bench.questions) and dict(bench.shipped_answers) == {O3: texts}
    assert list(bench.shipped_answers[O3]) == list(texts)  # the file's order
    assert dict(bench.shipped_metadata) == {O3: metadata}
    assert bench.info == {"baseline_answers": {O3: str(file)}}


def test_threads_reaching_for_a_row_at_once_parse_it_once(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"uid": str(i), "answer": f"t{i}"}) + "\n" for i in range(200)))
    reads: list[int] = []

    def read(file: Path, number: int, row: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        reads.append(number)
        return read_answer_row(file, number, row)

    files = LazyAnswerFiles()
    files.add("ref", path, answer_rows(path), read)
    seen: list[str] = []
    threads = [threading.Thread(target=lambda: seen.append(files.texts["ref"]["7"])) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert reads == [8] and seen == ["t7"] * 8 and len(files.texts["ref"]) == 200
    assert "199" in files.texts["ref"] and "200" not in files.texts["ref"] and reads == [8]
    assert files.texts["ref"]["0"] == "t0" and reads == [8, 1]
    with pytest.raises(KeyError):
        files.texts["other"]
    with pytest.raises(KeyError):
        files.texts["ref"]["200"]


def test_a_file_changed_after_the_scan_is_said_so_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"uid": str(i), "answer": f"t{i}"}) + "\n" for i in range(3)))
    files = LazyAnswerFiles()
    files.add("ref", path, answer_rows(path), read_answer_row)
    path.write_text(json.dumps({"uid": "0", "answer": "t0"}) + "\n")  # cut short since
    with pytest.raises(InputError) as error:
        files.texts["ref"]["2"]
    assert "a.jsonl: line 3" in str(error.value) and "changed" in str(error.value)
    rows = [json.dumps({"uid": str(i), "answer": f"t{i}"}) + "\n" for i in range(3)]
    path.write_text("".join(rows))
    files = LazyAnswerFiles()
    files.add("ref", path, answer_rows(path), read_answer_row)
    path.write_text("".join(reversed(rows)))  # the same lengths, the rows in another order
    assert files.texts["ref"]["1"] == "t1"  # still where it was
    with pytest.raises(InputError, match="line 1: the file changed"):
        files.texts["ref"]["0"]


@pytest.mark.skipif(not V2.is_dir(), reason="shared data not present")
def test_a_run_writes_and_parses_only_the_baseline_answers_it_judges(tmp_path: Path) -> None:
    """Arena-Hard v2.0 judges each category against its own baseline: of two complete baseline files, a
    run parses and writes each question's one (as bench/e2e_systems.py lays the files out)."""
    from jurist.run.shipped import write_shipped_answers

    folder = tmp_path / "arena-hard-v2.0"
    (folder / "model_answer").mkdir(parents=True)
    (folder / "question.jsonl").write_bytes((V2 / "question.jsonl").read_bytes())
    o3 = (V2 / "model_answer" / f"{O3}.jsonl").read_bytes()
    (folder / "model_answer" / f"{O3}.jsonl").write_bytes(o3)
    gemini = "gemini-2.0-flash-001"
    (folder / "model_answer" / f"{gemini}.jsonl").write_bytes(o3.replace(O3.encode(), gemini.encode()))
    bench = load_question_file(folder / "question.jsonl")
    files = bench.shipped_answers._files  # type: ignore[attr-defined]
    assert list(bench.shipped_answers) == [O3, gemini]
    run_dir = RunDir(tmp_path / "run")
    indexes = write_shipped_answers(run_dir, bench, [O3, gemini])
    judged = {
        alias: [q.uid for q in bench.questions if bench.baseline_for(q) == alias] for alias in (O3, gemini)
    }
    assert len(judged[O3]) == 500 and len(judged[gemini]) == 250
    for alias, uids in judged.items():
        written = [json.loads(line)["uid"] for line in run_dir.answers(alias).read_bytes().splitlines()]
        assert written == uids and files.parsed(alias) == len(uids)
        assert all(indexes[alias].text(uid, 0) == bench.shipped_answers[alias][uid] for uid in uids)
    other = bench.with_baseline(gemini)  # every question against gemini: a later run writes the rest
    write_shipped_answers(run_dir, other, [gemini])
    lines = run_dir.answers(gemini).read_bytes().splitlines()
    assert sorted(json.loads(line)["uid"] for line in lines) == sorted(q.uid for q in bench.questions)


def malformed_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "arena-hard-v2.0"
    (folder / "model_answer").mkdir(parents=True)
    questions = [{"uid": f"q{i}", "category": "hard_prompt", "prompt": f"question {i}"} for i in range(3)]
    (folder / "question.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    answers = [
        {"uid": "q0", "messages": [{"role": "assistant", "content": "a0"}]},
        {"uid": "q1", "messages": []},  # no answer text
        {"uid": "q2", "messages": [{"role": "assistant", "content": "a2"}]},
    ]
    (folder / "model_answer" / f"{O3}.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    return folder


def test_a_malformed_shipped_file_names_file_line_and_field_when_read(tmp_path: Path) -> None:
    folder = malformed_folder(tmp_path)
    bench = load_question_file(folder / "question.jsonl")
    assert O3 in bench.shipped_answers  # its uids are all there: it is shipped
    assert bench.shipped_answers[O3]["q0"] == "a0"
    with pytest.raises(InputError) as error:
        bench.shipped_answers[O3]["q1"]
    assert f"{O3}.jsonl" in str(error.value) and "line 2" in str(error.value)
    assert "no answer text" in str(error.value)


def test_a_judged_run_with_a_malformed_shipped_file_exits_2(tmp_path: Path, mock_server: Any) -> None:
    folder = malformed_folder(tmp_path)
    server = mock_server()
    write_models_file(tmp_path / "m.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    args = ["--bench", str(folder / "question.jsonl"), "--models-file", "m.yaml", "--model", "strong"]
    result = subprocess.run(
        [sys.executable, "-m", "jurist", "run", *args, "--judge", "judge-good", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert f"{O3}.jsonl" in result.stderr and "line 2" in result.stderr
    assert "no answer text" in result.stderr
