"""Where each answer or judgment of a run lies on disk, not the records themselves.

The judge stage and scoring visit every answer of every model; holding them (texts, raw judge replies)
made a run's memory grow with questions × models (1.7 GB at 20k questions and 8 models). An index keeps
a line's byte offset and number per key, and a record is read back, one line, only when it is needed.
Files are append-only while indexed, so an offset stays valid; the last line for a key wins, as in
:meth:`RunDir.load_answers`.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from jurist.errors import InputError
from jurist.store.jsonl import iter_jsonl_lines, parse_jsonl_line, read_jsonl_line
from jurist.store.records import AnswerRecord, content_text, id_field, judgment_kind, sample_of, text_hash

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
        text = content_text(content)  # a string, or OpenAI's list of text parts
        if text is not None:
            return text
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
    uid = id_field(path, f"line {line}", record, ("uid", "question_id"))
    text = answer_text(record)
    if text is None:
        raise InputError(path, f"line {line}", "no answer text (field 'answer')")
    record.update(kind="answer", uid=uid, sample=sample_of(record), answer=text)
    return record  # type: ignore[return-value]


class _FollowedFile:
    """An index of an append-only JSONL file that follows it: built from every line, then caught up with
    the lines appended since (the answer stage writes answers while the judge stage reads them, and the
    judge stage judgments while scoring waits to read them through the same index).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._last_line = 0
        read = 0  # the bytes up to the end of the last record's line (its newline added, if repaired)
        for number, offset, raw in iter_jsonl_lines(path):
            self._add(number, offset, raw)
            self._last_line = number
            read = offset + len(raw) + (0 if raw.endswith(b"\n") else 1)
        self._end = path.stat().st_size if path.exists() else 0  # after a torn tail was cut or ended
        if self._end > read:  # blank lines after the last record: lines too, so the next is numbered right
            with open(path, "rb") as fh:
                fh.seek(read)
                self._last_line += fh.read(self._end - read).count(b"\n")

    @property
    def end(self) -> int:
        """How many bytes of the file are indexed: it grows only when lines are appended."""
        return self._end

    def _add(self, number: int, offset: int, raw: bytes) -> None:
        raise NotImplementedError

    def catch_up(self) -> None:
        """Index the lines appended since; a last line without its newline is still being written: left
        for later."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as fh:
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

    def __init__(self, path: Path, shipped: Mapping[str, str] | None = None) -> None:
        self._shipped = shipped or {}
        # (uid, sample) -> offset, line number, text hash and stored token_len, packed (:data:`_ANSWER`)
        self._lines: dict[AnswerKey, bytes] = {}
        super().__init__(path)

    def _add(self, number: int, offset: int, raw: bytes) -> None:
        self._add_record(number, offset, parse_jsonl_line(self.path, number, raw))

    def _add_record(self, number: int, offset: int, parsed: dict[str, Any]) -> None:
        record = normalized_answer(self.path, number, parsed)
        self._lines[(sys.intern(record["uid"]), record["sample"])] = _entry(offset, number, record)

    def learned(self, span: tuple[int, int], record: Mapping[str, Any]) -> None:
        """Index the line this process just appended at ``span`` (:meth:`JsonlAppender.append`) from the
        record it wrote, not read back and parsed: when the line directly follows what is indexed.
        Anything else (lines appended in between, a tail cut since) is :meth:`catch_up`'s to read."""
        start, end = span
        if start != self._end:
            self.catch_up()
            return
        self._last_line += 1
        self._add_record(self._last_line, start, dict(record))
        self._end = end

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

    def written(self, uid: str, sample: int) -> str | None:
        """The answer as the model wrote it in ``message.content``: what the engine moved out of its start
        (``content_head``, a leading thought) and the answer; never a server's ``reasoning_content``."""
        record = self.record(uid, sample)
        return record.get("content_head", "") + record["answer"] if record is not None else None


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


_JUDGMENT = struct.Struct("<QI?")
"""An indexed judgment line: byte offset, line number, invalid."""


class JudgmentIndex(_FollowedFile):
    """Judgment key -> the line of a (judge, model) judgments file, and whether that judgment is invalid
    (what the judge stage asks before it reads anything)."""

    def __init__(self, path: Path) -> None:
        self._lines: dict[str, bytes] = {}  # key -> offset, line number, invalid (:data:`_JUDGMENT`)
        super().__init__(path)

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
        """The stored judgment for ``key``, read from disk now: its ``kind`` checked, ``sample`` filled in."""
        where = self._lines.get(key)
        if where is None:
            return None
        offset, number, _ = _JUDGMENT.unpack(where)
        record = read_jsonl_line(self.path, offset, number)
        judgment_kind(record, self.path, number)
        record.setdefault("sample", 0)
        return record
