"""JudgeBench's published judge outputs (upstream ``outputs/*.jsonl[.gz]``), scored with the exact rule.

Each line holds a pair, the judge's name and model, and one or two stored judgments; game 2 is stored as the
judge said it on the swapped presentation. ``jurist judgebench score`` uses this to reproduce the published
leaderboard, so published judges and our own runs line up.
"""

from __future__ import annotations

import os
from pathlib import Path

from jurist.benchmarks import (
    Decision,
    Group,
    JudgeScore,
    Label,
    Pair,
    field_error,
    normalize_decision,
    pair_from_record,
    read_jsonl_any,
    score_games,
    unswap,
)
from jurist.errors import InputError


def _output_files(path: Path) -> list[Path]:
    """The outputs/*.jsonl and *.jsonl.gz files under ``path``; a .jsonl wins over its own .gz copy."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError(path, "", "no such file or folder")
    plain = {p.name: p for p in path.glob("*.jsonl")}
    zipped = [p for p in path.glob("*.jsonl.gz") if p.name[: -len(".gz")] not in plain]
    return sorted([*plain.values(), *zipped], key=lambda p: p.name)


def _stored_decision(entry: object, path: Path, line: int, game: int) -> tuple[Decision | None, str | None]:
    """A stored judgment entry -> (decision, judge_model); a null entry is a failed game."""
    field = f"judgments[{game}]"
    if entry is None:
        return None, None
    if not isinstance(entry, dict):
        raise field_error(path, line, field, f"expected an object or null, got {type(entry).__name__}")
    raw = entry.get("decision")
    if raw is not None and not isinstance(raw, str):
        raise field_error(path, line, f"{field}.decision", f"expected a string or null, got {raw!r}")
    try:
        decision = normalize_decision(raw)
    except ValueError as exc:
        raise field_error(path, line, f"{field}.decision", str(exc)) from None
    inner = entry.get("judgment")
    model = inner.get("judge_model") if isinstance(inner, dict) else None
    return decision, model if isinstance(model, str) and model else None


def _model_from_file_name(path: Path) -> str | None:
    for part in path.name.removesuffix(".gz").removesuffix(".jsonl").split(","):
        if part.startswith("judge_model="):
            return part[len("judge_model=") :] or None
    return None


def _read_output_file(path: Path) -> list[tuple[str, str, Pair, tuple[Decision | None, ...], int]]:
    """Return (judge_name, judge_model or "", pair, raw games, line) per stored line of one outputs file."""
    rows: list[tuple[str, str | None, Pair, tuple[Decision | None, ...], int]] = []
    file_model: str | None = None
    for number, record in read_jsonl_any(path):
        pair = pair_from_record(record, path, number)
        judge_name = record.get("judge_name")
        if not isinstance(judge_name, str) or not judge_name:
            raise field_error(path, number, "judge_name", f"expected a non-empty string, got {judge_name!r}")
        judgments = record.get("judgments")
        if not isinstance(judgments, list) or len(judgments) not in (1, 2):
            raise field_error(path, number, "judgments", "expected a list of 1 or 2 entries (one per game)")
        games: list[Decision | None] = []
        line_model: str | None = None
        for game, entry in enumerate(judgments):
            decision, model = _stored_decision(entry, path, number, game)
            games.append(decision)
            line_model = line_model or model
        file_model = file_model or line_model
        rows.append((judge_name, line_model, pair, tuple(games), number))
    # A line whose games all failed carries no judge_model; attribute it to the file's judge.
    fallback = file_model or _model_from_file_name(path) or ""
    return [(name, model or fallback, pair, games, number) for name, model, pair, games, number in rows]


def score_stored_outputs(path: str | os.PathLike[str]) -> list[JudgeScore]:
    """Score upstream JudgeBench ``outputs/`` files (one file or a folder of .jsonl/.jsonl.gz).

    Lines are grouped per (judge_name, judge_model, response_model); each group yields one ``JudgeScore``
    named ``"<judge_name>:<judge_model>"``, in file-name order. Game 2 is stored as the judge said it on
    the swapped presentation and is un-swapped before scoring.
    """
    root = Path(path)
    groups: dict[tuple[str, str, str], list[tuple[Group, Label, tuple[Decision | None, ...]]]] = {}
    seen: dict[tuple[str, str, str], dict[str, str]] = {}
    files = _output_files(root)
    if not files:
        raise InputError(root, "", "no outputs *.jsonl or *.jsonl.gz files here")
    for file in files:
        for judge_name, judge_model, pair, games, number in _read_output_file(file):
            key = (judge_name, judge_model, pair.response_model)
            where = f"{file.name} line {number}"
            earlier = seen.setdefault(key, {})
            if pair.pair_id in earlier:
                raise field_error(
                    file, number, "pair_id", f"judged twice by this judge (also {earlier[pair.pair_id]})"
                )
            earlier[pair.pair_id] = where
            unswapped = games if len(games) == 1 else (games[0], unswap(games[1]))
            groups.setdefault(key, []).append((pair.group, pair.label, unswapped))
    scores: list[JudgeScore] = []
    for (judge_name, judge_model, response_model), items in groups.items():
        try:
            scores.append(score_games(f"{judge_name}:{judge_model}", response_model, items))
        except ValueError as exc:
            raise InputError(root, "", str(exc)) from None
    return scores
