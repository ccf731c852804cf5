"""Where each answer or judgment of a run lies on disk, not the records themselves.

The judge stage and scoring visit every answer of every model; holding them (texts, raw judge replies)
made a run's memory grow with questions × models (1.7 GB at 20k questions and 8 models). An index keeps
a line's byte offset and number per key, and a record is read back, one line, only when it is needed.
Files are append-only while indexed, so an offset stays valid; the last line for a key wins, as in
:meth:`RunDir.load_answers`.
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from jurist.errors import InputError
from jurist.store.derived import FileState, read_derived, write_derived
from jurist.store.jsonl import iter_jsonl_lines, parse_jsonl_line, read_jsonl_line
from jurist.store.records import AnswerRecord, judgment_kind, sample_of, text_hash

AnswerKey = tuple[str, int]
"""(uid, sample)."""


def answer_text(record: dict[str, Any]) -> str | None:
    """The answer text of a record in jurist's shape or Arena-Hard's (v2.0 ``messages``, 2024 ``choices``)."""
    if isinstance(record.get("answer"), str):
        return str(record["answer"])
    messages = record.get("messages")
    if isinstance(messages, list) and messages:
        content = messages[-1].get("content") if isinstance(messages[-1], dict) else None
        if isinstance(content, dict):
            content = content.get("answer")
        if isinstance(content, str):
            return content
    choices = record.get("choices")
    if isinstance(choices, list) and choices:
        turns = choices[0].get("turns") if isinstance(choices[0], dict) else None
        if isinstance(turns, list) and turns and isinstance(turns[0], dict):
            content = turns[0].get("content")
            if isinstance(content, str):
                return content
    return None


def normalized_answer(path: Path, line: int, record: dict[str, Any]) -> AnswerRecord:
    """``record`` as jurist's answer shape (kind, str uid, sample, answer), or an :class:`InputError`
    naming the line. Schema-1 lines (no kind, no sample) and Arena-Hard's shapes read as sample 0."""
    uid = record.get("uid", record.get("question_id"))
    text = answer_text(record)
    if uid is None:
        raise InputError(path, f"line {line}", "field 'uid' is missing")
    if text is None:
        raise InputError(path, f"line {line}", "no answer text (field 'answer')")
    record.update(kind="answer", uid=str(uid), sample=sample_of(record), answer=text)
    return record  # type: ignore[return-value]


