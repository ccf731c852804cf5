"""battles.jsonl read in chunks: the same records as a line-by-line read, across chunk boundaries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurist.errors import InputError
from jurist.families.pairwise import battles as battles_module
from jurist.families.pairwise.battles import read_battles_file


def _battle(i: int) -> dict[str, object]:
    return {
        "kind": "battle",
        "model_a": f"m{i % 7}",
        "model_b": "base",
        "winner": ("model_a", "model_b", "tie")[i % 3],
        "weight": 1 + i % 3,
        "uid": f"q{i // 2}",
        "sample": 0,
        "category": "hard_prompt",
        "judge": "j",
    }


def test_chunks_give_every_record_once_blank_lines_and_torn_tail_included(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(battles_module, "_CHUNK_BYTES", 1000)  # many chunk boundaries, some mid-line
    records = [_battle(i) for i in range(500)]
    lines = [json.dumps(r) for r in records]
    lines[200:200] = ["", "   "]  # blank lines inside a chunk take the slow path for that chunk only
    path = tmp_path / "battles.jsonl"
    path.write_text("\n".join(lines) + '\n{"kind": "battle", "model_a"')  # an interrupted last write
    got = read_battles_file(path)
    assert got == records
    assert got[0]["model_a"] is got[7]["model_a"]  # repeated strings are shared, not copies


def test_a_bad_line_in_a_late_chunk_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(battles_module, "_CHUNK_BYTES", 1000)
    lines = [json.dumps(_battle(i)) for i in range(300)]
    lines[250] = json.dumps({**_battle(250), "winner": "model_c"})
    path = tmp_path / "battles.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="line 251.*winner"):
        read_battles_file(path)
