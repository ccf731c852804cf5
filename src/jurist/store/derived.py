"""Files derived from a run's own files, kept so that a re-run need not derive them again.

A run directory's ``.derived/`` holds the index of each answers and judgments file (the keys and where
their lines lie) and what the last scoring was computed from. Re-deriving them is what a finished
50k-question run spent its re-run on (parsing 150k records to learn keys, rescoring 100k battles: 6.9 s).
Each is checked against the file it came from before it is used, and anything that does not match is
derived again, so deleting ``.derived/`` is always safe.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DERIVED = ".derived"
_WINDOW = 1 << 16


@dataclass(frozen=True)
class FileState:
    """What identifies the first ``size`` bytes of a file without reading it all: its inode (a file
    rewritten and renamed over the old one is a new inode), the size, the modification time when the
    file was exactly that long, and a hash of the first and last 64 KiB of those bytes."""

    inode: int
    size: int
    mtime_ns: int | None
    digest: str

    @classmethod
    def of(cls, path: Path, size: int | None = None) -> FileState | None:
        """The state of ``path``'s first ``size`` bytes (default: all of it); None when it is missing."""
        try:
            stat = path.stat()
            end = stat.st_size if size is None else size
            digest = _digest(path, end)
        except OSError:
            return None
        return cls(stat.st_ino, end, stat.st_mtime_ns if end == stat.st_size else None, digest)

    def same(self, path: Path) -> bool:
        """``path`` is exactly as recorded: nothing appended, nothing rewritten."""
        return self.prefix_of(path) and path.stat().st_size == self.size

    def prefix_of(self, path: Path) -> bool:
        """``path`` still starts with the recorded bytes; lines may have been appended since (the only
        way jurist changes a JSONL file in place)."""
        try:
            stat = path.stat()
            if stat.st_ino != self.inode or stat.st_size < self.size:
                return False
            if stat.st_size == self.size and self.mtime_ns is not None and stat.st_mtime_ns != self.mtime_ns:
                return False  # rewritten in place to the same length
            return _digest(path, self.size) == self.digest
        except OSError:
            return False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> FileState | None:
        try:
            mtime = data["mtime_ns"]
            return cls(
                int(data["inode"]),
                int(data["size"]),
                None if mtime is None else int(mtime),
                str(data["digest"]),
            )
        except (KeyError, TypeError, ValueError):
            return None


def _digest(path: Path, size: int) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        if size <= 2 * _WINDOW:
            digest.update(fh.read(size))
        else:
            digest.update(fh.read(_WINDOW))
            fh.seek(size - _WINDOW)
            digest.update(fh.read(_WINDOW))
    return digest.hexdigest()


def write_derived(path: Path, header: dict[str, Any], body: Any, payload: bytes = b"") -> None:
    """Write a derived file: a JSON header line, a JSON line of ``body``, then ``payload``; written beside
    it and renamed, so a reader sees the old file or the new one. A failed write only costs a re-derive
    next time: it is logged, never raised."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as out:
            out.write(json.dumps(header).encode() + b"\n")
            out.write(json.dumps(body, ensure_ascii=False).encode() + b"\n")
            out.write(payload)
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError) as exc:  # a full disk, or a value JSON cannot hold
        log.debug("%s: not written (%s); it is derived again next run", path, exc)
        tmp.unlink(missing_ok=True)


def read_derived(path: Path, kind: str) -> tuple[dict[str, Any], Any, bytes] | None:
    """(header, body, payload) of a derived file written for ``kind``; None when missing, of another kind
    or format, or unreadable (then it is derived again)."""
    try:
        data = path.read_bytes()
        first = data.index(b"\n")
        second = data.index(b"\n", first + 1)
        header = json.loads(data[:first])
        if not isinstance(header, dict) or header.get("kind") != kind:
            return None
        return header, json.loads(data[first + 1 : second]), data[second + 1 :]
    except (OSError, ValueError):
        return None
