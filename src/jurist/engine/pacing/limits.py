"""Concurrency limits: one global cap for the whole process, plus each model's own ``parallel`` cap."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

log = logging.getLogger("jurist.engine.pacing.limits")

FD_RESERVE = 64
"""Open files a run needs besides its connections: the run directory's files, the cache, logs, servers."""
_lowered: set[tuple[int, int]] = set()  # (asked, allowed) already said, once per process


def fit_fd_limit(max_concurrency: int) -> int:
    """The concurrency the process's open-file limit allows: each request in flight holds a socket, so
    ``--max-concurrency`` needs that many descriptors beside :data:`FD_RESERVE`. A soft limit below it is
    raised when the hard limit allows (the shell's ``ulimit -n`` is often 1024 under a hard 1M); else the
    concurrency is lowered to what fits, and said once (instead of EMFILE in the middle of a run)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not a Unix: no such limit to read
        return max_concurrency
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = max_concurrency + FD_RESERVE
    infinite = resource.RLIM_INFINITY
    if soft == infinite or soft >= needed:
        return max_concurrency
    target = needed if hard == infinite else min(needed, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (OSError, ValueError):
            pass
    if soft >= needed:
        return max_concurrency
    allowed = min(max(1, soft - FD_RESERVE), max_concurrency)
    if (max_concurrency, allowed) not in _lowered:
        _lowered.add((max_concurrency, allowed))
        log.warning(
            "--max-concurrency %d lowered to %d: the open-file limit is %d (hard %d) and each request in "
            "flight holds one; raise it (ulimit -n) for more",
            max_concurrency,
            allowed,
            soft,
            hard,
        )
    return allowed


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
