"""What kind of file ``--bench PATH`` names, told from its first line alone: every question file run is
asked this before it is read, so it reads 64 KB at most (an arena battles file may hold gigabytes) and
imports none of the arena machinery."""

from __future__ import annotations

import json
from pathlib import Path

HEAD_BYTES = 65536
"""How much of a file is read to tell its kind: its first record must fit."""


def looks_like_arena_file(path: Path) -> bool:
    """Whether ``path`` is an arena battles file rather than a question file (parquet, or JSONL whose
    first record has both conversations)."""
    if not path.is_file():
        return False
    if path.suffix == ".parquet":
        return True
    if not (path.name.endswith(".jsonl") or path.name.endswith(".jsonl.gz")):
        return False
    try:
        if path.name.endswith(".gz"):
            import gzip

            with gzip.open(path, "rb") as fh:
                head = fh.read(HEAD_BYTES)
        else:
            with open(path, "rb") as fh:
                head = fh.read(HEAD_BYTES)
        record = json.loads(head.split(b"\n", 1)[0])
    except (OSError, EOFError, ValueError):
        return False
    return isinstance(record, dict) and "conversation_a" in record and "model_a" in record


__all__ = ["looks_like_arena_file"]
