"""Append-only JSONL files that survive crashes.

Each record is written with a single ``os.write`` on an ``O_APPEND`` descriptor, so it reaches the kernel
whole or (if the process dies inside the call) as a torn tail without a newline. Readers drop such a tail
with a warning and cut it off the file, so the next append starts on a fresh line instead of being glued
onto the fragment.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from jurist.errors import InputError, StorageError

log = logging.getLogger("jurist.store")


def _is_whole_record(tail: bytes) -> bool:
    """Whether a last line without its newline is nevertheless a whole record.

    jurist writes each line, newline included, in one call, so an interrupted write leaves a prefix of a
    line, and no proper prefix of a JSON object is itself a JSON object. A file written by hand or by
    another tool, though, often just lacks the final newline: that last line is a record, not a tear.
    """
    try:
        return isinstance(json.loads(tail), dict)
    except ValueError:
        return False


def _repair_torn_tail(path: Path, data: bytes) -> bytes:
    """Cut a partial last line off ``path`` (or end a whole one with its missing newline); returns the
    intact part of ``data``."""
    cut = data.rfind(b"\n") + 1
    if _is_whole_record(data[cut:]):
        with open(path, "ab") as fh:
            fh.write(b"\n")
        return data + b"\n"
    log.warning("%s: dropped a torn last line (%d bytes) left by an interrupted write", path, len(data) - cut)
    with open(path, "r+b") as fh:
        fh.truncate(cut)
    return data[:cut]


def iter_jsonl(path: str | Path, *, repair: bool = True) -> Iterator[dict[str, Any]]:
    """Records of a JSONL file we wrote; a torn last line is dropped (and cut off when ``repair``)."""
    for _, record in iter_numbered_jsonl(path, repair=repair):
        yield record


def iter_numbered_jsonl(path: str | Path, *, repair: bool = True) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) pairs, so errors about a record can name its line."""
    path = Path(path)
    for number, _, line in iter_jsonl_lines(path, repair=repair):
        yield number, parse_jsonl_line(path, number, line)


def iter_jsonl_lines(
    path: Path, *, repair: bool = True, start: int = 0, after_line: int = 0
) -> Iterator[tuple[int, int, bytes]]:
    """(line number, byte offset, raw line) of each non-blank whole line, read one line at a time, from
    byte ``start`` (where line ``after_line`` + 1 begins: what an index read before already covers).

    Streaming keeps a reader's memory at one line however large the file (reading it whole cost two
    copies of it: the bytes and their split). A last line without its newline is a record when it parses
    as one (a hand-written file), else a torn write: dropped, and cut off the file when ``repair``.
    """
    if not path.exists():
        return
    with open(path, "rb") as fh:
        fh.seek(start)
        offset = start
        for number, line in enumerate(fh, start=after_line + 1):
            if not line.endswith(b"\n"):  # the last line, without its newline
                if _is_whole_record(line):
                    if repair:
                        with open(path, "ab") as out:
                            out.write(b"\n")
                    yield number, offset, line
                elif repair:
                    log.warning(
                        "%s: dropped a torn last line (%d bytes) left by an interrupted write",
                        path,
                        len(line),
                    )
                    with open(path, "r+b") as out:
                        out.truncate(offset)
                return
            if line.strip():
                yield number, offset, line
            offset += len(line)


LINE_READ = 16384
"""The first read of a line at a known offset; a longer line is read on in larger steps."""


def read_jsonl_line(path: Path, offset: int, number: int = 0) -> dict[str, Any]:
    """The record on the line starting at byte ``offset`` (found earlier by :func:`iter_jsonl_lines`)."""
    return parse_jsonl_line(path, number, read_line_at(path, offset))


def read_line_at(path: Path, offset: int, first_read: int = LINE_READ) -> bytes:
    """The line starting at byte ``offset``, its newline included (the file's rest where it has none).

    Read with ``os.pread``: a run reads a few thousand lines back this way (the answers a judge is asked
    about, the judgments its outcomes are made of), and a buffered file object per line cost twice the
    read itself (~30 against ~12 µs). ``first_read``: a caller that knows the line's length reads it in
    one call."""
    fd = os.open(path, os.O_RDONLY)
    try:
        line = os.pread(fd, first_read, offset)
        end = line.find(b"\n")
        while end < 0:
            more = os.pread(fd, max(len(line), LINE_READ) * 2, offset + len(line))
            if not more:  # a last line without its newline
                return line
            searched = len(line)
            line += more
            end = line.find(b"\n", searched)
    finally:
        os.close(fd)
    return line[: end + 1]


def parse_jsonl_line(path: Path, number: int, line: bytes) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except ValueError as exc:
        raise InputError(path, f"line {number}", f"not valid JSON ({exc})") from None
    if not isinstance(record, dict):
        raise InputError(path, f"line {number}", "expected a JSON object")
    return record


