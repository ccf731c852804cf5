"""The chat-completions client: the only code in jurist that sends requests to models.

OpenAI's wire format over aiohttp, one ``ClientSession`` per endpoint, reused for every request. The
official SDK costs 2-2.7 ms of client CPU per request at high concurrency against ~0.15 ms for a bare
aiohttp session (shared/reference/peers-and-ratings.md §4), so the hot path here stays thin: bytes out,
``json.loads`` in, no per-response model objects.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from jurist.config import ModelSpec
from jurist.engine.limits import ConcurrencyLimits
from jurist.engine.retry import RetryPolicy, is_retryable_status, parse_retry_after
from jurist.engine.throttle import Throttle
from jurist.redact import mask

_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)
_MAX_ERROR_CHARS = 500


@dataclass(slots=True)
class Completion:
    """One successful chat completion, with what it cost."""

    text: str
    reasoning: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    attempts: int
    finish_reason: str | None = None
    logprobs: Any = None

    def usage(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": round(self.latency_s, 4),
            "attempts": self.attempts,
        }


class RequestFailed(Exception):
    """A request that did not produce a completion, after retries where retrying made sense."""

    def __init__(self, message: str, *, kind: str, status: int | None = None, attempts: int = 1) -> None:
        self.kind = kind
        self.status = status
        self.attempts = attempts
        super().__init__(mask(message))

    def record(self) -> dict[str, Any]:
        return {"error": str(self), "kind": self.kind, "status": self.status, "attempts": self.attempts}


class _Transient(Exception):
    def __init__(self, message: str, kind: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after


@dataclass
class EngineStats:
    """Counters for the run summary and for tests that check what was (not) sent."""

    requests: int = 0
    successes: int = 0
    failures: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    per_model: dict[str, dict[str, int]] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """Totals for ``run.json``: requests, retries and tokens, overall and per model."""
        return {
            "requests": self.requests,
            "retries": self.retries,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "per_model": self.per_model,
        }

    def add(self, alias: str, completion: Completion) -> None:
        self.successes += 1
        self.prompt_tokens += completion.prompt_tokens or 0
        self.completion_tokens += completion.completion_tokens or 0
        row = self.per_model.setdefault(alias, {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0})
        row["prompt_tokens"] += completion.prompt_tokens or 0
        row["completion_tokens"] += completion.completion_tokens or 0


def _server_message(body: bytes) -> str:
    """The error text a server put in its body: OpenAI's ``{"error": {"message"}}`` or the raw text."""
    text = body.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:_MAX_ERROR_CHARS]
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data))
        if isinstance(err, dict) and "message" in err:
            return str(err["message"])[:_MAX_ERROR_CHARS]
        return json.dumps(err)[:_MAX_ERROR_CHARS]
    return text.strip()[:_MAX_ERROR_CHARS]


def _parse_completion(body: bytes) -> tuple[str, str | None, int | None, int | None, str | None, Any]:
    """Pull text, reasoning, token counts and logprobs out of a chat.completion body, or raise ValueError."""
    data = json.loads(body)
    choice = data["choices"][0]
    message = choice["message"]
    content = message.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise ValueError("message.content is not a string")
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    match = _THINK.match(content)
    if match:
        reasoning = (reasoning + "\n" if reasoning else "") + match.group(1).strip()
        content = content[match.end() :]
    usage = data.get("usage") or {}
    return (
        content,
        reasoning,
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
        choice.get("finish_reason"),
        choice.get("logprobs"),
    )


class EndpointClient:
    """One base URL with its own pooled session."""

    def __init__(self, base_url: str, api_key: str | None, model_name: str, connections: int) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.base_url = base_url.rstrip("/")
        self.model_name = model_name
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._connections = connections
        self._session: aiohttp.ClientSession | None = None
        self.in_flight = 0

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._connections, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(connector=connector, headers=self._headers)
        return self._session

    async def post(self, body: bytes, timeout: aiohttp.ClientTimeout) -> tuple[int, bytes, str | None]:
        async with self.session.post(self.url, data=body, timeout=timeout) as resp:
            payload = await resp.read()
            return resp.status, payload, resp.headers.get("Retry-After")

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()


