"""The ledger at the request site: a request is admitted against the budget, sent, then settled.

:mod:`jurist.money` counts and bounds what requests cost without knowing what a request is; this is where
the engine's requests meet it, so a refusal of the budget reaches callers as what every caller already
handles, a failed request (:class:`~jurist.engine.wire.transport.BudgetExhausted`, kind "budget").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from jurist.config import ModelSpec
from jurist.engine.wire.transport import BudgetExhausted, Completion, RequestFailed
from jurist.money import Ledger, NoRoom, Ticket


async def admit(
    ledger: Ledger,
    phase: str,
    spec: ModelSpec,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    *,
    batch: bool = False,
) -> Ticket | None:
    """The request's reservation (None without a budget); :class:`BudgetExhausted` where it has no room."""
    try:
        return await ledger.admit(phase, spec, messages, params, batch=batch)
    except NoRoom as exc:
        raise BudgetExhausted(str(exc)) from None


async def spend(
    ledger: Ledger,
    phase: str,
    spec: ModelSpec,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    send: Callable[[], Awaitable[Completion]],
) -> Completion:
    """``send()`` once the budget has room for it, counted: a reply or a failure, and its cost."""
    ticket = await admit(ledger, phase, spec, messages, params)
    try:
        completion = await send()
    except RequestFailed as exc:
        ledger.failed(phase, spec.alias, ticket, attempts=exc.attempts)
        raise
    except BaseException:  # cancelled (Ctrl-C): nothing to count, the reservation is freed
        ledger.release(ticket)
        raise
    ledger.completed(phase, spec.alias, completion, messages, ticket, spec=spec)
    return completion
