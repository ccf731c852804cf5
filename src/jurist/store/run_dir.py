"""The run directory: where every artifact of a run lives, and how existing ones are read back."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import re
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurist import __version__
from jurist.errors import InputError, JuristError
from jurist.store.jsonl import iter_numbered_jsonl, write_json_atomic
from jurist.store.line_index import AnswerIndex, JudgmentIndex, normalized_answer
from jurist.store.lock import is_held
from jurist.store.records import SCHEMA_VERSION, AnswerRecord, RunJson, judgment_kind

log = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9._\-]+")
_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_HEX = "0123456789ABCDEF"

MAX_STEM_BYTES = 200
"""Longest stem written: under the 255-byte name limit with room for ``.jsonl`` and temp suffixes."""
_HASHED = "%%"
"""Marks a truncated stem (``<prefix>%%<16 hex of sha256(alias)>``); plain encoding never yields ``%%``."""
_EMPTY = "%%"
"""The stem of the empty alias: ``%%`` with nothing after it cannot be a plain or a truncated stem."""
NAMES_FILE = "names.json"
CRASHED = "crashed"
"""The status of a run whose run.json says ``running`` but whose process is gone (its lock is free)."""


def file_stem(alias: str) -> str:
    """A model or judge alias as a file name: injective, reversible, safe on every filesystem we write to.

    Bytes in ``[A-Za-z0-9._-]`` stay as they are; every other UTF-8 byte, ``%`` included, becomes ``%XX``
    (upper-case hex), and so does a leading ``.``, so no name is hidden, ``.`` or ``..`` and none holds a
    separator: ``a/b`` -> ``a%2Fb``, ``my model`` -> ``my%20model``, ``a__b`` -> ``a__b``, ``..`` ->
    ``%2E.``. :func:`alias_from_stem` inverts it.

    An encoding longer than :data:`MAX_STEM_BYTES` is cut at a whole ``%XX`` and ends with ``%%`` plus the
    first 16 hex digits of sha256 of the full alias. Two such names coincide only if the aliases share the
    prefix *and* 64 bits of hash, so it is injective in practice, not in principle; those names are not
    reversible by themselves, so :meth:`RunDir.answers`/:meth:`RunDir.judgments` record them in
    ``RUN/names.json``. The result is ASCII, so characters are bytes.
    """
    if not alias:
        return _EMPTY
    parts: list[str] = []
    for index, byte in enumerate(alias.encode("utf-8", "surrogatepass")):
        if byte in _SAFE and not (index == 0 and byte == ord(".")):
            parts.append(chr(byte))
        else:
            parts.append("%" + _HEX[byte >> 4] + _HEX[byte & 15])
    stem = "".join(parts)
    if len(stem) <= MAX_STEM_BYTES:
        return stem
    digest = hashlib.sha256(alias.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    budget, size, kept = MAX_STEM_BYTES - len(_HASHED) - len(digest), 0, []
    for part in parts:
        if size + len(part) > budget:
            break
        kept.append(part)
        size += len(part)
    return "".join(kept) + _HASHED + digest


def is_hashed_stem(stem: str) -> bool:
    """Whether ``stem`` is a truncated long name (``...%%<hash>``), readable only through ``names.json``."""
    return stem != _EMPTY and _HASHED in stem


def alias_from_stem(stem: str) -> str:
    """The alias :func:`file_stem` turned into ``stem``; ``ValueError`` for a truncated or foreign name.

    Strict, so that ``file_stem(alias_from_stem(s)) == s`` for every accepted ``s``: lower-case hex, an
    encoded byte that needed no encoding, or a bare leading ``.`` are rejected. A legacy name (``org__model``)
    decodes as itself; which alias wrote it is not recoverable from the name alone.
    """
    if stem == _EMPTY:
        return ""
    if _HASHED in stem:
        raise ValueError(f"{stem!r} is a truncated long name; look it up in {NAMES_FILE}")
    out = bytearray()
    index = 0
    while index < len(stem):
        char = stem[index]
        if char == "%":
            pair = stem[index + 1 : index + 3]
            if len(pair) != 2 or any(c not in _HEX for c in pair):
                raise ValueError(f"{stem!r}: bad escape at {index}")
            byte = int(pair, 16)
            if byte in _SAFE and not (index == 0 and byte == ord(".")):
                raise ValueError(f"{stem!r}: needless escape at {index}")
            out.append(byte)
            index += 3
            continue
        if ord(char) > 127 or ord(char) not in _SAFE or (index == 0 and char == "."):
            raise ValueError(f"{stem!r}: character {char!r} at {index} is never written unescaped")
        out.append(ord(char))
        index += 1
    try:
        return out.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{stem!r}: not UTF-8 ({exc})") from None


PLAIN_MAX_BYTES = 255 - len(".jsonl")
"""Longest plain name that fits the filesystem (the 255-byte name limit, less ``.jsonl``)."""


def plain_stem(alias: str) -> str:
    """Arena-Hard's own file names (``org/model`` -> ``org__model``, other unsafe runs -> ``_``): lossy,
    so only for folders in Arena-Hard's layout (:mod:`jurist.interop.arena_hard_export`); a run directory
    names its files with :func:`file_stem`.

    A name too long for the filesystem is cut and ends with ``-`` and 16 hex digits of sha256 of the
    alias instead of failing with ``File name too long``; every name that fits is unchanged. ASCII."""
    stem = _UNSAFE.sub("_", alias.replace("/", "__")) or "_"
    if len(stem) <= PLAIN_MAX_BYTES:
        return stem
    digest = hashlib.sha256(alias.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{stem[: MAX_STEM_BYTES - len(digest) - 1]}-{digest}"


class RunDir:
    """Paths of one run: ``answers/``, ``judgments/<judge>/``, ``battles.jsonl``, ``leaderboard.json``..."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def answers(self, model: str) -> Path:
        """``answers/<model>.jsonl``."""
        self._remember(model)
        return self._inside(self.root / "answers" / f"{file_stem(model)}.jsonl")

    def judgments(self, judge: str, model: str) -> Path:
        """``judgments/<judge>/<model>.jsonl``."""
        self._remember(judge)
        self._remember(model)
        return self._inside(self.root / "judgments" / file_stem(judge) / f"{file_stem(model)}.jsonl")

    def points(self, model: str) -> Path:
        """``points/<model>.jsonl``: per-answer scores (rule checks), rewritten whole by each run."""
        self._remember(model)
        return self._inside(self.root / "points" / f"{file_stem(model)}.jsonl")

    def _inside(self, path: Path) -> Path:
        """``path``, which :func:`file_stem` keeps inside the run directory (checked, never expected)."""
        inside = os.path.normpath(self.root.absolute())
        if os.path.commonpath([inside, os.path.normpath(path.absolute())]) != inside:
            raise ValueError(f"{path} is outside the run directory {self.root}")  # cannot happen
        return path

    def _remember(self, alias: str) -> None:
        """Record a truncated long name in ``names.json`` so readers can map the file back to its alias.

        Only when the run directory exists (a run creates it before writing): a reader looking at a
        missing directory must not create one. Failing to write (read-only copy) is logged, not raised.
        """
        stem = file_stem(alias)
        if not is_hashed_stem(stem) or not self.root.is_dir():
            return
        names = self.names()
        if names.get(alias) == stem:
            return
        names[alias] = stem
        path, tmp = self.root / NAMES_FILE, self.root / f"{NAMES_FILE}.{os.getpid()}.tmp"
        try:  # ASCII escapes: an alias from argv may hold lone surrogates, which UTF-8 cannot write
            tmp.write_text(json.dumps(dict(sorted(names.items())), indent=2) + "\n", encoding="ascii")
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            log.warning("%s: could not record the file name of a long alias: %s", self.root, exc)

    def names(self) -> dict[str, str]:
        """alias -> file stem of every truncated long name in this run (``names.json``; empty if none)."""
        path = self.root / NAMES_FILE
        if not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(path, "", f"not a JSON object of alias -> file name ({exc})") from None
        if not isinstance(data, dict):
            raise InputError(path, "", "not a JSON object of alias -> file name")
        return {str(alias): str(stem) for alias, stem in data.items()}

    def alias_of(self, stem: str) -> str:
        """The alias whose files are named ``stem`` (the inverse of the naming, long names included)."""
        if is_hashed_stem(stem):
            for alias, known in self.names().items():
                if known == stem:
                    return alias
        return alias_from_stem(stem)

    @property
    def battles(self) -> Path:
        return self.root / "battles.jsonl"

    @property
    def leaderboard(self) -> Path:
        return self.root / "leaderboard.json"

    @property
    def run_json(self) -> Path:
        return self.root / "run.json"

    @property
    def failures(self) -> Path:
        return self.root / "failures.jsonl"

    @property
    def partial_games(self) -> Path:
        """Games kept from judgments whose other game failed (see stages.PartialGames)."""
        return self.root / "partial_games.jsonl"

    def load_answers(self, model: str) -> dict[tuple[str, int], AnswerRecord]:
        """(uid, sample) -> answer record; the last line for a key wins, so a regenerated answer replaces
        the old. Schema-1 lines (no kind, no sample) and Arena-Hard's answer shapes read as sample 0."""
        path = self.answers(model)
        answers: dict[tuple[str, int], AnswerRecord] = {}
        for line, record in iter_numbered_jsonl(path):
            answer = normalized_answer(path, line, record)
            answers[(answer["uid"], answer["sample"])] = answer
        return answers

    def answer_index(self, model: str, shipped: Mapping[str, str] | None = None) -> AnswerIndex:
        """Where each answer of ``model`` lies (read back one at a time), ``shipped`` texts filling gaps."""
        return AnswerIndex(self.answers(model), shipped)

    def judgment_index(self, judge: str, model: str) -> JudgmentIndex:
        """Where each judgment of ``judge`` on ``model`` lies, by key (the last line for a key wins)."""
        return JudgmentIndex(self.judgments(judge, model))

    def load_judgments(self, judge: str, model: str) -> dict[str, dict[str, Any]]:
        """key -> judgment record (the last line for a key wins, e.g. after ``--rejudge-invalid``)."""
        judgments: dict[str, dict[str, Any]] = {}
        path = self.judgments(judge, model)
        for line, record in iter_numbered_jsonl(path):
            if "key" not in record:
                raise InputError(path, f"line {line}", "field 'key' is missing")
            judgment_kind(record, path, line)
            record.setdefault("sample", 0)
            judgments[record["key"]] = record
        return judgments

    def keep_file(self, source: Path, folder: str) -> str:
        """Copy ``source`` into ``folder/`` under its content hash (once); returns the path kept, relative."""
        data = source.read_bytes()
        kept = self.root / folder / f"{hashlib.sha256(data).hexdigest()[:16]}{source.suffix}"
        if not kept.exists():
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(data)
        return str(kept.relative_to(self.root))

    def recorded_status(self, *, holding_lock: bool = False) -> tuple[str | None, str | None]:
        """(status, run id) as run.json records them, the status told truthfully: a run.json that says
        ``running`` while no process holds the directory's lock was left by a run that died (kill -9,
        a full disk, a power cut), so it reads ``crashed``. ``holding_lock``: the caller holds the lock
        (a run starting), so a ``running`` there is an earlier run's that died. (None, None) without a
        readable run.json."""
        data = self.read_run_json()
        if data is None:
            return None, None
        status = data.get("status") if isinstance(data.get("status"), str) else None
        run_id = data.get("run_id") if isinstance(data.get("run_id"), str) else None
        if status == "running" and (holding_lock or is_held(self.root) is False):
            status = CRASHED
        return status, run_id

    def read_run_json(self) -> RunJson | None:
        """run.json as written; None when there is none or it is not a JSON object (a torn write)."""
        try:
            data = json.loads(self.run_json.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None  # type: ignore[return-value]

    def refuse_older_layout(self) -> None:
        """A :class:`JuristError` (one line) when run.json says an older jurist wrote the directory in a
        layout this one does not read (a schema before :data:`SCHEMA_VERSION`; schema 1 wrote none): its
        files would be read wrong or not at all, so it is never resumed nor rewritten in place."""
        data = self.read_run_json()
        if data is None:
            return  # no run.json (a new directory), or a torn one: the reader that needs it says so
        schema = data.get("schema_version", 1)
        if isinstance(schema, int) and not isinstance(schema, bool) and schema >= SCHEMA_VERSION:
            return
        version = data.get("jurist_version") or "an unknown version"
        raise JuristError(
            f"{self.run_json}: written by jurist {version} in an older run-directory layout (schema "
            f"{schema}; this jurist reads schema {SCHEMA_VERSION}): run it again into a new directory"
        )

    def write_run_json(self, run_id: str, status: str, fields: Mapping[str, Any]) -> RunJson:
        """run.json, always through here: schema version, who ran it, how far it got, then ``fields``.
        Returns the document as a reader reads it back (JSON's lists for tuples), so the run that wrote
        it need not read it again."""
        header = {
            "schema_version": SCHEMA_VERSION,
            "run_id": run_id,
            "status": status,
            "jurist_version": __version__,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
        }
        document = {**header, **fields, "updated": time.time()}
        write_json_atomic(self.run_json, document)
        read_back: RunJson = json.loads(json.dumps(document))
        return read_back
