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
import logging
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from jurist.engine.batch.journal import BatchJournal
from jurist.engine.batch.settings import BatchFallback, BatchSettings
from jurist.engine.batch.wire import BatchState, BatchWire, BatchWireError, LineResult
from jurist.engine.transport import Completion, RequestFailed

if TYPE_CHECKING:
    from jurist.engine.cache import RequestCache

log = logging.getLogger("jurist.engine.batch")

_WIRE_TRIES = 8  # consecutive failed calls (submit, poll, results) before a batch's requests fail
_WIRE_BACKOFF_S = (1.0, 60.0)
_INTENT_FIELDS = ("event", "provider", "model", "intent", "at", "custom_ids")
_SETTLE_S = 0.5
"""Once fed, a batch is cut when no line has joined it for this long (the follow-ups of answers just
handed out join it first)."""
T = TypeVar("T")


class BatchDispatcher:
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
    ) -> None:
        self.alias, self._wire, self._journal, self.settings = alias, wire, journal, settings
        self._cache, self._clock = cache, clock
        self._cap = min(settings.max_requests or wire.max_requests, wire.max_requests)
        self._open_in = {
            cid: b.batch_id for b in journal.open_batches(wire.provider, alias) for cid in b.custom_ids
        }
        self._submitted_at = {b.batch_id: b.submitted_at for b in journal.batches.values()}
        self._answered_in = journal.answered_in(wire.provider, alias)
        intents = journal.intents_of(wire.provider, alias)
        self._intent_of = {str(cid): i for i in intents for cid in i.get("custom_ids") or []}
        self._settling: set[str] = set()
        self._waiting: dict[str, list[asyncio.Future[Completion]]] = {}
        self._lines: dict[str, bytes] = {}
        self._pending: dict[str, bytes] = {}
        self._pending_bytes = 0
        self._oldest = self._newest = 0.0
        self._feeders, self._fed = 0, False
        self._tries: Counter[str] = Counter()
        self._first: dict[str, float] = {}
        self._polls: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._timer: asyncio.Task[None] | None = None
        self.counts: Counter[str] = Counter()  # submitted, resumed, answered, retried, fallback, failed

    @property
    def provider(self) -> str:
        return self._wire.provider

    # -- requests ---------------------------------------------------------------------------------------
    def feeding(self) -> None:
        """A stage will hand this model requests (until its :meth:`fed`): batches wait for their age."""
        self._feeders += 1
        self._fed = False

    def fed(self) -> None:
        """A stage that called :meth:`feeding` starts no more work: once every such stage has said so,
        the next batch is cut as soon as it settles instead of at its age."""
        self._feeders = max(self._feeders - 1, 0)
        self._fed = self._feeders == 0

    async def request(self, custom_id: str, body: dict[str, Any], *, fresh: bool = False) -> Completion:
        """The completion of ``body`` through batches; :class:`RequestFailed` when none could be had,
        :class:`BatchFallback` when it is to be sent synchronously. ``fresh``: asked anew (a cache
        refresh), never answered by a batch that has ended."""
        if custom_id not in self._lines:
            self._lines[custom_id] = self._wire.line(custom_id, body)  # a field the wire refuses: raised now
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        waiting = self._waiting.setdefault(custom_id, [])
        waiting.append(future)
        if len(waiting) == 1:
            if fresh:
                self._answered_in.pop(custom_id, None)
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
        intent = self._intent_of.get(custom_id)
        if intent is not None:
            key = str(intent["intent"])
            if key not in self._settling:
                self._settling.add(key)
                self._spawn(self._settle_intent(intent))
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
            self._timer = asyncio.ensure_future(self._cut_when_old())

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
            self._spawn(self._submit(lines))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- batches ----------------------------------------------------------------------------------------
    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``, tried again with backoff on a failure that may pass (not a 4xx other than 429)."""
        for attempt in range(1, _WIRE_TRIES + 1):
            try:
                return await call()
            except BatchWireError as exc:
                refused = exc.status is not None and 400 <= exc.status < 500 and exc.status != 429
                if refused or attempt == _WIRE_TRIES:
                    raise
                await asyncio.sleep(min(_WIRE_BACKOFF_S[0] * 2 ** (attempt - 1), _WIRE_BACKOFF_S[1]))
        raise AssertionError("unreachable")

    async def _submit(self, lines: dict[str, bytes]) -> None:
        ids, payload = list(lines), list(lines.values())
        try:
            prepared = await self._retrying(lambda: self._wire.prepare(payload))
            intent = uuid.uuid4().hex
            if prepared:  # a crash between here and the batch's id finds it again by this
                self._journal.submitting(self.provider, self.alias, intent, ids, **prepared)
            batch_id = await self._retrying(lambda: self._wire.create(payload, prepared))
        except BatchWireError as exc:
            for cid in ids:
                self._fail(cid, RequestFailed(f"batch not submitted: {exc}", kind="batch", status=exc.status))
            return
        self._journal.submitted(self.provider, self.alias, batch_id, ids, intent=intent, **prepared)
        self._opened(batch_id, ids)
        self.counts["submitted"] += 1
        self._watch(batch_id)

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
        try:
            batch_id = await self._retrying(lambda: self._wire.find(prepared))
        except BatchWireError as exc:
            log.warning("%s: could not look for a batch an earlier run submitted: %s", self.alias, exc)
            batch_id = None
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

    def _watch(self, batch_id: str, *, resumed: bool = False, paid: bool = False) -> None:
        if batch_id not in self._polls:
            self.counts["resumed"] += resumed and not paid
            self._polls[batch_id] = self._spawn(self._follow(batch_id, paid))

    async def _follow(self, batch_id: str, paid: bool) -> None:
        """Poll ``batch_id`` until it ends, then hand its results out (``paid``: an ended batch read again,
        its answers paid for by an earlier run)."""
        known = self._journal.batches.get(batch_id)
        ids = known.custom_ids if known is not None else []
        state, errors, cancelled = None, 0, False
        while state is None or not state.ended:
            if not cancelled and not paid and self._past_deadline(ids):
                cancelled = True  # what it finished is kept; the rest goes synchronously
                try:
                    await self._wire.cancel(batch_id)
                except BatchWireError as exc:
                    log.warning(
                        "%s: batch %s could not be cancelled at the deadline: %s", self.alias, batch_id, exc
                    )
            try:
                state = await self._wire.state(batch_id)
                errors = 0
                if not paid and known is not None and state.status != known.status:
                    self._journal.status(batch_id, state.status)
            except BatchWireError as exc:
                errors += 1
                if errors >= _WIRE_TRIES or exc.status == 404:
                    state = BatchState("unreachable", ended=True, readable=False, detail=str(exc))
                    break
                state = None
            if state is None or not state.ended:
                await asyncio.sleep(self.settings.poll_s)
        results = await self._results(batch_id, state) if state.readable else {}
        answered = [cid for cid in ids if (r := results.get(cid)) is not None and r.completion is not None]
        if self._cache is not None and answered and not paid:
            for cid in answered:
                completion = results[cid].completion
                assert completion is not None
                self._cache.put(cid, completion.cache_value())
            self._cache.flush()  # the answers outlive this process before the journal says so
        if not paid:
            missing = {cid: self._why(results.get(cid), state) for cid in ids if cid not in set(answered)}
            self._journal.ended(batch_id, state.status, answered, missing)
        self._polls.pop(batch_id, None)
        for cid in ids:
            if self._open_in.get(cid) == batch_id:
                del self._open_in[cid]
        self._hand_out(ids, results, state, paid)

    async def _results(self, batch_id: str, state: BatchState) -> dict[str, LineResult]:
        for attempt in range(1, _WIRE_TRIES + 1):
            try:
                return {r.custom_id: r for r in await self._wire.results(batch_id)}
            except BatchWireError as exc:
                log.warning("%s: reading the results of batch %s: %s", self.alias, batch_id, exc)
                await asyncio.sleep(min(_WIRE_BACKOFF_S[0] * 2 ** (attempt - 1), _WIRE_BACKOFF_S[1]))
        return {}

    @staticmethod
    def _why(result: LineResult | None, state: BatchState) -> str:
        if result is not None:
            return result.error
        return f"not answered: the batch ended {state.status}" + (
            f" ({state.detail})" if state.detail else ""
        )

    def _hand_out(
        self, ids: list[str], results: dict[str, LineResult], state: BatchState, paid: bool
    ) -> None:
        for cid in ids:
            if cid not in self._waiting:
                continue  # a resumed batch's line this run does not ask for: kept in the cache
            result = results.get(cid)
            if result is not None and result.completion is not None:
                completion = result.completion
                completion.attempts = max(self._tries[cid], 1)
                completion.cached = paid
                self.counts["answered"] += 1
                self._deliver(cid, completion)
            elif paid:  # the ended batch no longer has it: ask again
                self._answered_in.pop(cid, None)
                self._enqueue(cid)
            else:
                self._not_answered(cid, result, state)

    def _not_answered(self, cid: str, result: LineResult | None, state: BatchState) -> None:
        why = self._why(result, state)
        tries = max(self._tries[cid], 1)  # lines of it sent in this run: what the ledger counts
        spent = max(self._journal.unanswered[cid], tries)  # batches that left it unanswered, every run
        if result is not None and not result.retry:
            self._fail(
                cid,
                RequestFailed(
                    f"batch line: {why}", kind="client_error", status=result.status, attempts=tries
                ),
            )
        elif self._past_deadline([cid]):
            self.counts["fallback"] += 1
            self._fail(cid, BatchFallback(why))
        elif spent >= self.settings.attempts:
            message = f"no answer after {spent} batch(es): {why}"
            self._fail(
                cid,
                RequestFailed(
                    message, kind="batch", status=result.status if result else None, attempts=tries
                ),
            )
        else:
            self.counts["retried"] += 1
            self._enqueue(cid)

    def _past_deadline(self, ids: list[str]) -> bool:
        deadline = self.settings.deadline_s
        if deadline is None:
            return False
        firsts = [self._first[cid] for cid in ids if cid in self._first]
        return bool(firsts) and self._clock() - min(firsts) >= deadline

    def _deliver(self, cid: str, completion: Completion) -> None:
        for future in self._waiting.pop(cid, []):
            if not future.done():
                future.set_result(completion)
        self._lines.pop(cid, None)

    def _fail(self, cid: str, exc: Exception) -> None:
        if not isinstance(exc, BatchFallback):
            self.counts["failed"] += 1
        for future in self._waiting.pop(cid, []):
            if not future.done():
                future.set_exception(exc)
        self._lines.pop(cid, None)

    def pending(self) -> int:
        """Requests waiting for a batch to be cut."""
        return len(self._pending)

    async def aclose(self) -> None:
        """Stop polling (the batches stay with the provider and in the journal: the next run polls them)."""
        tasks = [*self._tasks, *([self._timer] if self._timer is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._wire.aclose()