class _FollowedFile:
    """An index of an append-only JSONL file that follows it: built from every line, then caught up with
    the lines appended since (the answer stage writes answers while the judge stage reads them, and the
    judge stage judgments while scoring waits to read them through the same index).

    With a ``derived`` path the index is kept there between runs (:meth:`save`) and read back when the
    file still starts with the bytes it covered: only lines appended since are parsed. A finished 50k
    question run parsed its 150k answer and judgment records again to learn their keys (~2 s).
    """

    KIND = ""
    """The derived file's kind and the version of its entries' layout."""

    def __init__(self, path: Path, derived: Path | None = None) -> None:
        self.path = path
        self._derived = derived
        self._saved: FileState | None = None
        self._last_line = 0
        self._end = 0
        if derived is not None:
            self._load(derived)
        for number, offset, raw in iter_jsonl_lines(path, start=self._end, after_line=self._last_line):
            self._add(number, offset, raw)
            self._last_line = number
        stat = path.stat() if path.exists() else None
        self._end = stat.st_size if stat else 0  # after a torn tail was cut or ended
        self._inode = stat.st_ino if stat else None  # the file indexed: save() keeps no other's state

    @property
    def end(self) -> int:
        """How many bytes of the file are indexed: it grows only when lines are appended."""
        return self._end

    def _add(self, number: int, offset: int, raw: bytes) -> None:
        raise NotImplementedError

    def _dump(self) -> tuple[Any, bytes]:
        """(keys as JSON, the packed entries in the same order) for the derived file."""
        raise NotImplementedError

    def _restore(self, keys: Any, entries: bytes) -> None:
        """Set the index from :meth:`_dump`'s output (all or nothing); ValueError, TypeError or KeyError when
        it is not that."""
        raise NotImplementedError

    def _load(self, derived: Path) -> None:
        found = read_derived(derived, self.KIND)
        if found is None:
            return
        header, keys, entries = found
        state = FileState.from_json(header.get("state"))
        if state is None or not state.prefix_of(self.path):
            return
        try:
            self._restore(keys, entries)
            self._last_line = int(header["last_line"])
        except (KeyError, TypeError, ValueError):
            return  # _restore assigns only what it read whole: the index is still empty
        self._end, self._saved = state.size, state

    def save(self) -> None:
        """Keep the index of what is indexed now in its derived file (unless that is what was read)."""
        if self._derived is None or (self._saved is not None and self._saved.size == self._end):
            return
        state = FileState.of(self.path, self._end)
        if state is None or state.inode != self._inode:  # gone, or another file renamed over it
            return
        keys, entries = self._dump()
        header = {"kind": self.KIND, "state": state.to_json(), "last_line": self._last_line}
        write_derived(self._derived, header, keys, entries)
        self._saved = state

    def catch_up(self) -> None:
        """Index the lines appended since; a last line without its newline is still being written: left
        for later."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as fh:
            if self._inode is None:  # the file did not exist when the index was built: it does now
                self._inode = os.fstat(fh.fileno()).st_ino
            fh.seek(self._end)
            for raw in fh:
                if not raw.endswith(b"\n"):
                    break
                self._last_line += 1
                if raw.strip():
                    self._add(self._last_line, self._end, raw)
                self._end += len(raw)


class AnswerIndex(_FollowedFile):
    """(uid, sample) -> the line of a model's answers file; shipped answers not yet written count too."""

    KIND = "answer-index/1"

    def __init__(
        self, path: Path, shipped: Mapping[str, str] | None = None, derived: Path | None = None
    ) -> None:
        self._shipped = shipped or {}
        # (uid, sample) -> offset, line number, text hash and stored token_len, packed (:data:`_ANSWER`)
        self._lines: dict[AnswerKey, bytes] = {}
        super().__init__(path, derived)

    def _add(self, number: int, offset: int, raw: bytes) -> None:
        record = normalized_answer(self.path, number, parse_jsonl_line(self.path, number, raw))
        self._lines[(sys.intern(record["uid"]), record["sample"])] = _entry(offset, number, record)

    def _dump(self) -> tuple[Any, bytes]:
        keys = {"uids": [uid for uid, _ in self._lines], "samples": [sample for _, sample in self._lines]}
        return keys, b"".join(self._lines.values())

    def _restore(self, keys: Any, entries: bytes) -> None:
        uids, samples = keys["uids"], keys["samples"]
        self._lines = dict(
            zip(
                ((sys.intern(u), int(s)) for u, s in zip(uids, samples, strict=True)),
                _split(entries, _ANSWER.size, len(uids)),
                strict=True,
            )
        )

    def __contains__(self, key: object) -> bool:
        return key in self._lines or (
            isinstance(key, tuple) and len(key) == 2 and key[1] == 0 and key[0] in self._shipped
        )

    def __len__(self) -> int:
        return len(self._lines)

    def keys(self) -> Iterator[AnswerKey]:
        return iter(self._lines)

    def record(self, uid: str, sample: int) -> AnswerRecord | None:
        """The answer record for (uid, sample), read from disk now (or the shipped text, sample 0)."""
        where = self._lines.get((uid, sample))
        if where is not None:
            offset, number, _, _ = _ANSWER.unpack(where)
            return normalized_answer(self.path, number, read_jsonl_line(self.path, offset, number))
        if sample == 0 and uid in self._shipped:
            shipped = {"kind": "answer", "uid": uid, "sample": 0, "answer": self._shipped[uid]}
            return shipped  # type: ignore[return-value]
        return None

    def text_hash(self, uid: str, sample: int) -> str | None:
        """:func:`text_hash` of the answer's text, kept from when its line was indexed (no read now)."""
        where = self._lines.get((uid, sample))
        if where is not None:
            return f"{_ANSWER.unpack(where)[2]:016x}"
        if sample == 0 and uid in self._shipped:
            return text_hash(self._shipped[uid])
        return None

    def token_len(self, uid: str, sample: int) -> int | None:
        """The ``token_len`` the answer's record stores in its style metadata, if any (no read now)."""
        where = self._lines.get((uid, sample))
        token_len = _ANSWER.unpack(where)[3] if where is not None else -1
        return token_len if token_len >= 0 else None

    def text(self, uid: str, sample: int) -> str | None:
        record = self.record(uid, sample)
        return record["answer"] if record is not None else None


