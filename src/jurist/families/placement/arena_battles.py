"""Arena battles in JudgeArena's schema: the outcomes of a placement run, and what ``jurist show`` reads.

JudgeArena (OpenEuroLLM/JudgeArena, branch ``feat/save-arena-battles``) saves each Elo run as a table of
battles (``model_a, model_b, winner, source, pref, question_id, judge_model``; ``pref`` 0 when model_a
won, 1 when model_b did; ``judge_model`` null for human votes) and an ``EloReport``. jurist writes the same
schema, so a file of either tool reads here; unknown keys are kept, missing optional ones are None.
(Importing a JudgeArena results folder as a run directory is :mod:`jurist.interop.judgearena`'s.)
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from jurist.errors import InputError, JuristError
from jurist.ratings import soft_preference

WINNERS = frozenset({"model_a", "model_b", "tie", "tie (bothbad)"})
SOURCES = ("llm-judge", "human")
RATING_FIELDS = ("model", "rating", "ci_low", "ci_high", "n_battles", "source")
REPORT_FIELDS = ("arena", "model", "judge_model", "n_bootstraps", "seed", "ratings")
BATTLE_FILES = ("battles.jsonl", "battles.parquet")
ELO_FILE = "elo_ratings.json"
LABEL_GAP = {"A>>B": 2.0, "A>B": 1.0, "A=B": 0.0, "B>A": -1.0, "B>>A": -2.0}
"""A verdict as a score gap, shown A minus shown B: the graded signal a temperature turns into a
preference (JudgeArena's judges give two 0-10 scores; jurist's verdict labels are five grades)."""
HARD_PREF = {"model_a": 0.0, "model_b": 1.0, "tie": 0.5, "tie (bothbad)": 0.5}
"""JudgeArena's ``pref``: 0 when model_a won, 1 when model_b did."""

Battle = dict[str, Any]


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def battle_from_dict(record: dict[str, Any], path: Path, where: str) -> dict[str, Any]:
    """One battle checked and normalised: NaN read as None, ``pref`` a float or None."""
    for name in ("model_a", "model_b"):
        if not isinstance(record.get(name), str) or not record[name]:
            raise InputError(path, where, f"field {name!r}: expected a model name, got {record.get(name)!r}")
    winner = record.get("winner")
    if winner == "both_bad":
        winner = "tie (bothbad)"
    if winner not in WINNERS:
        raise InputError(
            path, where, f"field 'winner': {winner!r} is not one of {', '.join(sorted(WINNERS))}"
        )
    source = record.get("source")
    if source not in SOURCES:
        raise InputError(path, where, f"field 'source': {source!r} is not llm-judge or human")
    pref = record.get("pref")
    if _missing(pref):
        pref = None
    elif isinstance(pref, bool) or not isinstance(pref, (int, float)) or not 0.0 <= float(pref) <= 1.0:
        raise InputError(path, where, f"field 'pref': {pref!r} is not a number in [0, 1]")
    out = {key: (None if _missing(value) else value) for key, value in record.items()}
    out.update(winner=winner, source=source, pref=None if pref is None else float(pref))
    for name in ("question_id", "judge_model"):
        value = out.get(name)
        out[name] = None if value is None else str(value)
    if source == "llm-judge" and out["judge_model"] is None:
        raise InputError(path, where, "field 'judge_model': a judged battle must name its judge")
    return out


def read_battles(path: Path) -> list[dict[str, Any]]:
    """Every battle of a JSONL or parquet battles file (jurist's or JudgeArena's)."""
    if not path.is_file():
        raise JuristError(f"{path}: no such battles file")
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise JuristError(
                f"{path}: reading a parquet battles file needs pyarrow (pip install pyarrow)"
            ) from None
        rows = pq.read_table(str(path)).to_pylist()
        return [battle_from_dict(row, path, f"row {k}") for k, row in enumerate(rows, start=1)]
    from jurist.store import parse_jsonl_bytes

    data = path.read_bytes()
    return [battle_from_dict(record, path, f"line {n}") for n, record in parse_jsonl_bytes(path, data)]


