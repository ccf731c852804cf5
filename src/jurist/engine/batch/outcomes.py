"""What becomes of each request once its batch has ended: its answer handed to the requests that wait for
it and its bill booked once, or the line asked again, sent synchronously past the deadline, or failed.

:class:`LineOutcomes` holds the requests waiting on lines (their futures), which batches each line was
in and since when; :class:`~jurist.engine.batch.dispatcher.BatchDispatcher` builds on it with the batches
themselves (cutting, submitting, polling) and says how a line joins the next batch (:meth:`_enqueue`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from jurist.engine.batch.billing import Book, line_key
from jurist.engine.batch.journal import BatchJournal
from jurist.engine.batch.settings import BatchFallback, BatchSettings
from jurist.engine.batch.wire import BatchState, LineResult
from jurist.engine.wire.transport import Completion, RequestFailed


class LineOutcomes:
    """The requests of one model waiting on batch lines, and what each ended line gives them."""

    def __init__(
        self,
        alias: str,
        journal: BatchJournal,
        settings: BatchSettings,
        clock: Callable[[], float],
        book: Book | None,
        booked: set[str] | None,
    ) -> None:
        self.alias, self._journal, self.settings, self._clock = alias, journal, settings, clock
        self._book, self._booked = book, booked if booked is not None else set()
        mine = [b for b in journal.batches.values() if b.model == alias]
        self._phase_of = {cid: phase for b in mine for cid, phase in b.phases.items()}
        self._waiting: dict[str, list[asyncio.Future[Completion]]] = {}
        self._lines: dict[str, bytes] = {}
        self._tries: Counter[str] = Counter()  # lines of each request sent in this run
        self._first: dict[str, float] = {}  # when each request first went into a batch
        self._answered_in: dict[str, str] = {}  # custom id -> the ended batch that answered it
        self._kept: dict[str, Completion] = {}  # answered lines no request took yet (booked already)
        self.counts: Counter[str] = Counter()  # submitted, resumed, answered, retried, fallback, failed

    def _enqueue(self, custom_id: str) -> None:
        """Put a line in the next batch (the dispatcher's)."""
        raise NotImplementedError

    @staticmethod
    def _why(result: LineResult | None, state: BatchState) -> str:
        if result is not None:
            return result.error
        return f"not answered: the batch ended {state.status}" + (
            f" ({state.detail})" if state.detail else ""
        )

    def _hand_out(
        self, batch_id: str, ids: list[str], results: dict[str, LineResult], state: BatchState, paid: bool
    ) -> None:
        """Each line's answer to the requests that wait for it; an answered line's bill booked once (by
        the first request it goes to, or here when none waits); the rest asked again or failed."""
        for cid in ids:
            result = results.get(cid)
            if result is not None and result.completion is not None:
                completion, key = result.completion, line_key(batch_id, cid)
                completion.attempts = max(self._tries[cid], 1)
                new = key not in self._booked
                if new:
                    self._booked.add(key)
                    completion.batch_line = key
                if cid in self._waiting:
                    self.counts["answered"] += 1
                if not self._deliver(cid, completion, new=new):
                    self._kept[cid] = completion  # a request of this run may still ask for it
                    if new:
                        self._book_unasked(cid, completion)
            elif cid not in self._waiting:
                continue  # a resumed batch's line this run does not ask for
            elif paid:  # the ended batch no longer has it: ask again
                self._answered_in.pop(cid, None)
                self._enqueue(cid)
            else:
                self._not_answered(cid, result, state)

    def _book_unasked(self, cid: str, completion: Completion) -> None:
        """A billed line no request of this run takes: booked in the ledger all the same."""
        if self._book is not None:
            self.counts["booked"] += 1
            self._book(self._phase_of.get(cid, "judge"), completion)

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
            message = (
                f"no answer after {spent} batch(es): {why} (--batch-attempts {self.settings.attempts} "
                "spent: raise it to try again, or run without --batch)"
            )
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

    def _deliver(self, cid: str, completion: Completion, *, new: bool = True) -> bool:
        """``completion`` to the requests waiting for ``cid``: the first as what it is (``new``: its bill
        not booked yet), any other as a cache hit (one line, billed once). False: none took it."""
        taken = False
        for future in self._waiting.pop(cid, []):
            if not future.done():
                share = completion if not taken else replace(completion, batch_line=None)
                share.cached = not new or taken
                future.set_result(share)
                taken = True
        self._lines.pop(cid, None)
        return taken

    def _fail(self, cid: str, exc: Exception) -> None:
        if not isinstance(exc, BatchFallback):
            self.counts["failed"] += 1
        for future in self._waiting.pop(cid, []):
            if not future.done():
                future.set_exception(exc)
        self._lines.pop(cid, None)
