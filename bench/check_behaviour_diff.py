"""Every difference between two run directories or two printed outputs, as (file, where, old, new).

JSON files are compared by value, key by key; JSON lines line by line (and, when only their order differs,
said so once); parquet row by row; any other file as text lines. Equal bytes end the comparison; bytes
that differ with equal values are reported too (one line: the formatting or key order changed).
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MISSING = "<absent>"
_SHOWN = 300
"""Characters of a value printed before it is cut (its length said)."""


@dataclass(frozen=True)
class Difference:
    file: str
    where: str
    old: Any
    new: Any

    def __str__(self) -> str:
        return f"{self.file} {self.where}: old {_show(self.old)} | new {_show(self.new)}"


def _show(value: Any) -> str:
    text = value if value is MISSING else json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}…({len(text)} chars)"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def diff_values(old: Any, new: Any, where: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(path, old, new) for every leaf that differs; ``1`` and ``1.0`` differ (JSON writes them apart)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            path = f"{where}.{key}" if where else str(key)
            if key not in new:
                yield path, old[key], MISSING
            elif key not in old:
                yield path, MISSING, new[key]
            else:
                yield from diff_values(old[key], new[key], path)
    elif isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            path = f"{where}[{i}]"
            if i >= len(new):
                yield path, old[i], MISSING
            elif i >= len(old):
                yield path, MISSING, new[i]
            else:
                yield from diff_values(old[i], new[i], path)
    elif not _same(old, new):
        yield where or "(whole value)", old, new


def compare_json_text(old: str, new: str, file: str) -> list[Difference]:
    """By value when both are JSON, else as text lines."""
    try:
        a, b = json.loads(old), json.loads(new)
    except ValueError:
        return compare_text(old, new, file)
    return [Difference(file, where, x, y) for where, x, y in diff_values(a, b)]


def compare_text(old: str, new: str, file: str) -> list[Difference]:
    """Lines removed and added, as a unified diff's hunks (each hunk one difference)."""
    if old == new:
        return []
    found = []
    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            where = f"lines {i1 + 1}-{i2} (old) / {j1 + 1}-{j2} (new)"
            found.append(Difference(file, where, "\n".join(a[i1:i2]), "\n".join(b[j1:j2])))
    if not found:  # the same lines, other line endings or final newline
        found.append(Difference(file, "bytes (same lines)", old[-20:], new[-20:]))
    return found


def _jsonl(old: bytes, new: bytes, file: str) -> list[Difference]:
    """Lines aligned as a diff aligns them: a changed line key by key, a line only one side has whole."""
    a, b = old.decode().splitlines(), new.decode().splitlines()
    if sorted(a) == sorted(b):
        return [Difference(file, "line order", f"{len(a)} lines", "the same lines in another order")]
    found = [Difference(file, "line count", len(a), len(b))] if len(a) != len(b) else []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 - i1 == j2 - j1:
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                rows = diff_values(json.loads(a[i]), json.loads(b[j]))
                found += [Difference(file, f"line {i + 1} {w}", x, y) for w, x, y in rows]
            continue
        found += [
            Difference(file, f"line {i + 1} (old only)", json.loads(a[i]), MISSING) for i in range(i1, i2)
        ]
        found += [
            Difference(file, f"line {j + 1} (new only)", MISSING, json.loads(b[j])) for j in range(j1, j2)
        ]
    return found


def _parquet(old: Path, new: Path, file: str) -> list[Difference]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return [Difference(file, "bytes (pyarrow absent: rows not compared)", "", "")]
    a, b = pq.read_table(old), pq.read_table(new)
    found = []
    if a.schema != b.schema:
        found.append(Difference(file, "schema", str(a.schema), str(b.schema)))
    rows = diff_values(a.to_pylist(), b.to_pylist(), "rows")
    return found + [Difference(file, where, x, y) for where, x, y in rows]


def compare_files(old: Path, new: Path, file: str) -> list[Difference]:
    a, b = old.read_bytes(), new.read_bytes()
    if a == b:
        return []
    name = old.name
    if name.endswith(".parquet"):
        found = _parquet(old, new, file)
    elif name.endswith(".jsonl"):
        found = _jsonl(a, b, file)
    elif name.endswith(".json"):
        found = compare_json_text(a.decode(), b.decode(), file)
    else:
        try:
            found = compare_text(a.decode(), b.decode(), file)
        except UnicodeDecodeError:
            found = [Difference(file, "bytes", f"{len(a)} bytes", f"{len(b)} bytes")]
    return found or [Difference(file, "bytes (values equal: formatting or key order)", len(a), len(b))]


def files_of(root: Path, skip: tuple[str, ...] = ()) -> set[str]:
    """The files under ``root`` (relative names), those under a ``skip`` folder (at any depth) left out."""
    names = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    return {n for n in names if not any(f"/{folder}" in f"/{n}" for folder in skip)}


def compare_trees(
    old: Path, new: Path, prefix: str, skip: tuple[str, ...] = (), own: dict[str, Path] | None = None
) -> Iterator[Difference]:
    """Every file of ``old`` against its namesake in ``new``, and the files only one of them has; files
    under a ``skip`` folder are not compared; a file named in ``own`` is compared with that file instead."""
    a, b = files_of(old, skip), files_of(new, skip)
    for name in sorted(a | b):
        if own and name in own and name in b:
            yield from compare_files(own[name], new / name, prefix + name)
            continue
        if name not in b:
            yield Difference(prefix + name, "file", "present", MISSING)
        elif name not in a:
            yield Difference(prefix + name, "file", MISSING, "present (written by the re-run)")
        else:
            yield from compare_files(old / name, new / name, prefix + name)
