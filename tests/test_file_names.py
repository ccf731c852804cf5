"""Alias file names: injective, reversible, short, inside the run directory."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from jurist.store.run_dir import (
    MAX_STEM_BYTES,
    NAMES_FILE,
    RunDir,
    alias_from_stem,
    file_stem,
    is_hashed_stem,
    plain_stem,
)

_PIECES = [
    "a", "Z", "0", "_", "__", "-", ".", "..", "/", "\\", " ", "%", "%2F", ":", "*", "?", "\x00", "\n",
    "é", "模型", "ß", "🙂", "Ω", "\u200b", "org", "model", "Qwen2.5-7B", "x" * 60, "é" * 40,
]  # fmt: skip


def _random_aliases(count: int, seed: int = 20240611) -> list[str]:
    """Aliases built from separators, dots, escapes, unicode and long runs (deterministic)."""
    rng = random.Random(seed)
    aliases = {"", ".", "..", "...", ".hidden", "a/b", "a__b", "my model", "my_model", "x" * 300, "模" * 300}
    while len(aliases) < count:
        parts = rng.choices(_PIECES, k=rng.randint(1, 12))
        if rng.random() < 0.2:
            parts.append("".join(chr(rng.randint(32, 0x2FFFF)) for _ in range(rng.randint(1, 80))))
        aliases.add("".join(parts))
    return sorted(aliases)


ALIASES = _random_aliases(3000)


def test_names_are_unique_reversible_short_and_inside_the_run(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    stems: dict[str, str] = {}
    for alias in ALIASES:
        stem = file_stem(alias)
        assert stem not in stems, f"{alias!r} and {stems[stem]!r} share {stem!r}"
        stems[stem] = alias
        assert len(stem.encode()) <= MAX_STEM_BYTES and len(f"{stem}.jsonl".encode()) <= 255
        assert stem not in ("", ".", "..") and not stem.startswith(".") and "/" not in stem
        assert stem.isascii() and "\\" not in stem and "\x00" not in stem
        if is_hashed_stem(stem):
            with pytest.raises(ValueError):
                alias_from_stem(stem)
        else:
            assert alias_from_stem(stem) == alias
        root = os.path.normpath(run.root.absolute())
        for path in (run.answers(alias), run.judgments(alias, alias)):
            assert os.path.commonpath([root, os.path.normpath(path.absolute())]) == root
            assert path.parent.parent.name in ("answers", "judgments") or path.parent.name == "answers"
    assert any(is_hashed_stem(stem) for stem in stems)


def test_names_really_create_distinct_files(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    sample = ALIASES[::10]
    for alias in sample:
        path = run.answers(alias)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as out:  # "x": fails if two aliases shared a file
            out.write(json.dumps({"alias": alias}))
    written = list((tmp_path / "answers").iterdir())
    assert len(written) == len(sample)
    assert sorted(json.loads(p.read_text("utf-8"))["alias"] for p in written) == sorted(sample)


@pytest.mark.parametrize(("one", "other"), [("a/b", "a__b"), ("my model", "my_model"), ("模型", "模式")])
def test_aliases_arena_hards_plain_names_merge_get_different_files(one: str, other: str) -> None:
    assert plain_stem(one) == plain_stem(other)
    assert file_stem(one) != file_stem(other)


def test_examples_of_the_encoding() -> None:
    assert file_stem("a/b") == "a%2Fb"
    assert file_stem("my model") == "my%20model"
    assert file_stem("a__b") == "a__b"
    assert file_stem("100%") == "100%25"
    assert file_stem("..") == "%2E."
    assert file_stem(".") == "%2E"
    assert file_stem("Qwen/Qwen2.5-7B-Instruct") == "Qwen%2FQwen2.5-7B-Instruct"
    assert file_stem("é") == "%C3%A9"


def test_a_judge_named_dot_dot_stays_inside_the_run(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    assert run.judgments("..", "m") == tmp_path / "run" / "judgments" / "%2E." / "m.jsonl"
    assert run.answers("../../etc/passwd").parent == tmp_path / "run" / "answers"


@pytest.mark.parametrize("stem", ["%2f", "%41", ".x", "a b", "a%2", "%FF", "é"])
def test_foreign_names_are_refused_not_misread(stem: str) -> None:
    with pytest.raises(ValueError):
        alias_from_stem(stem)


def test_long_names_are_recorded_in_names_json(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    long_alias = "org/" + "very-long-model-name " * 20
    path = run.answers(long_alias)
    assert len(path.name.encode()) <= 255 and is_hashed_stem(path.stem)
    names = json.loads((tmp_path / NAMES_FILE).read_text("utf-8"))
    assert names == {long_alias: path.stem}
    assert run.alias_of(path.stem) == long_alias
    assert run.alias_of(file_stem("a/b")) == "a/b"
    run.judgments(long_alias, "short")  # no duplicate entry, no rewrite needed
    assert run.names() == {long_alias: path.stem}


def test_a_reader_of_a_missing_run_creates_nothing(tmp_path: Path) -> None:
    RunDir(tmp_path / "absent").answers("x" * 300)
    assert not (tmp_path / "absent").exists()


def test_only_the_injective_name_is_read(tmp_path: Path) -> None:
    """A file under Arena-Hard's plain name is not this run's: only ``file_stem``'s name is read."""
    run = RunDir(tmp_path)
    plain = tmp_path / "answers" / "org__my_model.jsonl"
    plain.parent.mkdir(parents=True)
    plain.write_text('{"uid": "1", "answer": "plain"}\n')
    assert run.answers("org/my model") == tmp_path / "answers" / "org%2Fmy%20model.jsonl"
    assert run.load_answers("org/my model") == {}
