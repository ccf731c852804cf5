"""``--max-cost`` / ``--max-tokens`` as a gate in front of every request.

Before a request is sent it reserves the worst case (every body byte a prompt token, ``max_tokens`` per
choice), and the reply gives back what was not used, so concurrent requests can never overshoot together. A
request that cannot fit even once everything in flight has settled stops the budget: it and every later one
are refused (:class:`NoRoom`; the engine's client says so as its ``BudgetExhausted``, a failed request of
kind "budget"). The ledger (:mod:`jurist.money.ledger`) does the reserving.
"""

from __future__ import annotations

import asyncio
from typing import Any


class NoRoom(Exception):
    """The budget refused a request: nothing may be sent (the message says why, naming the model)."""


class Budget:
    """``--max-cost`` USD and ``--max-tokens`` over a run directory's requests (``spent_*``: what earlier
    runs there already spent). One per process; concurrent requests reserve before they are sent."""

    def __init__(
        self,
        max_cost: float | None = None,
        max_tokens: int | None = None,
        *,
        spent_cost: float = 0.0,
        spent_tokens: int = 0,
    ) -> None:
        self.max_cost = max_cost
        self.max_tokens = max_tokens
        self.spent_cost = spent_cost
        self.spent_tokens = spent_tokens
        self.reserved_cost = 0.0
        self.reserved_tokens = 0
        self.outstanding = 0
        self.stopped = False
        self.refused = 0  # requests not sent because of the budget
        self.blocked: dict[str, Any] | None = None  # the request that found no room, and its worst case
        self._waiting: list[asyncio.Future[None]] = []

    def fits(self, cost: float, tokens: int) -> bool:
        if self.max_cost is not None and self.spent_cost + self.reserved_cost + cost > self.max_cost + 1e-12:
            return False
        return self.max_tokens is None or self.spent_tokens + self.reserved_tokens + tokens <= self.max_tokens

    async def reserve(self, cost: float, tokens: int) -> bool:
        """Hold ``cost`` and ``tokens`` for one request; False (and the budget stopped) when it cannot fit
        even after every request in flight has settled. Waits for them rather than stopping early."""
        while not self.stopped:
            if self.fits(cost, tokens):
                self.reserved_cost += cost
                self.reserved_tokens += tokens
                self.outstanding += 1
                return True
            if self.outstanding == 0:
                self.stopped = True
                self._wake()
                break
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            await waiter
        self.refused += 1
        return False

    def settle(self, reserved_cost: float, reserved_tokens: int, cost: float, tokens: int) -> None:
        """Swap a reservation for what the reply actually cost (nothing, for a failure)."""
        self.reserved_cost = max(0.0, self.reserved_cost - reserved_cost)
        self.reserved_tokens = max(0, self.reserved_tokens - reserved_tokens)
        self.outstanding -= 1
        self.spent_cost += cost
        self.spent_tokens += tokens
        self._wake()

    def charge(self, cost: float, tokens: int) -> None:
        """Spend what was billed without a reservation (a batch line answered before a restart)."""
        self.spent_cost += cost
        self.spent_tokens += tokens
        self._wake()

    def _wake(self) -> None:
        """Let every waiting request look again (a probe's event loop may be gone: skip its leftovers)."""
        waiting, self._waiting = self._waiting, []
        for waiter in waiting:
            if not waiter.done() and not waiter.get_loop().is_closed():
                waiter.set_result(None)

    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = {"stopped": self.stopped, "refused": self.refused}
        if self.blocked is not None:
            data["blocked"] = self.blocked
        if self.max_cost is not None:
            data.update(
                max_cost_usd=self.max_cost,
                spent_cost_usd=round(self.spent_cost, 8),
                remaining_cost_usd=round(max(0.0, self.max_cost - self.spent_cost), 8),
            )
        if self.max_tokens is not None:
            data.update(
                max_tokens=self.max_tokens,
                spent_tokens=self.spent_tokens,
                remaining_tokens=max(0, self.max_tokens - self.spent_tokens),
            )
        return data
