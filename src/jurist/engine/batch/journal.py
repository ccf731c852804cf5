"""``batches.jsonl``: every batch a run submitted, recorded before it is polled, so a run started again
after a crash (kill -9, Ctrl-C, a machine restart) polls the batches already submitted instead of
submitting their requests again.

Each line is appended whole in one ``write`` and fsynced before the run goes on: ``submitting`` (what
a batch is made from, such as OpenAI's uploaded input file, before it is created), ``submitted``
(provider, model, batch id, its custom ids, when), ``status`` (each change the provider reports while
it is polled), ``not_submitted`` (a ``submitting`` that a later run found was never created) and
``ended`` (the batch's last status, which custom ids it answered, which it did not: what bounds a
request's batches over every run, ``--batch-attempts``). A custom id is the request's cache key
(:func:`~jurist.engine.cache.store.request_key`), so the same request in the next run has the same id. A torn
last line (a write cut by a crash) is skipped: a ``submitted`` line that did not reach the disk is a batch
this run never saw, as if its creation had failed.

The journal is read strictly (:mod:`~jurist.engine.batch.journal_check`): it is the only record of which
batches this directory has at the provider, so a journal that cannot be read — a line of wrong types,
random bytes, an emptied file, a directory in its place — is a one-line refusal naming the file, the line
and the field, never read as "no batches" (which would submit every open batch's requests again). Its
first line is a header (``{"event": "journal", ...}``), so an emptied or cut journal is told from a fresh
one; a journal from before the header starts with a batch record and is read as before.
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

from jurist.engine.batch.journal_check import JournalUnreadable, check_record, read_lines
from jurist.errors import StorageError

JOURNAL_FILE = "batches.jsonl"
JOURNAL_VERSION = 1


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
    phases: dict[str, str] = field(default_factory=dict)  # custom id -> the ledger phase it was asked in
    usage: dict[str, Any] = field(default_factory=dict)  # answered custom id -> its billed usage


class BatchJournal:
    """The run directory's ``batches.jsonl``: read once when opened, appended to as batches go."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.batches: dict[str, JournaledBatch] = {}
        self.submissions: Counter[str] = Counter()  # custom id -> batches it was sent in (every run)
        self.unanswered: Counter[str] = Counter()  # custom id -> ended batches that did not answer it
        self.intents: dict[str, dict[str, Any]] = {}  # "submitting" records no later line settled
        self.versioned = False  # begun with a header: its batch lines' bills are keyed (billing.py)
        self._read()

    def _read(self) -> None:
        """Every line applied in order; a line that is no journal record is a :class:`JournalUnreadable`
        naming it (a torn last line, cut by a crash mid-write, is skipped)."""
        for number, record in read_lines(self.path):
            check_record(self.path, number, record)
            self._apply(record)

    def _apply(self, record: dict[str, Any]) -> None:
        event, batch_id = record.get("event"), str(record.get("batch_id"))
        intent = record.get("intent")
        if event == "journal":
            self.versioned = True
        if event == "submitting" and isinstance(intent, str):
            self.intents[intent] = record
        elif event == "not_submitted" and isinstance(intent, str):
            self.intents.pop(intent, None)
        if event == "submitted":
            if isinstance(intent, str):
                self.intents.pop(intent, None)
            ids = [str(i) for i in record.get("custom_ids") or []]
            phases = record.get("phases")
            self.batches[batch_id] = JournaledBatch(
                str(record.get("provider")),
                str(record.get("model")),
                batch_id,
                ids,
                float(record.get("at") or 0.0),
                phases=dict(zip(ids, phases, strict=False)) if isinstance(phases, list) else {},
            )
            self.submissions.update(ids)
        elif event == "status" and batch_id in self.batches:
            self.batches[batch_id].status = str(record.get("status"))
        elif event == "ended" and batch_id in self.batches:
            batch = self.batches[batch_id]
            batch.ended, batch.status = True, str(record.get("status"))
            batch.answered = {str(i) for i in record.get("answered") or []}
            usage = record.get("usage")
            batch.usage = dict(usage) if isinstance(usage, dict) else {}
            self.unanswered.update(i for i in batch.custom_ids if i not in batch.answered)

    def _append(self, record: dict[str, Any]) -> None:
        """One line, whole and fsynced (the header first, when the file is new). A write the disk refuses
        is a :class:`~jurist.errors.StorageError`: what reached the disk before stays valid."""
        line = json.dumps(record, ensure_ascii=False).encode() + b"\n"
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    if os.fstat(fd).st_size == 0:
                        header = {"event": "journal", "version": JOURNAL_VERSION, "at": round(time.time(), 3)}
                        line = json.dumps(header).encode() + b"\n" + line
                    _write_all(fd, line)
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError as exc:
                raise StorageError(self.path, "the batch journal", exc) from None
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

    def ended(
        self,
        batch_id: str,
        status: str,
        answered: list[str],
        not_answered: dict[str, str],
        *,
        usage: dict[str, list[int | None]] | None = None,
    ) -> None:
        """A batch that ended, once its answers are in the request cache; ``usage``: what each answered
        line was billed (so a run killed before booking it books it next time)."""
        self._append(
            {
                "event": "ended",
                "batch_id": batch_id,
                "status": status,
                "at": round(time.time(), 3),
                "answered": answered,
                "not_answered": not_answered,
                **({"usage": usage} if usage is not None else {}),
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


def _write_all(fd: int, data: bytes) -> None:
    """``data`` written whole (a short write, as on a nearly full disk, goes on from where it stopped)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


__all__ = ["JOURNAL_FILE", "BatchJournal", "JournalUnreadable", "JournaledBatch"]
