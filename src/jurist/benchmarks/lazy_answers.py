"""Answer files whose aliases are known at plan time and whose rows are read where first used.

A plan only asks which aliases have shipped answers; a text is needed when it is written to the run
directory (in the writer's thread) or judged. Parsing Arena-Hard v2.0's two baseline files whole (10 MB of
JSON) cost ~0.15 s of CPU before the first request, so the plan learns each file's uids, and where each
uid's row lies, from a scan of the rows' leading uid alone; a row is parsed when its uid is first asked
for. A run judges each question against one of the two baselines, so it parses half of their rows (an
answers-only run none).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from jurist.errors import InputError
from jurist.store import iter_jsonl_lines, parse_jsonl_line, read_line_at

_WS = rb"[ \t\r\n]*"  # JSON's whitespace
_LEAD = re.compile(_WS + rb"\{" + _WS + rb'"uid"' + _WS + rb":" + _WS + rb'"([^"\\]*)"' + _WS + rb"[,}]")
"""A row opening with a string ``uid`` free of escapes (compact or ``json.dumps``'s default spacing)."""


def _leading_uid(line: bytes) -> str | None:
    """The uid of a row that opens with a plain string ``uid`` and names no other ``uid``, else None.

    In JSON a quote inside a string is escaped, so a second key ``uid`` at any depth would show as a
    second ``"uid"``; a ``\\u`` escape could spell one otherwise, so such rows are parsed whole."""
    found = _LEAD.match(line)
    if found is None or line.count(b'"uid"') != 1 or b"\\u" in line:
        return None
    try:
        return found.group(1).decode("utf-8")
    except UnicodeDecodeError:
        return None


_SPELLED = re.compile(rb"\\u00(?:75|69|64)")
"""``u``, ``i`` or ``d`` written as an escape: the only way a key ``uid`` hides from a search for it."""

WHOLE_FILE_BYTES = 64 << 20
"""Files up to this size are scanned in one piece (Arena-Hard v2.0's two baselines: 24 -> 13 ms)."""


Row = tuple[int, int, int]
"""Where a row lies in its file: its line number, its first byte and the byte after its newline."""


def answer_rows(path: Path) -> dict[str, Row]:
    """uid -> where its row lies, for every uid an answer file has a row for, as a full read finds them
    (``uid``, else ``question_id``; the last row of a uid wins, as it does in a full read). A row the scan
    cannot settle is parsed whole, so its errors name the line as a full read's do."""
    if path.stat().st_size <= WHOLE_FILE_BYTES:
        found = _whole_file_rows(path.read_bytes())
        if found is not None:
            return found
    rows: dict[str, Row] = {}
    for number, offset, line in iter_jsonl_lines(path, repair=False):
        uid = _leading_uid(line)
        if uid is None:
            row = parse_jsonl_line(path, number, line)
            uid = str(row.get("uid", row.get("question_id", "")))
        rows[uid] = (number, offset, offset + len(line))
    return rows


def answer_uids(path: Path) -> set[str]:
    """The uids an answer file has rows for (:func:`answer_rows`)."""
    return set(answer_rows(path))


def _whole_file_rows(data: bytes) -> dict[str, Row] | None:
    """:func:`answer_rows` of a file whose every row opens with a plain ``uid`` (what :func:`_leading_uid`
    settles), found with a few passes over the whole file instead of three per line; None where any row
    needs more (a second ``"uid"`` anywhere, an escaped letter of one, an unnewlined last line): the rows
    are then read one by one."""
    if data and not data.endswith(b"\n") or _SPELLED.search(data) is not None:
        return None
    found_rows: dict[str, Row] = {}
    rows = position = number = 0
    match, find = _LEAD.match, data.find
    while position < len(data):
        end = find(b"\n", position)
        number += 1
        found = match(data, position, end)
        if found is not None:
            try:
                found_rows[found.group(1).decode("utf-8")] = (number, position, end + 1)
            except UnicodeDecodeError:
                return None
            rows += 1
        elif data[position:end].strip():
            return None
        position = end + 1
    return found_rows if data.count(b'"uid"') == rows else None  # each row's one "uid" is its leading one


ReadRow = Callable[[Path, int, dict[str, Any]], tuple[str, "dict[str, Any] | None"]]
"""What one row reads as, given its file, line number and parsed object: its text and its stored style
metadata (None: none stored); its errors name the file and line."""


class LazyAnswerFiles:
    """Answer files per alias, each row parsed once, where its uid is first asked for (thread-safe: the
    writer's thread and the event loop may both reach for one). ``texts`` and ``metadata`` are its two
    views: alias -> uid -> text, alias -> uid -> stored style metadata."""

    def __init__(self) -> None:
        self.files: dict[str, Path] = {}
        self._rows: dict[str, Mapping[str, Row]] = {}
        self._readers: dict[str, ReadRow] = {}
        self._done: dict[str, dict[str, tuple[str, dict[str, Any] | None]]] = {}
        self._lock = threading.Lock()
        self.texts = _View(self, 0)
        self.metadata = _View(self, 1)

    @property
    def sources(self) -> dict[str, str]:
        return {alias: str(path) for alias, path in self.files.items()}

    def add(self, alias: str, path: Path, rows: Mapping[str, Row], read: ReadRow) -> None:
        """``alias``'s answers: the rows of ``path`` at ``rows`` (:func:`answer_rows`, narrowed to the uids
        wanted), each parsed by ``read`` when first asked for."""
        self.files[alias], self._rows[alias], self._readers[alias] = path, rows, read
        self._done[alias] = {}

    def uids(self, alias: str) -> Mapping[str, Row]:
        return self._rows[alias]

    def row(self, alias: str, uid: str) -> tuple[str, dict[str, Any] | None]:
        """``uid``'s row of ``alias``'s file as read (parsed now if it was not before)."""
        done = self._done[alias]
        found = done.get(uid)
        if found is not None:
            return found
        number, start, end = self._rows[alias][uid]  # KeyError: no such uid, as a dict says it
        with self._lock:
            found = done.get(uid)
            if found is None:
                path = self.files[alias]
                row = _row_at(path, number, start, end)
                if str(row.get("uid", row.get("question_id", ""))) != uid:  # another row lies there now
                    raise InputError(path, f"line {number}", _CHANGED)
                found = done[uid] = self._readers[alias](path, number, row)
            return found

    def parsed(self, alias: str) -> int:
        """How many of ``alias``'s rows have been parsed so far."""
        return len(self._done[alias])


_CHANGED = "the file changed while the run read it; run again"


def _row_at(path: Path, number: int, start: int, end: int) -> dict[str, Any]:
    """The object on line ``number``, where the scan found it; a file changed since then is said so."""
    try:
        line = read_line_at(path, start, end - start)
    except OSError as exc:
        raise InputError(path, f"line {number}", f"could not be read again ({exc.strerror})") from None
    if len(line) != end - start or not line.strip():
        raise InputError(path, f"line {number}", _CHANGED)
    return parse_jsonl_line(path, number, line)


class _View(Mapping[str, Mapping[str, Any]]):
    """alias -> one part of what its file's rows read as; membership and order come from the scan."""

    def __init__(self, files: LazyAnswerFiles, part: int) -> None:
        self._files, self._part = files, part

    def __getitem__(self, alias: str) -> Mapping[str, Any]:
        if alias not in self._files.files:
            raise KeyError(alias)
        return _Rows(self._files, alias) if self._part == 0 else _RowMetadata(self._files, alias)

    def __contains__(self, alias: object) -> bool:
        return alias in self._files.files

    def __iter__(self) -> Iterator[str]:
        return iter(self._files.files)

    def __len__(self) -> int:
        return len(self._files.files)

    def __repr__(self) -> str:
        return f"<answers of {list(self._files.files)}, read on first use>"


class _Rows(Mapping[str, str]):
    """uid -> text of one alias's file: the keys from the scan, a text parsed when asked for."""

    def __init__(self, files: LazyAnswerFiles, alias: str) -> None:
        self._files, self._alias = files, alias

    def __getitem__(self, uid: str) -> str:
        return self._files.row(self._alias, uid)[0]

    def __contains__(self, uid: object) -> bool:
        return uid in self._files.uids(self._alias)

    def __iter__(self) -> Iterator[str]:
        return iter(self._files.uids(self._alias))

    def __len__(self) -> int:
        return len(self._files.uids(self._alias))


class _RowMetadata(Mapping[str, dict[str, Any]]):
    """uid -> the stored style metadata of one alias's file, for the rows that store it: asking for a uid
    parses its row; listing them parses every row."""

    def __init__(self, files: LazyAnswerFiles, alias: str) -> None:
        self._files, self._alias = files, alias

    def __getitem__(self, uid: str) -> dict[str, Any]:
        metadata = self._files.row(self._alias, uid)[1]
        if metadata is None:
            raise KeyError(uid)
        return metadata

    def __contains__(self, uid: object) -> bool:
        return isinstance(uid, str) and uid in self._files.uids(self._alias) and self.get(uid) is not None

    def __iter__(self) -> Iterator[str]:
        return (uid for uid in list(self._files.uids(self._alias)) if uid in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


__all__ = ["LazyAnswerFiles", "ReadRow", "Row", "answer_rows", "answer_uids"]
