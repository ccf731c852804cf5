"""Crash safety of the JSONL store: torn tails are dropped, never glued to the next append."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from jurist.errors import InputError
from jurist.store.jsonl import JsonlAppender, read_jsonl


def test_torn_last_line_is_dropped_with_a_warning_and_cut_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"uid": "1"}\n{"uid": "2"}\n{"uid": "3", "ans')
    with caplog.at_level(logging.WARNING):
        assert [r["uid"] for r in read_jsonl(path)] == ["1", "2"]
    assert "torn last line" in caplog.text
    assert path.read_bytes() == b'{"uid": "1"}\n{"uid": "2"}\n'


def test_appender_repairs_a_torn_tail_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"uid": "1"}\n{"uid": "2", "ans')
    with JsonlAppender(path) as out:
        out.append({"uid": "3"})
    assert [r["uid"] for r in read_jsonl(path)] == ["1", "3"]


def test_each_append_is_one_whole_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    with JsonlAppender(path) as out:
        for i in range(100):
            out.append({"uid": str(i), "text": "line\nbreaks and ünïcode " * i})
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 101
    assert [json.loads(line)["uid"] for line in lines[:-1]] == [str(i) for i in range(100)]


def test_corrupt_middle_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"uid": "1"}\nnot json\n{"uid": "3"}\n')
    with pytest.raises(InputError, match=r"a\.jsonl: line 2: not valid JSON"):
        read_jsonl(path)
