"""Reading a run's battles, read-only: nothing here repairs or rewrites a file.

``battles.jsonl`` is read on a fast path (one JSON array) and validated record by record only when
something is wrong, so a bad line is named by file, line and field. Runs without it are rebuilt from
their judgments.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.errors import InputError, JuristError
from jurist.ratings import ALL, OUTCOME, Battle

if TYPE_CHECKING:
    from jurist.store import RunDir


def read_json(path: Path) -> Any:
    """A JSON document, or None when the file does not exist."""
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise JuristError(f"{path}: not valid JSON ({exc})") from None


def _battle_problem(record: dict[str, Any]) -> str | None:
    """What is wrong with a battle record (None when it can be scored)."""
    for name in ("model_a", "model_b", "uid"):
        if name not in record:
            return f"field '{name}' is missing"
    if record.get("winner") not in OUTCOME:
        return f"field 'winner': {record.get('winner')!r} is not model_a|model_b|tie"
    weight = record.get("weight", 1)
    if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not weight >= 0:
        return f"field 'weight': {weight!r} is not a non-negative number"
    return None


def _is_battle(record: Any) -> bool:
    """Fast path of :func:`_battle_problem` for the common, valid record."""
    weight = record.get("weight", 1) if type(record) is dict else None
    return (
        weight is not None
        and "model_a" in record
        and "model_b" in record
        and "uid" in record
        and record.get("winner") in OUTCOME
        and type(weight) in (int, float)
        and weight >= 0
    )


_CHUNK_BYTES = 1 << 20


def read_battles_file(path: Path) -> list[Battle]:
    """All records of battles.jsonl, read 1 MiB at a time, each chunk parsed as one JSON array.

    An array parse is 2x faster than line by line, and chunks with their repeated strings (model, judge,
    winner, category...) interned hold 93 MB at 320k battles where one whole-file parse peaked at 366 MB
    (measured with tracemalloc, same speed). A torn last line (an interrupted write) is left out, as the
    JSONL reader does; any problem is reported with its line number by a second, line-by-line pass.
    """
    records: list[Battle] = []
    with open(path, "rb") as fh:
        rest = b""
        while block := fh.read(_CHUNK_BYTES):
            data = rest + block
            cut = data.rfind(b"\n") + 1
            rest = data[cut:]
            if cut and not _parse_chunk(data[:cut], records):
                return _report_bad_line(path)
    return records


def _parse_chunk(data: bytes, into: list[Battle]) -> bool:
    """Append the battles of whole lines ``data`` to ``into``; False when some line is not a battle."""
    try:
        chunk = json.loads(b"[" + data[:-1].replace(b"\n", b",") + b"]")
    except ValueError:  # blank lines, or a bad one: the slow way tells which
        lines = [line for line in data.split(b"\n") if line.strip()]
        try:
            chunk = json.loads(b"[" + b",".join(lines) + b"]")
        except ValueError:
            return False
    intern = sys.intern
    for record in chunk:
        if not _is_battle(record):
            return False
        for name, value in record.items():
            if type(value) is str:
                record[name] = intern(value)
    into.extend(chunk)
    return True


def _report_bad_line(path: Path) -> list[Battle]:
    from jurist.store import parse_jsonl_bytes

    data = path.read_bytes()
    for number, record in parse_jsonl_bytes(path, data[: data.rfind(b"\n") + 1]):
        problem = _battle_problem(record)
        if problem:
            raise InputError(path, f"line {number}", problem)
    raise InputError(path, "", "unreadable battles file")  # pragma: no cover - every failure is found above


HUMAN_JUDGE = "human"
"""The judge name of battles whose ``judge`` is null: JudgeArena-format human votes."""


def name_null_judges(battles: list[Battle]) -> list[Battle]:
    """Give battles with ``"judge": null`` (human votes) the judge name ``human``, in place.

    Every step after this (choosing judges, sorting rows, sanity, output) reads the judge as a string, so
    it is fixed once here rather than guarded everywhere; a battle without the key keeps jurist's "".
    """
    for battle in battles:
        if "judge" in battle and battle["judge"] is None:
            battle["judge"] = HUMAN_JUDGE
    return battles


def load_battles(run: RunDir) -> tuple[list[Battle], str]:
    """The run's battles and where they came from (battles.jsonl, else rebuilt from the judgments)."""
    if run.battles.is_file():
        return name_null_judges(read_battles_file(run.battles)), "battles.jsonl"
    return name_null_judges(_battles_from_judgments(run)), "judgments"


def _battles_from_judgments(run: RunDir) -> list[Battle]:
    """Battles of every judgment file, the last record per (judge, model, uid) winning."""
    from jurist.judging import battles_from_judgment
    from jurist.store import iter_numbered_jsonl, judgment_kind, sample_of

    root = run.root / "judgments"
    if not root.is_dir():
        raise JuristError(f"{run.root}: no battles.jsonl and no judgments/ to score")
    battles: list[Battle] = []
    for path in sorted(root.glob("*/*.jsonl")):
        latest: dict[tuple[str, int], tuple[int, dict[str, Any]]] = {}
        for line, record in iter_numbered_jsonl(path, repair=False):
            latest[(str(record.get("uid")), sample_of(record))] = line, record
        for line, record in latest.values():
            kind = judgment_kind(record, path, line)
            if kind == "pairwise":
                battles.extend(battles_from_judgment(record))
            elif kind == "preference":  # a soft preference (AlpacaEval import)
                from jurist.judging import preference_battles

                battles.extend(preference_battles(record))
            else:
                raise JuristError(f"{path}: judgment kind {kind!r} has no battles")
    return battles


def invalid_counts(run: RunDir, run_json: Mapping[str, Any]) -> dict[tuple[str, str, str], int]:
    """Invalid-question counts from run.json (imports), else from the rows of the run's leaderboard.json
    (the last scoring's: per category where it scored each category alone)."""
    counts: dict[tuple[str, str, str], int] = {}
    recorded = run_json.get("invalid")
    if isinstance(recorded, dict):
        for judge, per_model in recorded.items():
            for model, n in (per_model or {}).items():
                counts[(judge, model, ALL)] = int(n)
        for judge, per_model in (run_json.get("invalid_by_category") or {}).items():
            for model, per_category in (per_model or {}).items():
                for category, n in (per_category or {}).items():
                    counts[(judge, model, category)] = int(n)
        return counts
    board = read_json(run.leaderboard)
    for row in board if isinstance(board, list) else []:
        if isinstance(row, dict) and row.get("invalid") and "model" in row:
            key = (str(row.get("judge", "")), str(row["model"]), str(row.get("category", ALL)))
            counts[key] = int(row["invalid"])
    totals: dict[tuple[str, str, str], int] = defaultdict(int)
    for (judge, model, category), n in counts.items():
        if category != ALL and (judge, model, ALL) not in counts:  # scored by category: the run's total
            totals[(judge, model, ALL)] += n
    return counts | totals
