"""What a run keeps in ``.derived/``: indexes read back instead of parsing every line again; anything
changed is derived again."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from jurist.errors import InputError
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
