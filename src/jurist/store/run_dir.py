"""The run directory: where every artifact of a run lives, and how existing ones are read back."""

from __future__ import annotations

import hashlib
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

from jurist import __version__
from jurist.errors import InputError
from jurist.store.jsonl import iter_numbered_jsonl, write_json_atomic
from jurist.store.records import SCHEMA_VERSION, AnswerRecord, judgment_kind, sample_of

_UNSAFE = re.compile(r"[^A-Za-z0-9._\-]+")


def file_stem(alias: str) -> str:
    """A model alias as a file name (``org/model`` -> ``org__model``)."""
    return _UNSAFE.sub("_", alias.replace("/", "__")) or "_"


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


class RunDir:
    """Paths of one run: ``answers/``, ``judgments/<judge>/``, ``battles.jsonl``, ``leaderboard.json``..."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def answers(self, model: str) -> Path:
        return self.root / "answers" / f"{file_stem(model)}.jsonl"

    def judgments(self, judge: str, model: str) -> Path:
        return self.root / "judgments" / file_stem(judge) / f"{file_stem(model)}.jsonl"

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

    def load_answers(self, model: str) -> dict[tuple[str, int], AnswerRecord]:
        """(uid, sample) -> answer record; the last line for a key wins, so a regenerated answer replaces
        the old. Schema-1 lines (no kind, no sample) and Arena-Hard's answer shapes read as sample 0."""
        path = self.answers(model)
        answers: dict[tuple[str, int], AnswerRecord] = {}
        for line, record in iter_numbered_jsonl(path):
            uid = record.get("uid", record.get("question_id"))
            text = answer_text(record)
            if uid is None:
                raise InputError(path, f"line {line}", "field 'uid' is missing")
            if text is None:
                raise InputError(path, f"line {line}", "no answer text (field 'answer')")
            sample = sample_of(record)
            record.update(kind="answer", uid=str(uid), sample=sample, answer=text)
            answers[(str(uid), sample)] = record  # type: ignore[assignment]
        return answers

    def load_judgments(self, judge: str, model: str) -> dict[str, dict[str, Any]]:
        """key -> judgment record (the last line for a key wins, e.g. after ``--rejudge-invalid``)."""
        judgments: dict[str, dict[str, Any]] = {}
        path = self.judgments(judge, model)
        for line, record in iter_numbered_jsonl(path):
            if "key" not in record:
                raise InputError(path, f"line {line}", "field 'key' is missing")
            record["kind"] = judgment_kind(record)
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

    def write_run_json(self, run_id: str, status: str, fields: dict[str, Any]) -> None:
        """run.json, always through here: schema version, who ran it, how far it got, then ``fields``."""
        header = {
            "schema_version": SCHEMA_VERSION,
            "run_id": run_id,
            "status": status,
            "jurist_version": __version__,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
        }
        write_json_atomic(self.run_json, {**header, **fields, "updated": time.time()})
