"""AlpacaEval's two LC input files as read from disk, each row checked: df_gamed.csv (the length-gamed
baselines' rows) and instruction_difficulty.csv; errors name the file, the line and the field."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path

from jurist.errors import InputError


def _csv_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def _number(path: Path, line: int, name: str, value: str | None) -> float:
    try:
        return float(value) if value not in (None, "") else math.nan
    except ValueError:
        raise InputError(path, f"line {line}", f"field {name!r}: {value!r} is not a number") from None


def read_gamed(
    path: Path,
) -> tuple[dict[int, float], tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """df_gamed.csv: (instruction position -> difficulty, first row of each position wins, as upstream's
    ``drop_duplicates("index")``), and the gamed rows' preferences, length gaps and difficulties."""
    fields, rows = _csv_rows(path)
    needed = ("index", "instruction_difficulty", "preference", "std_delta_len", "not_gamed_baseline")
    absent = [name for name in needed if name not in fields]
    if absent:
        raise InputError(path, "line 1", f"no column {absent[0]!r} (df_gamed.csv has {', '.join(needed)})")
    by_position: dict[int, float] = {}
    prefs, gaps, gammas = [], [], []
    for line, row in enumerate(rows, start=2):
        try:
            position = int(float(row["index"]))
        except ValueError:
            raise InputError(
                path, f"line {line}", f"field 'index': {row['index']!r} is not a position"
            ) from None
        if row["not_gamed_baseline"].strip().lower() not in ("false", "0", "0.0"):
            raise InputError(path, f"line {line}", "field 'not_gamed_baseline': a gamed row must say False")
        gamma = _number(path, line, "instruction_difficulty", row["instruction_difficulty"])
        preference = _number(path, line, "preference", row["preference"])
        if not math.isnan(preference) and not 0.0 <= preference <= 1.0:
            raise InputError(path, f"line {line}", f"field 'preference': {preference} is outside [0, 1]")
        by_position.setdefault(position, gamma)
        prefs.append(preference)
        gaps.append(_number(path, line, "std_delta_len", row["std_delta_len"]))
        gammas.append(gamma)
    if not prefs:
        raise InputError(path, "", "no gamed rows")
    return by_position, tuple(prefs), tuple(gaps), tuple(gammas)


def read_difficulty(path: Path, instructions: Sequence[str]) -> dict[int, float]:
    """instruction_difficulty.csv as position -> difficulty: its first column names the instruction (a
    position or the instruction's text); without one, rows are in the instructions' order."""
    fields, rows = _csv_rows(path)
    if not fields:
        raise InputError(path, "line 1", "no header")
    value = "instruction_difficulty" if "instruction_difficulty" in fields else fields[-1]
    key = fields[0] if fields[0] != value else None
    positions = {text: i for i, text in enumerate(instructions)}
    out: dict[int, float] = {}
    for line, row in enumerate(rows, start=2):
        name = row.get(key, "") if key is not None else str(line - 2)
        if name is not None and name.strip().isdigit():
            position = int(name)
        elif name in positions:
            position = positions[name]
        else:
            raise InputError(
                path, f"line {line}", f"field {key!r}: not a position nor one of the instructions"
            )
        out[position] = _number(path, line, value, row.get(value))
    return out
