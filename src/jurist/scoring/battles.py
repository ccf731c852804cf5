"""Reading a run's battles, read-only: nothing here repairs or rewrites a file.

``battles.jsonl`` is read on a fast path (one JSON array) and validated record by record only when
something is wrong, so a bad line is named by file, line and field. Runs without it are rebuilt from
their judgments.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.errors import InputError, JuristError
from jurist.scoring.common import OUTCOME, Battle

if TYPE_CHECKING:
    from jurist.store.run_dir import RunDir


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


def read_battles_file(path: Path) -> list[Battle]:
    """All records of battles.jsonl, parsed as one JSON array (2x faster than line by line).

    A torn last line (an interrupted write) is left out, as the JSONL reader does; any problem is reported
    with its line number by a second, line-by-line pass.
    """
    from jurist.store.jsonl import parse_jsonl_bytes

    data = path.read_bytes()
    data = data[: data.rfind(b"\n") + 1]
    lines = [line for line in data.split(b"\n") if line.strip()]
    try:
        records = json.loads(b"[" + b",".join(lines) + b"]")
    except ValueError:
        records = None
    if records is not None and all(_is_battle(r) for r in records):
        return records  # type: ignore[no-any-return]
    for number, record in parse_jsonl_bytes(path, data):
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
    from jurist.judging.pairwise import battles_from_judgment
    from jurist.store.jsonl import iter_numbered_jsonl
    from jurist.store.records import judgment_kind, sample_of

    root = run.root / "judgments"
    if not root.is_dir():
        raise JuristError(f"{run.root}: no battles.jsonl and no judgments/ to score")
    battles: list[Battle] = []
    for path in sorted(root.glob("*/*.jsonl")):
        latest: dict[tuple[str, int], dict[str, Any]] = {}
        for _, record in iter_numbered_jsonl(path, repair=False):
            latest[(str(record.get("uid")), sample_of(record))] = record
        for record in latest.values():
            kind = judgment_kind(record)
            if kind == "pairwise":
                battles.extend(battles_from_judgment(record))
            elif kind == "preference":  # a soft preference (AlpacaEval import)
                from jurist.interop.alpaca_eval import battles_from_preference

                battles.extend(battles_from_preference(record))
            else:
                raise JuristError(f"{path}: judgment kind {kind!r} has no battles")
    return battles
