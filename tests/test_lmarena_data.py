"""Loading arena battles: local JSONL/parquet, JURIST_DATA_DIR, the Hub snapshot path, sampling and draws."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena_synth import SynthArena, build_arena, write_jsonl, write_parquet
from jurist.benchmarks.lmarena import (
    OPPONENT,
    ArenaBenchmark,
    arena_benchmark,
    benchmark_100k,
    benchmark_file,
)
from jurist.benchmarks.lmarena_data import (
    HUB_ARENAS,
    fingerprint,
    hub_parquet_files,
    load_hub_arena,
    read_arena_file,
)
from jurist.benchmarks.sniff import looks_like_arena_file
from jurist.errors import JuristError


@pytest.fixture(scope="module")
def arena() -> SynthArena:
    return build_arena(n_models=20, n_battles=6_000, n_rare=3, seed=3)


@pytest.fixture(scope="module")
def jsonl_file(arena: SynthArena, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jsonl(arena, tmp_path_factory.mktemp("arena") / "arena.jsonl")


def _single_turn(arena: SynthArena) -> list[dict[str, Any]]:
    return [row for row in arena.rows if len(row["conversation_a"]) == 2]


def test_jsonl_keeps_single_turn_battles_in_the_unified_schema(arena: SynthArena, jsonl_file: Path) -> None:
    table = read_arena_file(jsonl_file)
    expected = _single_turn(arena)
    assert 0 < len(expected) < len(arena.rows) == table.n_rows_read
    assert table.question_id == [row["question_id"] for row in expected]
    assert table.winner == [row["winner"] for row in expected]
    assert Counter(table.lang) == Counter(row["lang"] for row in expected)
    prompt, answer_a, answer_b = table.texts([3])[0]
    row = expected[3]
    assert (prompt, answer_a, answer_b) == (
        row["conversation_a"][0]["content"],
        row["conversation_a"][1]["content"],
        row["conversation_b"][1]["content"],
    )
    assert looks_like_arena_file(jsonl_file)


def test_parquet_reads_the_same_battles_as_jsonl(arena: SynthArena, jsonl_file: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    parquet = write_parquet(arena, tmp_path / "arena.parquet")
    a, b = read_arena_file(parquet), read_arena_file(jsonl_file)
    assert looks_like_arena_file(parquet)
    for column in ("question_id", "model_a", "model_b", "winner", "lang"):
        assert getattr(a, column) == getattr(b, column)
    rows = [0, 17, len(a) - 1]
    assert a.texts(rows) == b.texts(rows)


def test_hub_shaped_parquet_in_jurist_data_dir(
    arena: SynthArena, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """140k's shape (id, language names, typed content blocks, both_bad) read from JURIST_DATA_DIR."""
    pytest.importorskip("pyarrow")
    write_parquet(arena, tmp_path / "lmarena-140k" / "data", shards=3, hub_style=True)
    monkeypatch.setenv("JURIST_DATA_DIR", str(tmp_path))
    table = load_hub_arena(HUB_ARENAS["lmarena-140k"])
    expected = _single_turn(arena)
    assert table.question_id == [row["question_id"] for row in expected]
    assert table.winner == [row["winner"] for row in expected]  # both_bad -> tie (bothbad)
    assert "tie (bothbad)" in table.winner
    assert set(table.lang) == {"en", "de", "fr"}  # English -> en
    assert table.texts([5])[0][0] == expected[5]["conversation_a"][0]["content"]