def find_battles(folder: Path) -> Path | None:
    """The battles file of a run or results folder (jurist's JSONL first, then JudgeArena's parquet)."""
    for name in BATTLE_FILES:
        if (folder / name).is_file():
            return folder / name
    return None


def is_arena_battles_file(path: Path) -> bool:
    """Whether ``path`` holds battles in this schema: parquet, or JSONL whose first record names a
    ``judge_model`` field (jurist's pairwise battles name a ``judge`` instead)."""
    if not path.is_file():
        return False
    if path.suffix == ".parquet":
        return True
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and "judge_model" in record and "source" in record


def read_elo_report(path: Path) -> dict[str, Any]:
    """An ``elo_ratings.json``, checked field by field (extra keys, such as jurist's, are kept)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(path, "", f"not a readable JSON document ({exc})") from None
    if not isinstance(document, dict):
        raise InputError(path, "", "expected a JSON object (an EloReport)")
    for name in REPORT_FIELDS:
        if name not in document:
            raise InputError(path, "", f"field {name!r} is missing")
    if not isinstance(document["ratings"], list):
        raise InputError(path, "", "field 'ratings': expected a list")
    for k, entry in enumerate(document["ratings"]):
        if not isinstance(entry, dict):
            raise InputError(path, f"ratings[{k}]", "expected an object")
        for name in RATING_FIELDS:
            if name not in entry:
                raise InputError(path, f"ratings[{k}]", f"field {name!r} is missing")
        for name in ("rating", "ci_low", "ci_high"):
            if isinstance(entry[name], bool) or not isinstance(entry[name], (int, float)):
                raise InputError(path, f"ratings[{k}]", f"field {name!r}: {entry[name]!r} is not a number")
    return document


# ----------------------------------------------------------------------------------------------------
# jurist judgments as battles in this schema


def evaluated_name(alias: str, arena_models: Iterable[str]) -> str:
    """The evaluated model's name in the fit: its alias, unless an arena model has that name (a model
    judged by the judge must not be merged with its own human votes)."""
    return f"{alias} (judged)" if alias in set(arena_models) else alias


def game_battle(
    game: Mapping[str, Any], names: Mapping[str, str], temperature: float | None
) -> Battle | None:
    """One judged game as a battle between real model names (None for an invalid game)."""
    label = game.get("label")
    if label not in LABEL_GAP:
        return None
    gap = LABEL_GAP[str(label)]
    winner = "model_a" if gap > 0 else "model_b" if gap < 0 else "tie"
    pref_hard = HARD_PREF[winner]
    pref = pref_hard if temperature is None else round(1.0 - float(soft_preference(gap, temperature)), 4)
    return {
        "model_a": names[str(game["a"])],
        "model_b": names[str(game["b"])],
        "winner": winner,
        "source": "llm-judge",
        "pref": pref,
        "pref_hard": pref_hard,
        "label": label,
    }


def judged_battles(
    judged: Iterable[tuple[Any, dict[str, Any]]],
    names: Mapping[str, str],
    temperatures: float | Mapping[str, float] | None,
    arena: str | None,
) -> tuple[list[Battle], Counter[tuple[str, str]]]:
    """Battles of every judgment (JudgeArena's schema plus jurist's uid, sample and game), with the
    opponent alias mapped to each question's real opponent; and invalid games per (judge, model)."""
    out: list[Battle] = []
    invalid: Counter[tuple[str, str]] = Counter()
    for item, record in judged:
        metadata = item.question.metadata
        judge = str(record["judge"])
        temperature = temperatures.get(judge) if isinstance(temperatures, Mapping) else temperatures
        real = {**names, str(record["baseline"]): str(metadata.get("opponent", record["baseline"]))}
        for game in record["games"]:
            battle = game_battle(game, real, temperature)
            if battle is None:
                invalid[(judge, str(record["model"]))] += 1
                continue
            out.append(
                battle
                | {
                    "question_id": str(metadata.get("question_id", item.question.uid)),
                    "judge_model": judge,
                    "benchmark": arena,
                    "uid": item.question.uid,
                    "sample": int(record.get("sample", 0)),
                    "game": int(game.get("game", 1)),
                }
            )
    return out, invalid
