"""One connection pool for every endpoint of an engine, bounded by the engine's global concurrency.

A pool per endpoint (each with the model's ``parallel`` as its limit) let open sockets grow to models x
limit: at concurrency 256 with 6 models jurist held 1,550 open files and died under ``ulimit -n 1024``.
aiohttp's ``limit`` caps connections *in use* only; idle keep-alive connections do not count, so even one
shared connector keeps up to ``limit`` idle sockets per host once several hosts have been busy in turn.
:class:`BoundedConnector` closes the oldest idle connection before it opens one past its limit, so the
sockets it holds, busy and idle together, never exceed ``limit``. That check runs only when a new
connection is made, never on a request that reuses one: the hot path is aiohttp's own.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp


class BoundedConnector(aiohttp.TCPConnector):
    """A TCP connector whose open sockets, idle ones included, stay within ``limit``."""

    async def _create_connection(self, req: Any, traces: Any, timeout: Any) -> Any:
        if self._evict_idle():
            # A closed transport releases its socket in the loop's next round: wait for that round, or a
            # burst of new connections would briefly hold up to twice the limit.
            await asyncio.sleep(0)
        return await super()._create_connection(req, traces, timeout)

    def idle_connections(self) -> int:
        """Pooled keep-alive connections that no request holds right now."""
        pools = getattr(self, "_conns", None)
        return sum(len(pool) for pool in pools.values()) if isinstance(pools, dict) else 0

    def open_connections(self) -> int:
        """Sockets this connector holds: in use (with the one being opened) plus idle."""
        return len(getattr(self, "_acquired", ())) + self.idle_connections()

    def _evict_idle(self) -> bool:
        """Close the oldest idle connections until one more fits within the limit; True if any was."""
        pools = getattr(self, "_conns", None)
        if not self.limit or not isinstance(pools, dict):
            return False
        excess = self.open_connections() - self.limit  # the new one's placeholder is already acquired
        evicted = excess > 0
        while excess > 0 and pools:
            key = min(pools, key=lambda k: pools[k][0][1] if pools[k] else 0.0)  # the longest idle
            pool = pools[key]
            if pool:
                protocol, _ = pool[0]
                del pool[0]
                protocol.close()
                excess -= 1
            if not pool:
                del pools[key]
        return evicted


class ConnectionBudget:
    """The engine's one connector, made in the running event loop on first use and remade once closed.

    Every endpoint session borrows it (``connector_owner=False``) and keeps its own headers, so each
    endpoint's key still travels with its own requests only.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._connector: BoundedConnector | None = None

    def connector(self) -> BoundedConnector:
        if self._connector is None or self._connector.closed:
            # limit_per_host 0: per-model caps are the engine's semaphores (limits.py), not the pool's.
            self._connector = BoundedConnector(limit=self.limit, limit_per_host=0, ttl_dns_cache=300)
        return self._connector

    def open_connections(self) -> int:
        return self._connector.open_connections() if self._connector is not None else 0

    async def aclose(self) -> None:
        """Close every pooled socket; the sessions that borrowed the connector must be closed first."""
        connector, self._connector = self._connector, None
        if connector is not None and not connector.closed:
            await connector.close()
