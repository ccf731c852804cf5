"""How a model client's requests leave the process: the :class:`Transport` seam and its HTTP default.

:class:`~jurist.engine.client.ModelClient` owns the life of a request above the wire (the cache, batches,
the ledger's budget, storing the answer) and hands what must really be sent to a transport as a
:class:`WireRequest`. :class:`HttpTransport`, the default, holds the request's concurrency slot, spaces
it with the throttle, picks the endpoint, posts it and retries what is worth retrying. Another transport
is passed in where nothing may be sent: ``jurist run --dry-run`` records each request instead
(:mod:`jurist.run.dry`), through this protocol, not by overriding the client.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import aiohttp

from jurist.config import ModelSpec
from jurist.engine.pacing.limits import ConcurrencyLimits
from jurist.engine.pacing.retry import RetryPolicy
from jurist.engine.pacing.throttle import Throttle
from jurist.engine.wire.anthropic import with_shared_prefix
from jurist.engine.wire.reply_cap import cap_bytes, cut_to
from jurist.engine.wire.transport import (
    Completion,
    EndpointClient,
    RequestFailed,
    _Transient,
    completion_or_raise,
)
from jurist.money import Ledger, Phase

if TYPE_CHECKING:
    from jurist.engine.client import ModelClient
    from jurist.engine.wire.connections import ConnectionBudget


@dataclass(frozen=True, slots=True)
class WireRequest:
    """One request past the cache and the budget check, as the client hands it to its transport.

    ``body``: built already for the served name (reused when the chosen endpoint serves that name), or
    None; ``shared_prefix``: the leading characters an Anthropic endpoint is told to cache."""

    messages: list[dict[str, Any]]
    params: dict[str, Any]
    body: bytes | None
    phase: Phase
    shared_prefix: int = 0


class Transport(Protocol):
    """What a model client sends through (:class:`HttpTransport` unless another is passed in)."""

    starts_servers: bool
    """Whether a managed (``serve:``) model's server is started before its first request is sent."""

    def endpoints(self, spec: ModelSpec, budget: ConnectionBudget | None) -> list[EndpointClient]:
        """The endpoints that answer ``spec``'s requests; their names and identities key the cache."""
        ...

    async def send(self, client: ModelClient, request: WireRequest) -> Completion:
        """The completion of ``request``, or :class:`~jurist.engine.wire.transport.RequestFailed`."""
        ...

    def answered_from_cache(self, phase: Phase, alias: str, completion: Completion) -> None:
        """Told of each request the cache answered in its stead (a dry run counts their lengths)."""
        ...


def wire_endpoints(spec: ModelSpec, budget: ConnectionBudget | None) -> list[EndpointClient]:
    """The endpoints of ``spec`` in its API's wire format (OpenAI chat, Responses, Anthropic, LiteLLM)."""
    if spec.api_type == "litellm":
        from jurist.engine.wire.litellm import litellm_endpoints  # optional and heavy: only when used

        return litellm_endpoints(spec)
    if spec.api_type == "anthropic":
        from jurist.engine.wire.anthropic import anthropic_endpoints

        return anthropic_endpoints(spec, budget)
    if spec.api_type == "openai-responses":  # OpenAI's Responses API (engine/wire/responses.py)
        from jurist.engine.wire.responses import responses_endpoints

        return responses_endpoints(spec, budget)
    endpoints = [
        EndpointClient(ep.base_url, ep.api_key, ep.model_name or spec.model, spec.parallel, budget)
        for ep in spec.resolved_endpoints()
    ]
    for endpoint in endpoints:
        endpoint.max_reply_bytes = cap_bytes(spec.max_reply_mb)
    return endpoints


class HttpTransport:
    """Requests on the wire: a concurrency slot, the throttle, the endpoint chosen, attempts and retries."""

    starts_servers = True

    def __init__(
        self,
        limits: ConcurrencyLimits,
        policy: RetryPolicy,
        ledger: Ledger,
        throttle: Throttle | None = None,
    ) -> None:
        self._limits = limits
        self._policy = policy
        self._ledger = ledger
        self._throttle = throttle
        self._rng = random.Random()

    def endpoints(self, spec: ModelSpec, budget: ConnectionBudget | None) -> list[EndpointClient]:
        return wire_endpoints(spec, budget)

    def answered_from_cache(self, phase: Phase, alias: str, completion: Completion) -> None:
        """Nothing to do: the ledger counts the hit."""

    def _pick_endpoint(self, endpoints: list[EndpointClient]) -> EndpointClient:
        """The least busy endpoint, then the fastest lately; ties at random so load spreads at once.

        Called once the request holds its concurrency slot: chosen earlier, every queued request would
        pick while nothing is in flight yet, and a slow endpoint would take as many as a fast one.
        """
        if len(endpoints) == 1:
            return endpoints[0]
        fewest = min(ep.in_flight for ep in endpoints)
        idle = [ep for ep in endpoints if ep.in_flight == fewest]
        fastest = min(ep.recent_latency for ep in idle)
        return self._rng.choice([ep for ep in idle if ep.recent_latency <= fastest * 1.25])

    async def _attempt(
        self, client: ModelClient, request: WireRequest, attempt: int, timeout: aiohttp.ClientTimeout
    ) -> Completion:
        """One attempt: raises :class:`_Transient` where another may succeed."""
        spec = client.spec
        async with self._limits.slot(client.alias, spec.parallel):
            if self._throttle is not None:  # spacing of request starts, across processes
                await self._throttle.wait()
            endpoint = self._pick_endpoint(client.endpoints)
            if request.body is not None and endpoint.model_name == client.served_name:
                body = request.body
            else:
                body = client.build_body(endpoint.model_name, request.messages, **request.params)
            body = with_shared_prefix(body, request.shared_prefix)  # Anthropic's: see complete()
            endpoint.in_flight += 1
            slots = spec.parallel, self._limits.max_concurrency
            try:
                with self._ledger.on_wire(request.phase, client.alias, attempt, *slots):
                    sent = time.monotonic()
                    status, payload, retry_after = await endpoint.post(body, timeout)
                    latency = time.monotonic() - sent
                endpoint.observe(latency)
            finally:
                endpoint.in_flight -= 1
        payload = cut_to(payload, endpoint.max_reply_bytes)  # an in-process reply, over the cap
        completion = completion_or_raise(
            status, payload, retry_after, latency, attempt, client.context_length
        )
        completion.answered_by = endpoint.identity
        return completion

    async def send(self, client: ModelClient, request: WireRequest) -> Completion:
        timeout = aiohttp.ClientTimeout(total=client.spec.timeout)
        attempt = 0
        started = time.monotonic()
        while True:
            attempt += 1
            try:
                return await self._attempt(client, request, attempt, timeout)
            except _Transient as exc:
                failure = exc
            except (asyncio.TimeoutError, TimeoutError):
                failure = _Transient(f"timed out after {client.spec.timeout:g} s", "timeout")
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
                    retry_after=failure.retry_after,
                )
            await asyncio.sleep(self._policy.delay(attempt, failure.retry_after, self._rng))