class ModelClient:
    """Sends chat requests for one model alias: load balancing, limits, retries and accounting."""

    def __init__(
        self,
        spec: ModelSpec,
        limits: ConcurrencyLimits,
        policy: RetryPolicy,
        stats: EngineStats,
        throttle: Throttle | None = None,
    ) -> None:
        self.spec = spec
        self.alias = spec.alias
        self._limits = limits
        self._policy = policy
        self._stats = stats
        self._throttle = throttle
        self._timeout = aiohttp.ClientTimeout(total=spec.timeout)
        self._rng = random.Random()
        self.endpoints: list[EndpointClient]
        if spec.api_type == "litellm":
            from jurist.engine.providers import litellm_endpoints  # optional and heavy: only when used

            self.endpoints = litellm_endpoints(spec)
        else:
            self.endpoints = [
                EndpointClient(ep.base_url, ep.api_key, ep.model_name or spec.model, spec.parallel)
                for ep in spec.resolved_endpoints()
            ]

    def _pick_endpoint(self) -> EndpointClient:
        """The least busy endpoint; ties broken at random so load spreads from the first request."""
        if len(self.endpoints) == 1:
            return self.endpoints[0]
        fewest = min(ep.in_flight for ep in self.endpoints)
        return self._rng.choice([ep for ep in self.endpoints if ep.in_flight == fewest])

    def build_body(self, endpoint: EndpointClient, messages: list[dict[str, Any]], **params: Any) -> bytes:
        body: dict[str, Any] = {"model": endpoint.model_name, "messages": messages}
        spec = self.spec
        if spec.max_tokens is not None:
            body["max_tokens"] = spec.max_tokens
        if spec.temperature is not None:
            body["temperature"] = spec.temperature
        body.update(spec.passthrough_params())
        body.update({k: v for k, v in params.items() if v is not None})
        return json.dumps(body).encode()

    async def complete(self, messages: list[dict[str, Any]], **params: Any) -> Completion:
        """One chat completion; raises :class:`RequestFailed` when no completion could be had."""
        attempt = 0
        started = time.monotonic()
        while True:
            attempt += 1
            endpoint = self._pick_endpoint()
            body = self.build_body(endpoint, messages, **params)
            try:
                async with self._limits.slot(self.alias, self.spec.parallel):
                    if self._throttle is not None:  # spacing of request starts, across processes
                        await self._throttle.wait()
                    endpoint.in_flight += 1
                    self._stats.requests += 1
                    row = self._stats.per_model.setdefault(
                        self.alias, {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
                    )
                    row["requests"] += 1
                    try:
                        sent = time.monotonic()
                        status, payload, retry_after = await endpoint.post(body, self._timeout)
                        latency = time.monotonic() - sent
                    finally:
                        endpoint.in_flight -= 1
                completion = self._completion_or_raise(status, payload, retry_after, latency, attempt)
                self._stats.add(self.alias, completion)
                return completion
            except _Transient as exc:
                failure = exc
            except (asyncio.TimeoutError, TimeoutError):
                failure = _Transient(f"timed out after {self.spec.timeout:g} s", "timeout")
            except aiohttp.InvalidURL as exc:
                self._stats.failures += 1
                raise RequestFailed(f"invalid URL {exc}", kind="config", attempts=attempt) from None
            except aiohttp.ClientPayloadError as exc:
                failure = _Transient(f"unreadable response body: {exc}", "unreadable")
            except aiohttp.ClientError as exc:
                failure = _Transient(f"connection error: {type(exc).__name__}: {exc}", "connection")
            except OSError as exc:
                failure = _Transient(f"connection error: {exc}", "connection")
            if attempt >= self._policy.max_attempts:
                self._stats.failures += 1
                elapsed = time.monotonic() - started
                raise RequestFailed(
                    f"{failure} (gave up after {attempt} attempts, {elapsed:.1f} s)",
                    kind=failure.kind,
                    status=failure.status,
                    attempts=attempt,
                )
            self._stats.retries += 1
            await asyncio.sleep(self._policy.delay(attempt, failure.retry_after, self._rng))

    def _completion_or_raise(
        self, status: int, payload: bytes, retry_after: str | None, latency: float, attempt: int
    ) -> Completion:
        if status == 200:
            try:
                text, reasoning, p_tok, c_tok, finish, logprobs = _parse_completion(payload)
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                raise _Transient(
                    f"unreadable response body ({type(exc).__name__}: {exc})", "unreadable"
                ) from None
            return Completion(text, reasoning, p_tok, c_tok, latency, attempt, finish, logprobs)
        message = f"HTTP {status}: {_server_message(payload)}"
        if is_retryable_status(status):
            kind = "rate_limited" if status == 429 else "server_error"
            raise _Transient(message, kind, status, parse_retry_after(retry_after))
        self._stats.failures += 1
        raise RequestFailed(message, kind="client_error", status=status, attempts=attempt)

    async def aclose(self) -> None:
        for endpoint in self.endpoints:
            await endpoint.aclose()


class Engine:
    """All model clients of one process, sharing one global concurrency limit."""

    def __init__(
        self,
        specs: dict[str, ModelSpec],
        *,
        max_concurrency: int,
        policy: RetryPolicy | None = None,
        throttle: Throttle | None = None,
    ):
        self.specs = specs
        self.limits = ConcurrencyLimits(max_concurrency)
        self.policy = policy or RetryPolicy()
        self.throttle = throttle
        self.stats = EngineStats()
        self._clients: dict[str, ModelClient] = {}

    def client(self, alias: str) -> ModelClient:
        client = self._clients.get(alias)
        if client is None:
            client = self._clients[alias] = ModelClient(
                self.specs[alias], self.limits, self.policy, self.stats, throttle=self.throttle
            )
        return client

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
