"""The model client: the only code in jurist that asks models for completions.

:class:`ModelClient` lives one alias's requests through: it consults the request cache, sends through a
batch API where asked, starts a managed server on first use, counts what was spent and stores the
answer; what is really sent goes through its :class:`~jurist.engine.wire.sending.Transport` (the HTTP one by
default: limits, throttle, retries). :class:`Engine` holds the clients of one process with their shared
limit, cache and server pool.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections import Counter
from typing import TYPE_CHECKING, Any, Literal

from jurist.config import ModelSpec
from jurist.engine.cache.identity import Identities, Identity, cache_report
from jurist.engine.cache.store import RequestCache, request_key
from jurist.engine.pacing.limits import ConcurrencyLimits, fit_fd_limit
from jurist.engine.pacing.retry import RetryPolicy
from jurist.engine.pacing.throttle import Throttle
from jurist.engine.spending import spend
from jurist.engine.wire.anthropic import SHARED_PREFIX
from jurist.engine.wire.connections import ConnectionBudget
from jurist.engine.wire.sending import HttpTransport, Transport, WireRequest
from jurist.engine.wire.transport import Completion, EndpointClient, RequestFailed
from jurist.errors import JuristError
from jurist.money import EngineStats, Ledger, Phase

if TYPE_CHECKING:
    from jurist.engine.batch import BatchDispatcher, Batching
    from jurist.engine.local import LocalModels
    from jurist.engine.servers.pool import ServerPool

__all__ = ["Completion", "EndpointClient", "Engine", "EngineStats", "ModelClient", "RequestFailed"]

CacheMode = Literal["use", "refresh", "off"]


class ModelClient:
    """Sends chat requests for one model alias: cache, batches, servers and accounting, over ``transport``
    (the HTTP one, built from ``limits``, ``policy`` and ``throttle``, unless another is given)."""

    def __init__(
        self,
        spec: ModelSpec,
        limits: ConcurrencyLimits,
        policy: RetryPolicy,
        throttle: Throttle | None = None,
        *,
        cache: RequestCache | None = None,
        pool: ServerPool | None = None,
        budget: ConnectionBudget | None = None,
        ledger: Ledger | None = None,
        local: LocalModels | None = None,
        cache_only: bool = False,
        transport: Transport | None = None,
    ) -> None:
        self.spec = spec
        self.alias = spec.alias
        self.sample_batching = spec.sample_batching  # None: not known until a batched request is answered
        if spec.api_type == "anthropic":
            self.sample_batching = False  # the Messages API answers one choice per request
        self.batch_probe = asyncio.Lock()  # held by the one batched request that finds out
        self._cache = cache
        self._pool = pool
        self._local = local  # --local: a served spec runs in this process instead of on a server
        self._budget = budget  # the engine's one connection pool; None: each endpoint has its own
        self._ledger = ledger if ledger is not None else Ledger()  # usage by phase, prices, the budget
        self._transport: Transport = transport or HttpTransport(limits, policy, self._ledger, throttle)
        self.context_length: int | None = None  # what a managed server said it serves, once started
        # A managed server has no endpoints until it is started, by the first request that needs it.
        self.endpoints: list[EndpointClient] = (
            [] if spec.serve is not None else self._transport.endpoints(spec, budget)
        )
        self.served_name = self.endpoints[0].model_name if self.endpoints else spec.model
        """The model name the request body carries (and the cache key's body with it)."""
        # What answers is learned once (engine/cache/identity.py) and keys the cache.
        self._identities = Identities(spec, cache, cache_only)
        self._cache_only = cache_only  # --cache-only: answer from the cache or fail; never send
        # A batch's custom id where no identity is known yet: the served name (a managed server's file too).
        self._fallback_name = self.served_name
        if spec.serve is not None:
            self._fallback_name += f"@{spec.serve.kind}:{spec.serve.model}"
        self.cache_sources: Counter[tuple[str, str, str]] = Counter()  # (phase, alias, identity): hits
        self.batcher: BatchDispatcher | None = None  # requests of ``batch_phases`` go through batches
        self.batch_phases: frozenset[str] = frozenset()

    async def _start_server(self) -> None:
        if self._local is not None:
            endpoint = await self._local.endpoint(self.spec)
            self.context_length = endpoint.context_length
            if not self.endpoints:
                self.endpoints = [endpoint]
            return
        if self._pool is None:
            raise JuristError(f"model {self.alias!r} has a serve block but the engine has no server pool")
        started = await self._pool.ensure(self.spec)
        self.context_length = self._pool.context_length(self.alias)
        if not self.endpoints:  # the first of many concurrent first requests builds them
            self.endpoints = self._transport.endpoints(started, self._budget)

    async def identities(self) -> list[Identity]:
        """What may answer this alias's requests, learned once (engine/cache/identity.py)."""
        return await self._identities.of(self.endpoints)

    def build_body(self, model_name: str, messages: list[dict[str, Any]], **params: Any) -> bytes:
        """The request body exactly as sent (keys travel in headers, never here)."""
        body: dict[str, Any] = {"model": model_name, "messages": messages}
        spec = self.spec
        if spec.max_tokens is not None:
            body["max_tokens"] = spec.max_tokens
        if spec.temperature is not None:
            body["temperature"] = spec.temperature
        body.update(spec.passthrough_params())
        body.update({k: v for k, v in params.items() if v is not None})
        return json.dumps(body).encode()

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        sample: int = 0,
        cache: CacheMode = "use",
        phase: Phase = "generate",
        shared_prefix: int = 0,
        **params: Any,
    ) -> Completion:
        """One chat completion; raises :class:`RequestFailed` when no completion could be had.

        ``sample`` tells repeated samples of the same request apart in the cache. ``cache``: "use" answers
        from the cache when it can (no slot, no server, no request), else sends and stores; "refresh"
        sends and stores (e.g. to re-judge an invalid verdict); "off" neither looks up nor stores.
        ``phase`` (generate, judge, reask, check): the ledger row it counts in. Under a budget, a request
        that could exceed it is not sent (:class:`~jurist.engine.wire.transport.BudgetExhausted`).
        ``shared_prefix``: leading characters of the first user message that the question's other requests
        share; a provider that takes explicit prompt-cache marks (Anthropic) is told, nothing else is (not
        part of the request's cache key).
        """
        store = self._cache if cache != "off" else None
        body: bytes | None = None
        identities: list[Identity] = []
        keys: dict[str, str] = {}  # identity's key text -> this request's cache key, hashed once
        if store is not None:
            body = self.build_body(self.served_name, messages, **params)
            identities = await self.identities()
            if cache == "use":
                hit = self._lookup(store, identities, body, sample, phase, keys)
                if hit is not None:
                    return hit
        if self._cache_only:
            why = "; ".join(sorted({i.note for i in identities if not i.known and i.note})) or "a miss"
            raise RequestFailed(
                f"not in the request cache, and --cache-only sends nothing ({why})", kind="cache", attempts=0
            )
        if self.batcher is not None and phase in self.batch_phases:  # engine/batch: custom id = cache key
            from jurist.engine.batch import BatchFallback, send_batched

            body = body or self.build_body(self.served_name, messages, **params)
            await self.identities()  # learned once: what answers keys the custom id as it keys the cache
            identity = self.endpoints[0].identity if self.endpoints else None
            key = request_key(identity.key_text() if identity else self._fallback_name, body, sample)
            line = json.loads(body)
            if shared_prefix > 0 and self.spec.api_type == "anthropic":
                line[SHARED_PREFIX] = shared_prefix
            how = self.batcher, self._ledger, self.spec, phase, messages, params, key, line
            try:
                return await send_batched(*how, identity, fresh=cache == "refresh")
            except BatchFallback:
                pass  # past --batch-deadline: sent synchronously, as below
        if not self.endpoints and self._transport.starts_servers:
            await self._start_server()
        prefix = shared_prefix if self.spec.api_type == "anthropic" else 0
        request = WireRequest(messages, params, body, phase, prefix)
        send = functools.partial(self._transport.send, self, request)
        completion = await spend(self._ledger, phase, self.spec, messages, params, send)
        if store is not None and body is not None:
            answered = await self._identities.answered(self.endpoints, completion.answered_by)
            if answered is not None:  # keyed by what answered it
                text = answered.key_text()
                key = keys.get(text) or request_key(text, body, sample)
                store.put(key, completion.cache_value())
        return completion

    async def in_cache(self, messages: list[dict[str, Any]], *, sample: int = 0, **params: Any) -> bool:
        """Whether the request cache holds this request's answer under what answers it now, learnt as a
        request learns it (``GET /v1/models`` for a server someone else runs; nothing for a hosted API or
        a server jurist starts). Sends no completion and counts nothing: the pre-run check asks it to
        know whether a model has anything to answer at all (:mod:`jurist.run.precheck`)."""
        if self._cache is None:
            return False
        body = self.build_body(self.served_name, messages, **params)
        for identity in await self.identities():
            value = (
                self._cache.get(request_key(identity.key_text(), body, sample)) if identity.known else None
            )
            if value is not None and isinstance(value.get("text"), str):
                return True
        return False

    def _lookup(
        self,
        store: RequestCache,
        identities: list[Identity],
        body: bytes,
        sample: int,
        phase: Phase,
        keys: dict[str, str],
    ) -> Completion | None:
        """The cached answer of any endpoint that may answer this request (each keyed by what answered it);
        ``keys`` keeps each key asked, for the store after a miss."""
        for identity in identities:
            if not identity.known:  # a server that did not answer cannot say which weights it would use
                continue
            text = identity.key_text()
            key = keys[text] = request_key(text, body, sample)
            value = store.get(key)
            if value is not None and isinstance(value.get("text"), str):  # else: not ours, a miss
                self._ledger.cache_hit(phase, self.alias)
                self.cache_sources[phase, self.alias, identity.describe()] += 1
                completion = Completion.from_cache(value)
                completion.answered_by = identity
                self._transport.answered_from_cache(phase, self.alias, completion)
                return completion
        return None

    async def aclose(self) -> None:
        for endpoint in self.endpoints:
            await endpoint.aclose()


