"""Strict reading of ``batches.jsonl``: each line a record of a known event with fields of the right types,
or a one-line refusal naming the file, the line and the field.

The journal is the only record of which batches a run directory has at the provider. Read leniently, a
damaged journal looks like a fresh one and every open batch's requests are submitted (and billed) again;
read strictly, the run stops before sending anything and says how to recover. Only the last line may be
torn (a crash mid-write leaves it without its newline): it is skipped, unless it is all the file holds.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jurist.errors import InputError

_TEXT, _NUMBER, _TEXTS, _OBJECT = "text", "number", "list of text", "object"
_FIELDS: dict[str, dict[str, str]] = {
    "journal": {"version": _NUMBER},
    "submitting": {"provider": _TEXT, "model": _TEXT, "intent": _TEXT, "at": _NUMBER, "custom_ids": _TEXTS},
    "not_submitted": {"intent": _TEXT},
    "submitted": {"provider": _TEXT, "model": _TEXT, "batch_id": _TEXT, "at": _NUMBER, "custom_ids": _TEXTS},
    "status": {"batch_id": _TEXT, "status": _TEXT},
    "ended": {"batch_id": _TEXT, "status": _TEXT, "answered": _TEXTS},
}
_OPTIONAL: dict[str, dict[str, str]] = {
    "submitted": {"intent": _TEXT, "phases": _TEXTS, "input_file_id": _TEXT},
    "submitting": {"input_file_id": _TEXT},
    "ended": {"usage": _OBJECT, "not_answered": _OBJECT},
}
RECOVER = (
    "the journal is this directory's record of its batches at the provider, so it is not read as 'no "
    "batches' (that would submit and bill them again): restore it from a backup, or fix or delete that "
    "line, or move the file away and run again: OpenAI batches are then found again by this directory's "
    "mark in their metadata (Anthropic's carry none: theirs are submitted again)"
)


class JournalUnreadable(InputError):
    """``batches.jsonl`` cannot be read as a journal: one line naming the file, line and field, and how to
    recover (exit 2, before any request)."""

    def __init__(self, path: Path, where: str, problem: str) -> None:
        super().__init__(path, where, f"{problem}; {RECOVER}")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def _shape_problem(value: Any, shape: str) -> str | None:
    if shape == _TEXT:
        ok = isinstance(value, str) and bool(value)
    elif shape == _NUMBER:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    elif shape == _OBJECT:
        ok = isinstance(value, dict)
    else:
        ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
    if ok:
        return None
    shown = json.dumps(value)[:40] if not isinstance(value, (dict, list)) else _kind(value)
    wanted = "non-empty text" if shape == _TEXT else ("an " if shape == _OBJECT else "a ") + shape
    return f"is {shown}, not {wanted}"


def check_record(path: Path, number: int, record: Any) -> None:
    """:class:`JournalUnreadable` unless ``record`` (line ``number``) is a journal record."""
    if not isinstance(record, dict):
        raise JournalUnreadable(path, f"line {number}", f"is {_kind(record)}, not a journal record")
    event = record.get("event")
    fields = _FIELDS.get(event) if isinstance(event, str) else None
    if fields is None:
        shown = json.dumps(event)[:40]
        raise JournalUnreadable(path, f"line {number}", f"field 'event' {shown} is no journal event")
    for name, shape in fields.items():
        problem = _shape_problem(record.get(name), shape)
        if problem is not None:
            raise JournalUnreadable(path, f"line {number}", f"field {name!r} ({event}) {problem}")
    for name, shape in _OPTIONAL.get(str(event), {}).items():
        if name in record and (problem := _shape_problem(record[name], shape)) is not None:
            raise JournalUnreadable(path, f"line {number}", f"field {name!r} ({event}) {problem}")


def read_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) of each line of the journal at ``path`` (nothing when there is none)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    except IsADirectoryError:
        raise JournalUnreadable(path, "", "is a directory, not the batch journal") from None
    except OSError as exc:
        raise JournalUnreadable(path, "", f"cannot be read ({exc.strerror or type(exc).__name__})") from None
    if not data.strip():
        raise JournalUnreadable(path, "", "is empty (a journal is never written empty: it was emptied)")
    lines = data.split(b"\n")
    torn = lines.pop() if lines[-1] else None  # the text after the last newline (b"" when none)
    whole = 0
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            raise JournalUnreadable(path, f"line {number}", "is not JSON") from None
        if whole == 0 and not (isinstance(record, dict) and record.get("event") in _FIELDS):
            raise JournalUnreadable(path, f"line {number}", "does not start a batch journal")
        whole += 1
        yield number, record
    if torn is not None:
        try:
            record = json.loads(torn)
        except ValueError:
            if whole == 0:
                raise JournalUnreadable(path, "line 1", "is cut short and nothing else is there") from None
            return  # a torn last line: a write a crash cut off
        yield len(lines) + 1, record
