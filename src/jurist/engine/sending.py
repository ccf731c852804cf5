"""One request on the wire for a model client: its concurrency slot, the throttle, the endpoint chosen,
the attempts and the retries between them.

:class:`WireSender` is the part of :class:`~jurist.engine.client.ModelClient` below the cache and the
ledger: it sees one request body and the endpoints that may answer it, and returns a
:class:`~jurist.engine.transport.Completion` or raises :class:`~jurist.engine.transport.RequestFailed`.
Kept apart so the client reads as the life of a request (cache, batch, spend, store) and this as the
sending of it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import Any

import aiohttp

from jurist.config import ModelSpec
from jurist.engine.anthropic import with_shared_prefix
from jurist.engine.ledger import Ledger
from jurist.engine.ledger_rows import Phase
from jurist.engine.limits import ConcurrencyLimits
from jurist.engine.reply_cap import cut_to
from jurist.engine.retry import RetryPolicy
from jurist.engine.throttle import Throttle
from jurist.engine.transport import Completion, EndpointClient, RequestFailed, _Transient, completion_or_raise


class WireSender:
    """The sending half of a model client (its base class): the attributes below are the client's."""

    spec: ModelSpec
    alias: str
    endpoints: list[EndpointClient]
    context_length: int | None
    _limits: ConcurrencyLimits
    _policy: RetryPolicy
    _throttle: Throttle | None
    _ledger: Ledger
    _timeout: aiohttp.ClientTimeout
    _rng: random.Random
    _served_name: str

    build_body: Callable[..., bytes]
    """The client's: the request body exactly as sent, for an endpoint's own model name."""

    def _pick_endpoint(self) -> EndpointClient:
        """The least busy endpoint, then the fastest lately; ties at random so load spreads at once.

        Called once the request holds its concurrency slot: chosen earlier, every queued request would
        pick while nothing is in flight yet, and a slow endpoint would take as many as a fast one.
        """
        if len(self.endpoints) == 1:
            return self.endpoints[0]
        fewest = min(ep.in_flight for ep in self.endpoints)
        idle = [ep for ep in self.endpoints if ep.in_flight == fewest]
        fastest = min(ep.recent_latency for ep in idle)
        return self._rng.choice([ep for ep in idle if ep.recent_latency <= fastest * 1.25])

    async def _send(
        self,
        messages: list[dict[str, Any]],
        params: dict[str, Any],
        built: bytes | None,
        phase: Phase,
        shared_prefix: int = 0,
    ) -> Completion:
        attempt = 0
        started = time.monotonic()
        while True:
            attempt += 1
            try:
                async with self._limits.slot(self.alias, self.spec.parallel):
                    if self._throttle is not None:  # spacing of request starts, across processes
                        await self._throttle.wait()
                    endpoint = self._pick_endpoint()
                    if built is not None and endpoint.model_name == self._served_name:
                        body = built
                    else:
                        body = self.build_body(endpoint.model_name, messages, **params)
                    body = with_shared_prefix(body, shared_prefix)  # Anthropic's: see complete()
                    endpoint.in_flight += 1
                    slots = self.spec.parallel, self._limits.max_concurrency
                    try:
                        with self._ledger.on_wire(phase, self.alias, attempt, *slots):
                            sent = time.monotonic()
                            status, payload, retry_after = await endpoint.post(body, self._timeout)
                            latency = time.monotonic() - sent
                        endpoint.observe(latency)
                    finally:
                        endpoint.in_flight -= 1
                payload = cut_to(payload, endpoint.max_reply_bytes)  # an in-process reply, over the cap
                completion = completion_or_raise(
                    status, payload, retry_after, latency, attempt, self.context_length
                )
                completion.answered_by = endpoint.identity
                return completion
            except _Transient as exc:
                failure = exc
            except (asyncio.TimeoutError, TimeoutError):
                failure = _Transient(f"timed out after {self.spec.timeout:g} s", "timeout")
            except aiohttp.InvalidURL as exc:
                raise RequestFailed(f"invalid URL {exc}", kind="config", attempts=attempt) from None
            except aiohttp.ClientPayloadError as exc:
                failure = _Transient(f"unreadable response body: {exc}", "unreadable")
            except aiohttp.ClientError as exc:
                failure = _Transient(f"connection error: {type(exc).__name__}: {exc}", "connection")
            except OSError as exc:
                failure = _Transient(f"connection error: {exc}", "connection")
            if attempt >= self._policy.max_attempts:
                elapsed = time.monotonic() - started
                raise RequestFailed(
                    f"{failure} (gave up after {attempt} attempts, {elapsed:.1f} s)",
                    kind=failure.kind,
                    status=failure.status,
                    attempts=attempt,
                )
            await asyncio.sleep(self._policy.delay(attempt, failure.retry_after, self._rng))
