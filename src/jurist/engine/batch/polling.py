"""Following one submitted batch until it ends, within ``--batch-deadline`` and never giving it up while
it may still run.

A batch that cannot be reached is not one that has ended: it may still answer, and the provider bills
what it answers, so its requests are never submitted again on a guess. Polls that fail are tried again
(every ``poll_s``); after :data:`WIRE_TRIES` failures in a row with no deadline, or at the deadline when
the batch has not confirmed its cancel within ``cancel_wait_s``, the run stops with one line naming the
batch (:class:`~jurist.engine.batch.billing.BatchStopped`), the journal keeping it open for the next run.
Only a batch the provider says it does not know, :data:`WIRE_TRIES` times in a row (HTTP 404), is taken
as gone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from jurist.engine.batch.billing import BatchStopped, stopped_message
from jurist.engine.batch.settings import BatchSettings
from jurist.engine.batch.wire import BatchState, BatchWire, BatchWireError

log = logging.getLogger("jurist.engine.batch")

WIRE_TRIES = 8
"""Failed calls in a row (submit, poll, results) before jurist stops trying (polls: without a deadline)."""


async def follow_state(
    wire: BatchWire,
    alias: str,
    batch_id: str,
    settings: BatchSettings,
    *,
    past_deadline: Callable[[], bool],
    on_status: Callable[[str], None],
    idle: Callable[[], bool],
    clock: Callable[[], float],
) -> BatchState | None:
    """Poll ``batch_id`` until it ends: its last state; None once ``idle()`` says nothing waits for a
    batch that still runs (a restarted run's look at an open batch). Past the deadline it is cancelled,
    and the cancel waited for at most ``settings.cancel_wait_s``."""
    errors, gone, last_error = 0, 0, ""
    cancel_at: float | None = None
    cancel_sent = False
    while True:
        if cancel_at is None and past_deadline():
            cancel_at = clock()  # what it finished is kept; the rest goes synchronously
        if cancel_at is not None and not cancel_sent:
            try:
                await wire.cancel(batch_id)
                cancel_sent = True
            except BatchWireError as exc:
                log.warning("%s: batch %s could not be cancelled at the deadline: %s", alias, batch_id, exc)
        if cancel_at is not None and clock() - cancel_at >= settings.cancel_wait_s:
            said = "confirmed" if cancel_sent else "accepted"
            why = f"has not {said} its cancel {settings.cancel_wait_s:g}s after --batch-deadline"
            why += f" ({last_error})" if last_error else ""
            raise BatchStopped(stopped_message(alias, batch_id, why))
        try:
            state = await wire.state(batch_id)
        except BatchWireError as exc:
            errors, last_error = errors + 1, str(exc)[:200]
            gone = gone + 1 if exc.status == 404 else 0
            if gone >= WIRE_TRIES:
                return BatchState("not_found", ended=True, readable=False, detail=last_error)
            if errors >= WIRE_TRIES and idle():
                return None  # nothing waits for it: the next run looks again
            if errors >= WIRE_TRIES and settings.deadline_s is None:
                why = f"could not be polled {errors} times in a row ({last_error})"
                raise BatchStopped(stopped_message(alias, batch_id, why)) from None
        else:
            errors, gone, last_error = 0, 0, ""
            on_status(state.status)
            if state.ended:
                return state
            if idle():
                return None
        await asyncio.sleep(settings.poll_s)
