"""One model's requests through its provider's batch API: gathered into batches, submitted, polled,
their answers handed back to the requests that wait for them, exactly once across restarts.

A request (:meth:`BatchDispatcher.request`) waits on a future while its line sits in the next batch,
which is cut when it holds ``max_requests`` lines or the provider's byte limit would be passed, or when
its oldest line has waited ``max_age_s``. Once every stage that feeds the model has said it will start
no more work (:meth:`BatchDispatcher.feeding`, :meth:`BatchDispatcher.fed`), the next batch is cut as
soon as no line has joined it for a moment: only the follow-ups of work already running (the other
game, a re-ask, a retried line) can still come, and the end of a run does not wait ``max_age_s``.

A cut batch is submitted, recorded in the run directory's journal (:mod:`~jurist.engine.batch.journal`)
and only then polled, every ``poll_s``. When it ends its
answers go into the request cache under their custom id (the very key a synchronous call of the same
request is cached under), the journal records the end, and each waiting request gets its completion.

Lines the batch did not answer are asked again in a new batch when that may help (expired, cancelled,
a 429 or 5xx line, a batch that failed as a whole), up to ``attempts`` batches that did not answer it,
counted in the journal over every run of the run directory (a run started again does not start the
count again: a request past it fails at once, until ``--batch-attempts`` is raised); once a
request has been in batches for ``deadline_s`` it is sent synchronously instead
(:class:`BatchFallback`), and a batch still running at its lines' deadline is cancelled so that what it
finished is kept and the rest goes synchronously. A line the provider refused (a 4xx) fails at once,
as a synchronous 4xx does.

A run started again after a crash finds its requests' custom ids in the journal: one in a batch still
open is answered by polling that batch; one answered by an ended batch is in the cache (or, with the
cache off, read again from that batch's results, already paid for: counted as a cache hit).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from jurist.engine.batch.billing import BatchStopped, Book, stopped_message, usage_of
from jurist.engine.batch.journal import BatchJournal
from jurist.engine.batch.polling import WIRE_TRIES, follow_state
from jurist.engine.batch.restarts import WIRE_BACKOFF_S, Restarts
from jurist.engine.batch.settings import BatchSettings
from jurist.engine.batch.wire import BatchState, BatchWire, BatchWireError, LineResult
from jurist.engine.wire.transport import Completion, RequestFailed
from jurist.errors import StorageError

if TYPE_CHECKING:
    from jurist.engine.cache.store import RequestCache

log = logging.getLogger("jurist.engine.batch")

_LOOK_WAIT_S = 60.0  # at the end of a run, the most a look at an earlier run's open batch is waited for
_SETTLE_S = 0.5
"""Once fed, a batch is cut when no line has joined it for this long (the follow-ups of answers just
handed out join it first)."""
T = TypeVar("T")


class BatchDispatcher(Restarts):
    """The batches of one model alias at one endpoint (``wire``)."""

    def __init__(
        self,
        alias: str,
        wire: BatchWire,
        journal: BatchJournal,
        settings: BatchSettings,
        cache: RequestCache | None = None,
        *,
        clock: Callable[[], float] = time.time,
        book: Book | None = None,
        booked: set[str] | None = None,
        tag: str = "",
    ) -> None:
        super().__init__(alias, journal, settings, clock, book, booked)
        self._wire, self._cache, self._tag = wire, cache, tag
        self._recovery: asyncio.Task[None] | None = None
        self._reconciled = False
        self._creating = asyncio.Lock()  # one creation in flight, where only a listing finds it again
        self._resumed: set[str] = set()
        self._looking: set[asyncio.Task[None]] = set()
        self._stopped: BaseException | None = None  # the journal cannot be written: nothing goes on
        self._cap = min(settings.max_requests or wire.max_requests, wire.max_requests)
        self._open_in = {
            cid: b.batch_id for b in journal.open_batches(wire.provider, alias) for cid in b.custom_ids
        }
        self._submitted_at = {b.batch_id: b.submitted_at for b in journal.batches.values()}
        intents = journal.intents_of(wire.provider, alias)
        self._intent_of = {str(cid): i for i in intents for cid in i.get("custom_ids") or []}
        self._settling: set[str] = set()
        self._answered_in.update(journal.answered_in(wire.provider, alias))
        self._pending: dict[str, bytes] = {}
        self._pending_bytes = 0
        self._oldest = self._newest = 0.0
        self._feeders, self._fed = 0, False
        self._polls: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._timer: asyncio.Task[None] | None = None

    # -- requests ---------------------------------------------------------------------------------------
    def feeding(self) -> None:
        """A stage will hand this model requests (until its :meth:`fed`): batches wait for their age."""
        self._reconcile()
        self._feeders += 1
        self._fed = False

    def fed(self) -> None:
        """A stage that called :meth:`feeding` starts no more work: once every such stage has said so,
        the next batch is cut as soon as it settles instead of at its age."""
        self._feeders = max(self._feeders - 1, 0)
        self._fed = self._feeders == 0

    async def request(
        self, custom_id: str, body: dict[str, Any], *, fresh: bool = False, phase: str = "judge"
    ) -> Completion:
        """The completion of ``body`` through batches; :class:`RequestFailed` when none could be had,
        :class:`BatchFallback` when it is to be sent synchronously. ``fresh``: asked anew (a cache
        refresh), never answered by a batch that has ended. ``phase``: the ledger's, for its bill."""
        self._reconcile()
        if self._recovery is not None and not self._recovery.done():
            await asyncio.shield(self._recovery)  # batches the journal lost are known before any is cut
        if self._stopped is not None:
            raise self._stopped
        self._phase_of[custom_id] = phase
        if custom_id not in self._lines:
            self._lines[custom_id] = self._wire.line(custom_id, body)  # a field the wire refuses: raised now
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        waiting = self._waiting.setdefault(custom_id, [])
        waiting.append(future)
        if len(waiting) == 1:
            if fresh:
                self._answered_in.pop(custom_id, None)
                self._kept.pop(custom_id, None)
            self._route(custom_id)
        try:
            return await future
        finally:
            if not future.done() or future.cancelled():
                left = [f for f in self._waiting.get(custom_id, []) if f is not future]
                if left:
                    self._waiting[custom_id] = left
                else:
                    self._waiting.pop(custom_id, None)

    def _route(self, custom_id: str) -> None:
        """A request's way in: the open batch that holds it (a resumed run), a batch an earlier run may
        have created without journaling its id, the ended batch that answered it, or the next batch."""
        kept = self._kept.pop(custom_id, None)
        if kept is not None:  # answered by a batch this run followed before the request came: paid
            self._deliver(custom_id, kept, new=False)
            return
        intent = self._intent_of.get(custom_id)
        if intent is not None:
            key = str(intent["intent"])
            if key not in self._settling:
                self._settling.add(key)
                ids = [str(cid) for cid in intent.get("custom_ids") or []]
                self._spawn(self._settle_intent(intent), ids, f"begun as {key}")
            return
        batch_id = self._open_in.get(custom_id)
        if batch_id is not None:
            self._first.setdefault(custom_id, self._submitted_at.get(batch_id, self._clock()))
            self._watch(batch_id, resumed=True)
            return
        batch_id = self._answered_in.get(custom_id)
        if batch_id is not None and batch_id not in self._polls:
            self._watch(batch_id, resumed=True, paid=True)
            return
        spent = self._journal.unanswered[custom_id]
        if spent >= self.settings.attempts:  # earlier runs used up its batches: not sent again
            message = (
                f"no answer after {spent} batch(es) over earlier runs (--batch-attempts "
                f"{self.settings.attempts}; raise it to try again, or run without --batch)"
            )
            self._fail(custom_id, RequestFailed(message, kind="batch", attempts=0))
            return
        self._enqueue(custom_id)

    def _enqueue(self, custom_id: str) -> None:
        line = self._lines[custom_id]
        if self._pending and self._pending_bytes + len(line) > self._wire.max_bytes:
            self._cut()
        self._newest = self._clock()
        if not self._pending:
            self._oldest = self._newest
        self._pending[custom_id] = line
        self._pending_bytes += len(line)
        if len(self._pending) >= self._cap:
            self._cut()
        elif self._timer is None or self._timer.done():
            self._timer = self._spawn(self._cut_when_old(), list(self._pending), "not yet cut")

    async def _cut_when_old(self) -> None:
        while self._pending:
            due = self._oldest + self.settings.max_age_s
            if self._fed:
                due = min(due, self._newest + _SETTLE_S)
            wait = due - self._clock()
            if wait <= 0:
                self._cut()
                return
            await asyncio.sleep(min(wait, _SETTLE_S))

    def _cut(self) -> None:
        lines, self._pending, self._pending_bytes = self._pending, {}, 0
        if lines:
            self._spawn(self._submit(lines), list(lines), "not yet created")

    def _spawn(
        self, work: Coroutine[Any, Any, None], ids: list[str], what: str = "a batch"
    ) -> asyncio.Task[None]:
        task = asyncio.ensure_future(self._guarded(work, ids, what))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda _: work.close())  # cancelled before it began: never left unawaited
        return task

    async def _guarded(self, work: Coroutine[Any, Any, None], ids: list[str], what: str) -> None:
        """``work``, whose every failure reaches the requests it was for (no task dies silently): a
        journal the disk refuses stops every request of the model (:class:`StorageError`), anything
        else stops the requests of that batch with one line naming it."""
        try:
            await work
        except asyncio.CancelledError:
            raise
        except StorageError as exc:
            self._stopped = exc
            if not self._waiting:  # else the requests carry it to the command's one line
                log.error("%s: %s", self.alias, exc)
            for cid in list(self._waiting):
                self._fail(cid, exc)
        except Exception as exc:  # a reply of a shape no reader foresaw, a bug: said, never silent
            why = f"could not be followed ({type(exc).__name__}: {str(exc)[:200]})"
            stop = (
                exc if isinstance(exc, BatchStopped) else BatchStopped(stopped_message(self.alias, what, why))
            )
            if not any(cid in self._waiting for cid in ids):  # nothing carries it further: said here
                log.error("%s", stop)
            for cid in ids:
                self._fail(cid, stop)

    # -- batches ----------------------------------------------------------------------------------------
    async def _submit(self, lines: dict[str, bytes]) -> None:
        ids, payload = list(lines), list(lines.values())
        phases = [self._phase_of.get(cid, "judge") for cid in ids]
        try:
            prepared = await self._retrying(lambda: self._wire.prepare(payload))
            intent = uuid.uuid4().hex
            async with self._creating if self._wire.serial_creates else contextlib.nullcontext():
                # on disk before the creation: a crash before the batch's id is finds it again by this
                self._journal.submitting(self.provider, self.alias, intent, ids, **prepared)
                tagged = {**prepared, "intent": intent}
                batch_id = await self._retrying(lambda: self._wire.create(payload, tagged))
                self._journal.submitted(
                    self.provider, self.alias, batch_id, ids, intent=intent, phases=phases, **prepared
                )
        except BatchWireError as exc:
            for cid in ids:
                self._fail(cid, RequestFailed(f"batch not submitted: {exc}", kind="batch", status=exc.status))
            return
        self._opened(batch_id, ids)
        self.counts["submitted"] += 1
        self._watch(batch_id)

    def _watch(self, batch_id: str, *, resumed: bool = False, paid: bool = False) -> None:
        if resumed and not paid and batch_id not in self._resumed:
            self._resumed.add(batch_id)
            self.counts["resumed"] += 1
        if batch_id not in self._polls:
            known = self._journal.batches.get(batch_id)
            ids = known.custom_ids if known is not None else []
            self._polls[batch_id] = self._spawn(self._follow(batch_id, paid), ids, batch_id)

    async def _follow(self, batch_id: str, paid: bool, *, look: bool = False) -> None:
        """Poll ``batch_id`` until it ends, then hand its results out (``paid``: an ended batch read again;
        ``look``: a restarted run's look at an open batch, given up while it runs and nothing waits)."""
        known = self._journal.batches.get(batch_id)
        ids = known.custom_ids if known is not None else []
        if paid:
            state: BatchState | None = BatchState(known.status if known else "ended", True, True)
        else:

            def on_status(status: str) -> None:
                if known is not None and status != known.status:
                    self._journal.status(batch_id, status)

            state = await follow_state(
                self._wire, self.alias, batch_id, self.settings, clock=self._clock, on_status=on_status,
                past_deadline=lambda: self._past_deadline(ids),
                idle=lambda: look and not any(cid in self._waiting for cid in ids),
            )  # fmt: skip
        if state is None:
            self._polls.pop(batch_id, None)
            return
        results = await self._results(batch_id) if state.readable else {}
        answered = [cid for cid in ids if (r := results.get(cid)) is not None and r.completion is not None]
        lines = {cid: results[cid].completion for cid in answered}
        if self._cache is not None and answered and not paid:
            for cid, completion in lines.items():
                assert completion is not None
                self._cache.put(cid, completion.cache_value())
            self._cache.flush()  # the answers outlive this process before the journal says so
        if not paid:
            missing = {cid: self._why(results.get(cid), state) for cid in ids if cid not in lines}
            usage = {cid: usage_of(c) for cid, c in lines.items() if c is not None}
            self._journal.ended(batch_id, state.status, answered, missing, usage=usage)
        self._polls.pop(batch_id, None)
        for cid in ids:
            if self._open_in.get(cid) == batch_id:
                del self._open_in[cid]
        self._hand_out(batch_id, ids, results, state, paid)

    async def _results(self, batch_id: str) -> dict[str, LineResult]:
        for attempt in range(1, WIRE_TRIES + 1):
            try:
                return {r.custom_id: r for r in await self._wire.results(batch_id)}
            except BatchWireError as exc:
                log.warning("%s: reading the results of batch %s: %s", self.alias, batch_id, exc)
                await asyncio.sleep(min(WIRE_BACKOFF_S[0] * 2 ** (attempt - 1), WIRE_BACKOFF_S[1]))
        raise BatchStopped(
            stopped_message(
                self.alias, batch_id, f"ended, but its results could not be read {WIRE_TRIES} times"
            )
        )

    def pending(self) -> int:
        """Requests waiting for a batch to be cut."""
        return len(self._pending)

    async def aclose(self) -> None:
        """Let the looks at a restarted run's open batches finish (bounded: an ended one's bill is booked
        then), then stop polling (the batches stay with the provider and in the journal: the next run
        polls them)."""
        looking = [task for task in self._looking if not task.done()]
        if looking:
            await asyncio.wait(looking, timeout=_LOOK_WAIT_S)
        tasks = [*self._tasks, *([self._timer] if self._timer is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._wire.aclose()