def test_hub_loader_takes_the_pinned_snapshot_through_huggingface_hub(
    arena: SynthArena, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real snapshot_download call, offline, on a Hub cache holding the pinned commit's parquet files."""
    pytest.importorskip("pyarrow")
    pytest.importorskip("huggingface_hub")
    hub = HUB_ARENAS["lmarena-100k"]
    cache = tmp_path / "hf"
    storage = cache / f"datasets--{hub.repo_id.replace('/', '--')}"
    write_parquet(arena, storage / "snapshots" / hub.revision / "data", shards=2)
    (storage / "refs").mkdir(parents=True)
    (storage / "refs" / "main").write_text(hub.revision)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    files = hub_parquet_files(hub, cache=cache)
    assert [f.name for f in files] == ["train-00000-of-00002.parquet", "train-00001-of-00002.parquet"]
    assert all(hub.revision in str(f) for f in files)
    # A commit that is not in the cache is refused offline, with the way out in the message.
    other = type(hub)(hub.name, hub.repo_id, "0" * 40, hub.label)
    with pytest.raises(JuristError, match="JURIST_DATA_DIR"):
        hub_parquet_files(other, cache=cache)


def test_hub_benchmark_reads_jurist_data_dir_without_the_hub(
    arena: SynthArena, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyarrow")
    write_parquet(arena, tmp_path / "arena-human-preference-100k" / "data", shards=2)
    monkeypatch.setenv("JURIST_DATA_DIR", str(tmp_path))
    bench = benchmark_100k({"n": "12", "seed": "4"})
    assert bench.name == "lmarena-100k" and len(bench.questions) == 12
    assert bench.info["arena"] == "LMArena-100k"
    assert bench.info["revision"] == HUB_ARENAS["lmarena-100k"].revision


def test_sample_draws_and_anchors(arena: SynthArena, jsonl_file: Path) -> None:
    bench = benchmark_file(jsonl_file, {"n": "50", "seed": "7", "min_battles": "300"})
    assert isinstance(bench, ArenaBenchmark) and bench.human is not None
    rare = set(arena.models[-3:])
    assert rare.isdisjoint(bench.human.models) and len(bench.human.models) == 17
    by_id = {row["question_id"]: row for row in arena.rows}
    sides = Counter()
    for question in bench.questions:
        row, meta = by_id[question.metadata["question_id"]], question.metadata
        assert len(row["conversation_a"]) == 2  # single-turn only
        assert {row["model_a"], row["model_b"]} <= set(bench.human.models)  # both sides anchors
        side = meta["opponent_side"]
        assert meta["opponent"] == row[side]
        index = 0 if side == "model_a" else 1
        stored = (row["conversation_a"], row["conversation_b"])[index][1]["content"]
        assert bench.shipped_answers[OPPONENT][question.uid] == stored
        assert question.prompt == row["conversation_a"][0]["content"]
        sides[(side, meta["model_position"])] += 1
    assert len(sides) == 4  # both sides and both positions are drawn
    selection = bench.info["selection"]
    ids = [q.metadata["question_id"] for q in bench.questions]
    assert selection["question_ids_sha256"] == fingerprint(ids) and selection["seed"] == 7
    again = benchmark_file(jsonl_file, {"n": "50", "seed": "7", "min_battles": "300"})
    assert [q.metadata for q in again.questions] == [q.metadata for q in bench.questions]
    other = benchmark_file(jsonl_file, {"n": "50", "seed": "8", "min_battles": "300"})
    assert other.info["selection"]["question_ids_sha256"] != selection["question_ids_sha256"]


def test_language_filter_and_options(jsonl_file: Path) -> None:
    table = read_arena_file(jsonl_file)
    german = arena_benchmark(table, "t", {"n": "30", "languages": "German"}, {})
    assert {q.category for q in german.questions} == {"de"} and len(german.questions) == 30
    both = arena_benchmark(table, "t", {"n": "10", "positions": "both"}, {})
    assert all("model_position" not in q.metadata for q in both.questions)
    with pytest.raises(JuristError, match="-B colour"):
        arena_benchmark(table, "t", {"colour": "red"}, {})
    with pytest.raises(JuristError, match="-B n"):
        arena_benchmark(table, "t", {"n": "many"}, {})
    with pytest.raises(JuristError, match="fewer than two models"):
        arena_benchmark(table, "t", {"min_battles": "100000"}, {})
    with pytest.raises(JuristError, match="-B anchor"):
        arena_benchmark(table, "t", {"anchor": "no-such-model"}, {})


def test_calibration_mode_ships_both_sides(jsonl_file: Path) -> None:
    bench = benchmark_file(jsonl_file, {"calibration": "25"})
    assert bench.name.endswith("-calibration") and len(bench.questions) == 25
    assert bench.candidates == ("arena-model-b",) and bench.baseline == "arena-model-a"
    assert all(q.metadata["human_winner"] in ("model_a", "model_b") for q in bench.questions)
    assert bench.metrics == ("arena-calibration",)


def test_a_question_file_is_not_an_arena_file(tmp_path: Path) -> None:
    questions = tmp_path / "question.jsonl"
    questions.write_text('{"uid": "q1", "prompt": "hi"}\n')
    assert not looks_like_arena_file(questions)
    assert not looks_like_arena_file(tmp_path / "missing.parquet")


def test_an_arena_file_is_told_from_its_head_gzipped_or_not(jsonl_file: Path, tmp_path: Path) -> None:
    import gzip

    packed = tmp_path / "arena.jsonl.gz"
    packed.write_bytes(gzip.compress(jsonl_file.read_bytes()))
    assert looks_like_arena_file(packed)
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(gzip.compress(jsonl_file.read_bytes())[:40])  # a truncated stream
    assert not looks_like_arena_file(broken)
    plain = tmp_path / "not-gzip.jsonl.gz"
    plain.write_bytes(jsonl_file.read_bytes())
    assert not looks_like_arena_file(plain)


def test_data_dir_is_not_touched_by_reading(jsonl_file: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    shutil.copyfile(jsonl_file, copy)
    before = os.stat(copy).st_mtime_ns
    read_arena_file(copy)
    assert os.stat(copy).st_mtime_ns == before