def parse_jsonl_bytes(path: Path, data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) pairs of JSONL ``data`` read from ``path``; blank lines are skipped and a bad
    line is an :class:`InputError` naming the file and line."""
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.strip():
            yield number, parse_jsonl_line(path, number, line)


def read_input_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) pairs of a file the user gave (never modified; a last line without newline
    counts); an unreadable file or a bad line is an :class:`InputError` naming file and line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, "", f"cannot read: {exc.strerror or exc}") from None
    return list(parse_jsonl_bytes(path, data))


def rewrite_jsonl_atomic(path: Path, records: Iterable[Mapping[str, Any]]) -> None:
    """Replace a derived JSONL file (battles, points) whole: written beside it, then renamed over it.

    A write the disk refuses (full, quota, file size limit) is a :class:`StorageError` naming the file:
    the old file is untouched and the half-written copy removed, so a re-run writes it again."""
    rewrite_lines_atomic(path, (jsonl_line(record) for record in records))


def jsonl_line(record: Mapping[str, Any]) -> bytes:
    """``record`` as one line of a JSONL file, its newline included (UTF-8, nothing escaped but JSON's)."""
    return _ENCODER.encode(record if isinstance(record, dict) else dict(record)).encode("utf-8") + b"\n"


def rewrite_lines_atomic(path: Path, lines: Iterable[bytes]) -> None:
    """:func:`rewrite_jsonl_atomic` of lines already encoded (:func:`jsonl_line`)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.parent.mkdir(parents=True, exist_ok=True)
        tmp.unlink(missing_ok=True)
        # Buffered, not line by line: the file only counts once renamed whole (100k battles: one write
        # call per line cost 0.5 s), and fsynced before the rename replaces the old one.
        with open(tmp, "wb", buffering=1 << 20) as out:
            for line in lines:
                out.write(line)
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(path)
    except OSError as exc:
        _discard(tmp)
        raise StorageError(path, path.name, exc) from None


def _discard(tmp: Path) -> None:
    """Remove a half-written temporary copy; one that cannot be removed is left for the next write."""
    try:
        tmp.unlink(missing_ok=True)
    except OSError:
        pass


def read_jsonl(path: str | Path, *, repair: bool = True) -> list[dict[str, Any]]:
    return list(iter_jsonl(path, repair=repair))


_ENCODER = json.JSONEncoder(ensure_ascii=False)
"""``json.dumps(record, ensure_ascii=False)``, with one encoder kept instead of one made per call (dumps
builds a new encoder whenever an option is set: a third of its cost on a small record)."""


class JsonlAppender:
    """Appends one JSON object per line; each lands whole or not at all, and is fsynced at checkpoints."""

    def __init__(self, path: str | Path, *, fsync_every_s: float = 2.0) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists():
                # Make sure a torn tail from an earlier crash is gone before anything is appended after it.
                size = self.path.stat().st_size
                if size:
                    with open(self.path, "rb") as fh:
                        fh.seek(size - 1)
                        if fh.read(1) != b"\n":
                            _repair_torn_tail(self.path, self.path.read_bytes())
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:  # no room for a new file (inodes, quota), or a folder that cannot be made
            raise StorageError(self.path, "records", exc) from None
        self._fsync_every_s = fsync_every_s
        self._last_sync = time.monotonic()
        self._dirty = False

    def append(self, record: dict[str, Any]) -> tuple[int, int]:
        """Append ``record`` as one line; returns where the line lies in the file (its first byte's offset
        and the offset after its newline), so an index of the file can take it without reading it back."""
        line = (_ENCODER.encode(record) + "\n").encode("utf-8")
        try:
            written = os.write(self._fd, line)
            while written < len(line):  # only on exotic filesystems; still one record per call sequence
                written += os.write(self._fd, line[written:])
            end = os.lseek(self._fd, 0, os.SEEK_CUR)  # O_APPEND: just past this write, wherever EOF was
        except OSError as exc:  # disk full, quota, file size limit: a torn tail at worst, cut on resume
            raise StorageError(self.path, "a record", exc) from None
        self._dirty = True
        if time.monotonic() - self._last_sync >= self._fsync_every_s:
            self.sync()
        return end - len(line), end

    def sync(self) -> None:
        if self._dirty:
            try:
                os.fsync(self._fd)
            except OSError as exc:
                raise StorageError(self.path, "buffered records", exc) from None
            self._dirty = False
        self._last_sync = time.monotonic()

    def close(self) -> None:
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Replace ``path`` with ``data`` via a temp file and rename, so readers never see half a file; a
    write the disk refuses is a :class:`StorageError` naming the file (the old one stays whole)."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:  # the old file is untouched: only the temporary copy is lost
        _discard(tmp)
        raise StorageError(path, path.name, exc) from None
