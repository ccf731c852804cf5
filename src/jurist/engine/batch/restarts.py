"""What a run started again finds of an earlier run's batches, and settles before it submits anything.

A batch an earlier run began to submit and died before its id was journaled is looked for at the provider
(:meth:`Restarts._settle_intent`); the bills of lines an earlier run was answered and did not book are
booked, and its batches still open are looked at once (:meth:`Restarts._reconcile`); batches the journal
does not know at all (a journal lost or cut) are found by the run directory's mark in their metadata
(:meth:`Restarts._recover`). :class:`~jurist.engine.batch.dispatcher.BatchDispatcher` builds on this
with the batches of this run, and says how a request is routed, a batch followed and a task started.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from jurist.engine.batch.billing import BatchStopped, billed_line, line_key, stopped_message
from jurist.engine.batch.outcomes import LineOutcomes
from jurist.engine.batch.polling import WIRE_TRIES
from jurist.engine.batch.wire import BatchWire, BatchWireError

log = logging.getLogger("jurist.engine.batch")

WIRE_BACKOFF_S = (1.0, 60.0)
"""The first and the longest wait between tries of a call to the provider's batch API."""
_INTENT_FIELDS = ("event", "provider", "model", "intent", "at", "custom_ids")
T = TypeVar("T")


class Restarts(LineOutcomes):
    """The part of a model's batch dispatcher that takes over from an earlier run of the directory."""

    _wire: BatchWire
    _tag: str
    _recovery: asyncio.Task[None] | None
    _reconciled: bool
    _resumed: set[str]
    _looking: set[asyncio.Task[None]]
    _open_in: dict[str, str]
    _submitted_at: dict[str, float]
    _intent_of: dict[str, dict[str, Any]]
    _polls: dict[str, asyncio.Task[None]]

    @property
    def provider(self) -> str:
        return self._wire.provider

    def _spawn(
        self, work: Coroutine[Any, Any, None], ids: list[str], what: str = "a batch"
    ) -> asyncio.Task[None]:
        """Run ``work`` as a task whose failures reach the requests ``ids`` (the dispatcher's)."""
        raise NotImplementedError

    def _route(self, custom_id: str) -> None:
        """Send a waiting request where its line now belongs (the dispatcher's)."""
        raise NotImplementedError

    async def _follow(self, batch_id: str, paid: bool, *, look: bool = False) -> None:
        """Poll a batch until it ends and hand its results out (the dispatcher's)."""
        raise NotImplementedError

    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``, tried again with backoff on a failure that may pass (not a 4xx other than 429)."""
        for attempt in range(1, WIRE_TRIES + 1):
            try:
                return await call()
            except BatchWireError as exc:
                refused = exc.status is not None and 400 <= exc.status < 500 and exc.status != 429
                if refused or attempt == WIRE_TRIES:
                    raise
                await asyncio.sleep(min(WIRE_BACKOFF_S[0] * 2 ** (attempt - 1), WIRE_BACKOFF_S[1]))
        raise AssertionError("unreachable")

    def _opened(self, batch_id: str, ids: list[str]) -> None:
        now = self._clock()
        self._submitted_at[batch_id] = now
        for cid in ids:
            self._tries[cid] += 1
            self._first.setdefault(cid, now)
            self._open_in[cid] = batch_id

    async def _settle_intent(self, intent: dict[str, Any]) -> None:
        """A batch an earlier run began to submit and died before its id was journaled: found at the
        provider (then polled) or not (then its requests go in the next batch)."""
        ids = [str(cid) for cid in intent.get("custom_ids") or []]
        prepared = {k: v for k, v in intent.items() if k not in _INTENT_FIELDS}
        clues = {
            **prepared, "intent": intent["intent"], "at": intent.get("at"), "count": len(ids),
            "known": sorted(self._journal.batches),
        }  # fmt: skip
        try:
            batch_id = await self._retrying(lambda: self._wire.find(clues))
        except BatchWireError as exc:
            why = f"could not be looked for at the provider ({exc})"
            raise BatchStopped(stopped_message(self.alias, f"begun as {intent['intent']}", why)) from None
        for cid in ids:
            self._intent_of.pop(cid, None)
        if batch_id is not None:
            self._journal.submitted(
                self.provider, self.alias, batch_id, ids, intent=intent["intent"], **prepared
            )
            self._opened(batch_id, ids)
            self._submitted_at[batch_id] = float(intent.get("at") or self._clock())
        else:
            self._journal.not_submitted(str(intent["intent"]))
        for cid in ids:
            if cid in self._waiting:
                self._route(cid)

    def _reconcile(self) -> None:
        """Once, in the run's loop: the bill of every batch line an earlier run was answered and did not
        book (killed in between) is booked now, and every batch still open in the journal is looked at
        once, so answers that reached the cache before a kill are booked even when no request of this
        run reaches the batches (they are cache hits)."""
        if self._reconciled:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._reconciled = True
        if self._tag:
            self._recovery = self._spawn(self._recover(), [], "listed by the run's metadata")
        if not self._journal.versioned:  # from before bills were keyed: booked as they came
            return
        for batch in list(self._journal.batches.values()):
            if batch.model != self.alias or batch.provider != self.provider:
                continue
            if not batch.ended:
                if batch.batch_id not in self._polls:
                    self._resumed.add(batch.batch_id)  # polled again after a restart
                    self.counts["resumed"] += 1
                    work = self._follow(batch.batch_id, False, look=True)
                    self._polls[batch.batch_id] = self._spawn(work, batch.custom_ids, batch.batch_id)
                    self._looking.add(self._polls[batch.batch_id])
                continue
            for cid in sorted(batch.answered):
                key = line_key(batch.batch_id, cid)
                completion = billed_line(batch.usage.get(cid))
                if key not in self._booked and completion is not None:
                    self._booked.add(key)
                    completion.batch_line = key
                    self._book_unasked(cid, completion)

    async def _recover(self) -> None:
        """The batches this run directory has at the provider (its mark in their metadata) that the
        journal does not know — a journal lost, or cut at a line — journaled now and followed, so their
        requests are polled, never submitted again."""
        try:
            found = await self._retrying(lambda: self._wire.tagged(self._tag))
        except BatchWireError as exc:
            log.warning("%s: could not list this directory's batches at the provider: %s", self.alias, exc)
            return
        for batch_id, ids in found.items():
            if batch_id in self._journal.batches or any(cid in self._intent_of for cid in ids):
                continue  # known, or a begun submission that its own line settles
            log.warning(
                "%s: batch %s is not in batches.jsonl: found by its metadata, polled", self.alias, batch_id
            )
            self._journal.submitted(self.provider, self.alias, batch_id, ids, recovered=True)
            self.counts["recovered"] += 1
            self._submitted_at[batch_id] = self._clock()
            for cid in ids:
                self._open_in.setdefault(cid, batch_id)
            work = self._follow(batch_id, False, look=True)
            self._polls[batch_id] = self._spawn(work, ids, batch_id)
            self._looking.add(self._polls[batch_id])
