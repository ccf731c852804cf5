"""``batches.jsonl``: every batch a run submitted, recorded before it is polled, so a run started again
after a crash (kill -9, Ctrl-C, a machine restart) polls the batches already submitted instead of
submitting their requests again.

Each line is appended whole in one ``write`` and fsynced before the run goes on: ``submitting`` (what
a batch is made from, such as OpenAI's uploaded input file, before it is created), ``submitted``
(provider, model, batch id, its custom ids, when), ``status`` (each change the provider reports while
it is polled), ``not_submitted`` (a ``submitting`` that a later run found was never created) and
``ended`` (the batch's last status, which custom ids it answered, which it did not: what bounds a
request's batches over every run, ``--batch-attempts``). A custom id is the request's cache key
(:func:`~jurist.engine.cache.request_key`), so the same request in the next run has the same id. A torn
last line (a write cut by a crash) is skipped: a ``submitted`` line that did not reach the disk is a batch
this run never saw, as if its creation had failed.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JOURNAL_FILE = "batches.jsonl"


@dataclass
class JournaledBatch:
    """One submitted batch as the journal knows it."""

    provider: str
    model: str
    batch_id: str
    custom_ids: list[str]
    submitted_at: float
    status: str = "submitted"
    ended: bool = False
    answered: set[str] = field(default_factory=set)


class BatchJournal:
    """The run directory's ``batches.jsonl``: read once when opened, appended to as batches go."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.batches: dict[str, JournaledBatch] = {}
        self.submissions: Counter[str] = Counter()  # custom id -> batches it was sent in (every run)
        self.unanswered: Counter[str] = Counter()  # custom id -> ended batches that did not answer it
        self.intents: dict[str, dict[str, Any]] = {}  # "submitting" records no later line settled
        self._read()

    def _read(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        for raw in data.splitlines():
            try:
                record = json.loads(raw)
            except ValueError:
                continue  # a torn last line, or not ours
            if isinstance(record, dict):
                self._apply(record)

    def _apply(self, record: dict[str, Any]) -> None:
        event, batch_id = record.get("event"), str(record.get("batch_id"))
        intent = record.get("intent")
        if event == "submitting" and isinstance(intent, str):
            self.intents[intent] = record
        elif event == "not_submitted" and isinstance(intent, str):
            self.intents.pop(intent, None)
        if event == "submitted":
            if isinstance(intent, str):
                self.intents.pop(intent, None)
            ids = [str(i) for i in record.get("custom_ids") or []]
            self.batches[batch_id] = JournaledBatch(
                str(record.get("provider")),
                str(record.get("model")),
                batch_id,
                ids,
                float(record.get("at") or 0.0),
            )
            self.submissions.update(ids)
        elif event == "status" and batch_id in self.batches:
            self.batches[batch_id].status = str(record.get("status"))
        elif event == "ended" and batch_id in self.batches:
            batch = self.batches[batch_id]
            batch.ended, batch.status = True, str(record.get("status"))
            batch.answered = {str(i) for i in record.get("answered") or []}
            self.unanswered.update(i for i in batch.custom_ids if i not in batch.answered)

    def _append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False).encode() + b"\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
            self._apply(record)

    def submitting(self, provider: str, model: str, intent: str, custom_ids: list[str], **extra: Any) -> None:
        """A batch about to be created from what ``extra`` names (an uploaded file): a run that dies before
        the batch's id is on disk asks the provider for it by this (:meth:`intents_of`)."""
        record = {"event": "submitting", "provider": provider, "model": model, "intent": intent}
        self._append({**record, "at": round(time.time(), 3), "custom_ids": custom_ids, **extra})

    def not_submitted(self, intent: str) -> None:
        """A ``submitting`` the provider has no batch of: its requests are asked again."""
        self._append({"event": "not_submitted", "intent": intent, "at": round(time.time(), 3)})

    def intents_of(self, provider: str, model: str) -> list[dict[str, Any]]:
        """``submitting`` records of ``model`` that no ``submitted`` or ``not_submitted`` settled."""
        return [r for r in self.intents.values() if r.get("provider") == provider and r.get("model") == model]

    def submitted(
        self, provider: str, model: str, batch_id: str, custom_ids: list[str], **extra: Any
    ) -> None:
        """A batch the provider accepted: on disk before the first poll."""
        self._append(
            {
                "event": "submitted",
                "provider": provider,
                "model": model,
                "batch_id": batch_id,
                "at": round(time.time(), 3),
                "requests": len(custom_ids),
                "custom_ids": custom_ids,
                **extra,
            }
        )

    def status(self, batch_id: str, status: str) -> None:
        """A batch's status as the provider now says it (written when it changes: the batch's history)."""
        self._append({"event": "status", "batch_id": batch_id, "status": status, "at": round(time.time(), 3)})

    def ended(self, batch_id: str, status: str, answered: list[str], not_answered: dict[str, str]) -> None:
        """A batch that ended, once its answers are in the request cache."""
        self._append(
            {
                "event": "ended",
                "batch_id": batch_id,
                "status": status,
                "at": round(time.time(), 3),
                "answered": answered,
                "not_answered": not_answered,
            }
        )

    def open_batches(self, provider: str, model: str) -> list[JournaledBatch]:
        """Batches of ``model`` submitted and not yet seen to end (by any run)."""
        return [
            b for b in self.batches.values() if not b.ended and b.provider == provider and b.model == model
        ]

    def answered_in(self, provider: str, model: str) -> dict[str, str]:
        """custom id -> the ended batch of ``model`` that answered it (its results can be read again)."""
        found: dict[str, str] = {}
        for batch in self.batches.values():
            if batch.ended and batch.provider == provider and batch.model == model:
                found.update(dict.fromkeys(batch.answered, batch.batch_id))
        return found
