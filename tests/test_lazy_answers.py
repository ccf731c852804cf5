"""Shipped answer files read lazily: the plan learns the aliases from a uid scan that must agree with a
full read row for row, the texts are parsed once on first use, and a malformed file still stops a run
with exit 2 naming file, line and field."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED_DATA, write_models_file
from jurist.benchmarks.arena_hard import load_question_file, read_answer_file
from jurist.benchmarks.lazy_answers import LazyAnswerFiles, _whole_file_uids, answer_uids
from jurist.errors import InputError

V2 = SHARED_DATA / "arena-hard" / "data" / "arena-hard-v2.0"
O3 = "o3-mini-2025-01-31"


def full_read_uids(path: Path) -> set[str]:
    rows = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    return {str(row.get("uid", row.get("question_id", ""))) for row in rows}


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
    for kept in range(len(rows)):  # each row alone as a newline-ended file: the whole-file scan's cases
        single = tmp_path / f"row{kept}.jsonl"
        single.write_text(f"{rows[kept]}\n{rows[0]}\n\n")
        assert answer_uids(single) == full_read_uids(single), rows[kept]
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
        assert _whole_file_uids(file.read_bytes()) == full_read_uids(file)  # settled in one pass
        rows = [json.loads(line) for line in file.read_bytes().splitlines()]
        spaced = tmp_path / file.name  # as json.dumps writes them (bench/e2e_systems.py does)
        spaced.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
        assert answer_uids(spaced) == full_read_uids(spaced) == {row["uid"] for row in rows}


@pytest.mark.skipif(not V2.is_dir(), reason="shared data not present")
def test_the_plan_asks_without_parsing_and_the_texts_equal_an_eager_read() -> None:
    bench = load_question_file(V2 / "question.jsonl")
    files = bench.shipped_answers._files  # type: ignore[attr-defined]
    assert O3 in bench.shipped_answers and "gemini-2.0-flash-001" not in bench.shipped_answers
    assert list(bench.shipped_answers) == [O3] and not files._done  # nothing parsed yet
    file = V2 / "model_answer" / f"{O3}.jsonl"
    texts, metadata = read_answer_file(file, {q.uid for q in bench.questions})  # the eager read
    assert len(texts) == len(bench.questions) and dict(bench.shipped_answers) == {O3: texts}
    assert dict(bench.shipped_metadata) == {O3: metadata}
    assert bench.info == {"baseline_answers": {O3: str(file)}}


def test_threads_reaching_for_the_texts_at_once_read_the_file_once(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"uid": str(i), "answer": f"t{i}"}) + "\n" for i in range(200)))
    reads: list[Path] = []

    def read(file: Path) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
        reads.append(file)
        return read_answer_file(file, {str(i) for i in range(200)})

    files = LazyAnswerFiles()
    files.add("ref", path, read)
    seen: list[int] = []
    threads = [threading.Thread(target=lambda: seen.append(len(files.texts["ref"]))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert reads == [path] and seen == [200] * 8 and files.texts["ref"]["7"] == "t7"
    with pytest.raises(KeyError):
        files.texts["other"]


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
    with pytest.raises(InputError) as error:
        bench.shipped_answers[O3]
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
