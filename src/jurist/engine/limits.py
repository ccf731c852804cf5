"""Concurrency limits: one global cap for the whole process, plus each model's own ``parallel`` cap."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ConcurrencyLimits:
    """Hands out request slots.

    A request holds its model's slot and a global slot while it is on the wire, and neither while it
    backs off between retries. The model slot is taken first, so a model at its own cap never sits on
    global slots that another model could use.
    """

    def __init__(self, max_concurrency: int) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.max_concurrency = max_concurrency
        self._global = asyncio.Semaphore(max_concurrency)
        self._per_model: dict[str, asyncio.Semaphore] = {}
        self.in_flight = 0
        self.peak_in_flight = 0

    def model_semaphore(self, alias: str, parallel: int) -> asyncio.Semaphore:
        sem = self._per_model.get(alias)
        if sem is None:
            sem = self._per_model[alias] = asyncio.Semaphore(parallel)
        return sem

    @asynccontextmanager
    async def slot(self, alias: str, parallel: int) -> AsyncIterator[None]:
        async with self.model_semaphore(alias, parallel), self._global:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                yield
            finally:
                self.in_flight -= 1