class Engine:
    """All model clients of one process: one global concurrency limit, one request cache, one server pool."""

    def __init__(
        self,
        specs: dict[str, ModelSpec],
        *,
        max_concurrency: int,
        policy: RetryPolicy | None = None,
        throttle: Throttle | None = None,
        cache: RequestCache | None = None,
        pool: ServerPool | None = None,
        ledger: Ledger | None = None,
        local: LocalModels | None = None,
        cache_only: bool = False,
        batching: Batching | None = None,
    ):
        self.specs = specs
        self.cache_only = cache_only  # answer every request from the cache or fail it; send nothing
        self.batching = batching  # which models send which phases through batch APIs (engine/batch)
        self.limits = ConcurrencyLimits(fit_fd_limit(max_concurrency))
        self.policy = policy or RetryPolicy()
        self.throttle = throttle
        self.cache = cache
        self.pool = pool  # made on demand when a spec has a serve block and none was given
        self.local = local  # --local: served specs load in this process (shared with siblings), no servers
        self.ledger = ledger if ledger is not None else Ledger()  # per phase and model; prices, budget
        self.stats = EngineStats(self.ledger)
        # One connection pool for every endpoint: open sockets stay within max_concurrency, whatever the
        # number of models and endpoints (each model's own ``parallel`` is a semaphore in ``limits``).
        self.connections = ConnectionBudget(max_concurrency)
        self._clients: dict[str, ModelClient] = {}
        self._owner: Engine | None = None  # set on a sibling: the engine that closes what both share

    def sibling(
        self, specs: dict[str, ModelSpec], ledger: Ledger | None = None, batching: Batching | None = None
    ) -> Engine:
        """An engine for another task of the same ``jurist run --tasks``: its own clients and usage counts
        (each task's run.json says what it cost), everything that bounds the machine shared with this
        one: the global and per-model limits, the connection pool, the cache, the throttle, the servers
        (the embedded model starts once). Only this engine closes what they share."""
        other = Engine(
            {**self.specs, **specs},
            max_concurrency=self.limits.max_concurrency,
            policy=self.policy,
            throttle=self.throttle,
            cache=self.cache,
            pool=self._server_pool() if any(s.serve for s in specs.values()) else self.pool,
            ledger=ledger,
            local=self.local,
            cache_only=self.cache_only,
            batching=batching,
        )
        other.limits, other.connections, other._owner = self.limits, self.connections, self
        return other

    def owns_shared(self) -> bool:
        """Whether this engine closes the cache, connections and servers (a sibling does not)."""
        return self._owner is None

    def client(self, alias: str) -> ModelClient:
        client = self._clients.get(alias)
        if client is None:
            spec = self.specs[alias]
            client = self._clients[alias] = ModelClient(
                spec,
                self.limits,
                self.policy,
                throttle=self.throttle,
                cache=self.cache,
                pool=self._server_pool() if spec.serve is not None else None,
                budget=self.connections,
                ledger=self.ledger,
                local=self.local if spec.serve is not None else None,
                cache_only=self.cache_only,
            )
            phases = self.batching.phases.get(alias) if self.batching is not None else None
            if phases and self.batching is not None:
                from jurist.engine.batch import dispatcher_for

                client.batcher = dispatcher_for(spec, self.batching, self.cache, self.ledger)
                client.batch_phases = phases
        return client

    def cache_report(self) -> list[str]:
        """This engine's answers that came from the cache, by phase and identity (for the run's output)."""
        sources: Counter[tuple[str, str, str]] = Counter()
        for client in self._clients.values():
            sources.update(client.cache_sources)
        return cache_report(sources)

    def _server_pool(self) -> ServerPool:
        if self.pool is None:
            from jurist.engine.servers.pool import ServerPool

            self.pool = ServerPool()
        return self.pool

    async def aclose(self) -> None:
        """Close every session, write what the cache holds back, and stop the managed servers."""
        for client in self._clients.values():  # polling stops; the journal lets the next run go on
            if client.batcher is not None:
                await client.batcher.aclose()
        if self._owner is not None:  # a sibling closes its sessions only
            for client in self._clients.values():
                await client.aclose()
            return
        try:
            for client in self._clients.values():
                await client.aclose()
            await self.connections.aclose()  # after the sessions that borrow it
            if self.cache is not None:
                self.cache.flush()
        finally:
            if self.pool is not None:
                await self.pool.aclose()
            if self.local is not None:
                await self.local.aclose()

    def close_servers(self) -> None:
        """Stop the managed servers, synchronously: for a runner's ``finally`` outside the event loop."""
        if self.pool is not None and self._owner is None:
            self.pool.stop_all()
        if self.local is not None and self._owner is None:
            self.local.close()
