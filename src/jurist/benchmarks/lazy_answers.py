"""Answer files whose aliases are known at plan time and whose texts are read where first used.

A plan only asks which aliases have shipped answers; the texts are needed when they are written to the
run directory (in the writer's thread) or judged. Parsing Arena-Hard v2.0's two baseline files whole
(10 MB of JSON) cost ~0.15 s of CPU before the first request, so the plan learns the aliases from a scan
of each row's uid alone and the rows are parsed on first access (an answers-only run never parses them).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from jurist.store import iter_jsonl_lines, parse_jsonl_line

Read = tuple[dict[str, str], dict[str, dict[str, Any]]]
"""What one file reads as: uid -> text, uid -> stored style metadata."""

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


def answer_uids(path: Path) -> set[str]:
    """The uids an answer file has rows for, as a full read finds them (``uid``, else ``question_id``);
    a row the scan cannot settle is parsed whole, so its errors name the line as a full read's do."""
    if path.stat().st_size <= WHOLE_FILE_BYTES:
        found = _whole_file_uids(path.read_bytes())
        if found is not None:
            return found
    uids: set[str] = set()
    for number, _, line in iter_jsonl_lines(path, repair=False):
        uid = _leading_uid(line)
        if uid is None:
            row = parse_jsonl_line(path, number, line)
            uid = str(row.get("uid", row.get("question_id", "")))
        uids.add(uid)
    return uids


def _whole_file_uids(data: bytes) -> set[str] | None:
    """The uids of a file whose every row opens with a plain ``uid`` (what :func:`_leading_uid` settles),
    found with a few passes over the whole file instead of three per line; None where any row needs more
    (a second ``"uid"`` anywhere, an escaped letter of one, an unnewlined last line): the rows are then
    read one by one."""
    if data and not data.endswith(b"\n") or _SPELLED.search(data) is not None:
        return None
    uids: set[str] = set()
    rows = position = 0
    match, find = _LEAD.match, data.find
    while position < len(data):
        end = find(b"\n", position)
        found = match(data, position, end)
        if found is not None:
            try:
                uids.add(found.group(1).decode("utf-8"))
            except UnicodeDecodeError:
                return None
            rows += 1
        elif data[position:end].strip():
            return None
        position = end + 1
    return uids if data.count(b'"uid"') == rows else None  # each row's one "uid" is its leading one


class LazyAnswerFiles:
    """Answer files per alias, each read once, on first access, by the reader it was added with
    (thread-safe: the writer's thread and the event loop may both reach for them). ``texts`` and
    ``metadata`` are its two views."""

    def __init__(self) -> None:
        self.files: dict[str, Path] = {}
        self._readers: dict[str, Callable[[Path], Read]] = {}
        self._done: dict[str, Read] = {}
        self._lock = threading.Lock()
        self.texts = _View(self, 0)
        self.metadata = _View(self, 1)

    @property
    def sources(self) -> dict[str, str]:
        return {alias: str(path) for alias, path in self.files.items()}

    def add(self, alias: str, path: Path, read: Callable[[Path], Read]) -> None:
        self.files[alias], self._readers[alias] = path, read

    def read(self, alias: str) -> Read:
        """``alias``'s file as read (parsed now if it was not before); its errors name file and line."""
        with self._lock:
            done = self._done.get(alias)
            if done is None:
                done = self._done[alias] = self._readers[alias](self.files[alias])
            return done


class _View(Mapping[str, Mapping[str, Any]]):
    """alias -> one part of what its file reads as; membership and order come from the files alone."""

    def __init__(self, files: LazyAnswerFiles, part: int) -> None:
        self._files, self._part = files, part

    def __getitem__(self, alias: str) -> Mapping[str, Any]:
        if alias not in self._files.files:
            raise KeyError(alias)
        return self._files.read(alias)[self._part]

    def __contains__(self, alias: object) -> bool:
        return alias in self._files.files

    def __iter__(self) -> Iterator[str]:
        return iter(self._files.files)

    def __len__(self) -> int:
        return len(self._files.files)

    def __repr__(self) -> str:
        return f"<answers of {list(self._files.files)}, read on first use>"


__all__ = ["LazyAnswerFiles", "answer_uids"]