_ANSWER = struct.Struct("<QIQi")
"""An indexed answer line: byte offset, line number, text hash (64 bits) and stored token_len (-1: none),
packed in 24 bytes: a tuple of them held ~250 bytes per answer, 24 MB of a 50k-question re-run."""


def _entry(offset: int, number: int, record: AnswerRecord) -> bytes:
    fields: dict[str, Any] = dict(record)
    metadata = fields.get("metadata") or fields.get("conv_metadata")
    stored = metadata.get("token_len") if isinstance(metadata, dict) else None
    valid = isinstance(stored, int) and not isinstance(stored, bool) and 0 <= stored < 2**31
    token_len = stored if valid else -1
    return _ANSWER.pack(offset, number, int(text_hash(record["answer"]), 16), token_len)


def _split(entries: bytes, size: int, count: int) -> list[bytes]:
    """``count`` packed entries of ``size`` bytes each; ValueError when ``entries`` is not that long."""
    if len(entries) != size * count:
        raise ValueError(f"{len(entries)} bytes are not {count} entries of {size}")
    return [entries[start : start + size] for start in range(0, len(entries), size)]


_JUDGMENT = struct.Struct("<QI?")
"""An indexed judgment line: byte offset, line number, invalid."""


class JudgmentIndex(_FollowedFile):
    """Judgment key -> the line of a (judge, model) judgments file, and whether that judgment is invalid
    (what the judge stage asks before it reads anything)."""

    KIND = "judgment-index/1"

    def __init__(self, path: Path, derived: Path | None = None) -> None:
        self._lines: dict[str, bytes] = {}  # key -> offset, line number, invalid (:data:`_JUDGMENT`)
        super().__init__(path, derived)

    def _dump(self) -> tuple[Any, bytes]:
        return list(self._lines), b"".join(self._lines.values())

    def _restore(self, keys: Any, entries: bytes) -> None:
        if not all(isinstance(key, str) for key in keys):
            raise TypeError("judgment keys are strings")
        self._lines = dict(zip(keys, _split(entries, _JUDGMENT.size, len(keys)), strict=True))

    def _add(self, number: int, offset: int, raw: bytes) -> None:
        record = parse_jsonl_line(self.path, number, raw)
        key = record.get("key")
        if key is None:
            raise InputError(self.path, f"line {number}", "field 'key' is missing")
        self._lines[str(key)] = _JUDGMENT.pack(offset, number, bool(record.get("invalid")))

    def __contains__(self, key: object) -> bool:
        return key in self._lines

    def __len__(self) -> int:
        return len(self._lines)

    def entry(self, key: str) -> bytes | None:
        """Where ``key``'s judgment lies and whether it is invalid, packed: what identifies it in its file."""
        return self._lines.get(key)

    def invalid(self, key: str) -> bool:
        where = self._lines.get(key)
        return where is not None and bool(_JUDGMENT.unpack(where)[2])

    def record(self, key: str) -> dict[str, Any] | None:
        """The stored judgment for ``key``, read from disk now, with ``kind`` and ``sample`` filled in."""
        where = self._lines.get(key)
        if where is None:
            return None
        offset, number, _ = _JUDGMENT.unpack(where)
        record = read_jsonl_line(self.path, offset, number)
        record["kind"] = judgment_kind(record)
        record.setdefault("sample", 0)
        return record
