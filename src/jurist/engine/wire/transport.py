"""The wire layer: OpenAI chat-completions over aiohttp, one session per endpoint over a shared pool.

The official SDK costs 2-2.7 ms of client CPU per request at high concurrency against ~0.15 ms for a bare
aiohttp session (shared/reference/peers-and-ratings.md §4), so this layer stays thin: bytes out,
``json.loads`` in, no per-response model objects. Provider adapters (:mod:`jurist.engine.wire.litellm`)
subclass :class:`EndpointClient`; the client (:mod:`jurist.engine.client`) adds limits, retries, the cache
and accounting on top.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp

from jurist.engine.pacing.retry import is_retryable_status, parse_retry_after
from jurist.engine.wire.reply_cap import DEFAULT_MAX_REPLY_MB, CutBody, cap_bytes, read_capped
from jurist.engine.wire.reply_parse import ParsedReply, parse_completion
from jurist.redact import mask

if TYPE_CHECKING:
    from jurist.engine.cache.identity import Identity
    from jurist.engine.wire.connections import ConnectionBudget

_MAX_ERROR_CHARS = 500
# A server saying the prompt (with max_tokens) exceeds its context: vLLM, llama-cpp-python, llama.cpp's
# llama-server, OpenAI, Anthropic. Sending it again cannot help, so it fails the item at once.
_CONTEXT_EXCEEDED = re.compile(
    r"maximum context length|context_length_exceeded|exceeds? (?:the )?(?:available )?context (?:size|window)"
    r"|prompt is too long",
    re.IGNORECASE,
)
_MAX_LISTING_BYTES = 4 << 20


@dataclass(slots=True)
class Completion:
    """One successful chat completion, with what it cost (nothing, when ``cached``).

    ``empty``: the server answered deliberately with no text (content ``""``); a result, recorded with the
    flag so reports can count it instead of scoring blank text unawares. ``truncated_thought``: a
    reasoning model ran out of tokens inside its thought; the answer is empty and the thought is kept in
    ``reasoning`` only.
    """

    text: str
    reasoning: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    attempts: int
    finish_reason: str | None = None
    logprobs: Any = None
    cached: bool = False
    empty: bool = False
    truncated_thought: bool = False
    more: list[Completion] = field(default_factory=list)
    """Further choices of one request with ``n`` > 1; their token counts are None (the request's totals
    are on this one, so summing answers' usage gives what was billed)."""
    reasoning_tokens: int | None = None
    """Of ``completion_tokens``, those spent thinking (``usage.completion_tokens_details``), when told."""
    cached_tokens: int | None = None
    """Of ``prompt_tokens``, those the server had in its prompt cache (``usage.prompt_tokens_details``)."""
    cache_write_tokens: int | None = None
    """Of ``prompt_tokens``, those the server wrote to its prompt cache (Anthropic bills them apart)."""
    answered_by: Identity | None = None
    """What answered it (the endpoint's identity; a cache hit: the identity whose entry it was): the request
    cache keys it on this. Never stored in the cache or the records."""
    notes: list[str] = field(default_factory=list)
    """Fields of the reply that had the wrong type or shape and were ignored (``usage.prompt_tokens is
    "x", not a token count``): the answer stands, the ledger counts the reply as malformed."""
    cut_at_bytes: int | None = None
    """The body was longer than the reply cap and read this far: the answer is what it held
    (:mod:`jurist.engine.wire.reply_cap`)."""
    content_head: str | None = None
    """What the engine moved out of the start of ``message.content`` (a leading thought): ``content_head +
    text`` is the content as written (:attr:`jurist.engine.wire.reply_parse.ParsedReply.content_head`)."""
    batch_line: str | None = None
    """The batch line that answered it (``batch id/custom id``), whose bill the ledger books once under
    this key (:mod:`jurist.engine.batch.billing`). Never stored in the cache."""

    def usage(self) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": round(self.latency_s, 4),
            "attempts": self.attempts,
        }
        if self.cached:
            usage["cached"] = True
        if self.empty:
            usage["empty"] = True
        if self.truncated_thought:
            usage["truncated_thought"] = True
        if self.cut_at_bytes is not None:
            usage["cut_at_bytes"] = self.cut_at_bytes
        return usage

    def cache_value(self) -> dict[str, Any]:
        """What the request cache stores: enough to rebuild the completion, nothing about the request."""
        value = {
            "text": self.text,
            "reasoning": self.reasoning,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "finish_reason": self.finish_reason,
            "logprobs": self.logprobs,
        }
        if self.truncated_thought:
            value["truncated_thought"] = True
        if self.cut_at_bytes is not None:
            value["cut_at_bytes"] = self.cut_at_bytes
        if self.content_head is not None:
            value["content_head"] = self.content_head
        if self.more:
            value["more"] = [choice.cache_value() for choice in self.more]
        return value

    @classmethod
    def from_cache(cls, value: dict[str, Any]) -> Completion:
        """A cache hit: no attempt, no latency, marked ``cached``."""
        return cls(
            value["text"],
            value.get("reasoning"),
            value.get("prompt_tokens"),
            value.get("completion_tokens"),
            0.0,
            0,
            value.get("finish_reason"),
            value.get("logprobs"),
            True,
            empty=not value["text"].strip(),
            truncated_thought=bool(value.get("truncated_thought")),
            more=[cls.from_cache(choice) for choice in value.get("more") or []],
            cut_at_bytes=value.get("cut_at_bytes"),
            content_head=value.get("content_head"),
        )


class RequestFailed(Exception):
    """A request that did not produce a completion, after retries where retrying made sense.

    ``retry_after``: the seconds the last reply's ``Retry-After`` asked for, if it did (the pre-run check
    tells a busy server from a broken one by it); not part of :meth:`record`."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        status: int | None = None,
        attempts: int = 1,
        retry_after: float | None = None,
    ) -> None:
        self.kind = kind
        self.status = status
        self.attempts = attempts
        self.retry_after = retry_after
        super().__init__(mask(message))

    def record(self) -> dict[str, Any]:
        return {"error": str(self), "kind": self.kind, "status": self.status, "attempts": self.attempts}


class BudgetExhausted(RequestFailed):
    """A request the budget refused (:class:`jurist.money.NoRoom`): nothing was sent. Not a failure of the
    item: the next run with a larger budget asks it (``kind`` "budget")."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="budget", attempts=0)


class _Transient(Exception):
    def __init__(self, message: str, kind: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after


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


_parse_completion = parse_completion  # its name before it moved to engine/wire/reply_parse.py


def completion_from(parsed: ParsedReply, latency: float, attempt: int) -> Completion:
    """The completion of a readable reply, its further choices (``n`` > 1) as completions too."""
    return Completion(
        parsed.text,
        parsed.reasoning,
        parsed.prompt_tokens,
        parsed.completion_tokens,
        latency,
        attempt,
        parsed.finish_reason,
        parsed.logprobs,
        empty=not parsed.text.strip(),
        truncated_thought=parsed.truncated_thought,
        more=[completion_from(choice, latency, attempt) for choice in parsed.more],
        reasoning_tokens=parsed.reasoning_tokens,
        cached_tokens=parsed.cached_tokens,
        cache_write_tokens=parsed.cache_write_tokens,
        notes=parsed.notes,
        cut_at_bytes=parsed.cut_at_bytes,
        content_head=parsed.content_head,
    )


def completion_or_raise(
    status: int, payload: bytes, retry_after: str | None, latency: float, attempt: int, context: int | None
) -> Completion:
    """The completion a reply carries, or the failure it is: :class:`_Transient` when sending it again
    may help, :class:`RequestFailed` when it cannot (``context``: the tokens a managed server serves)."""
    if status == 200:
        # A 200 that carries no answer (HTML, a cut body, no choices, null content) is a failed attempt,
        # retried and in the end a RequestFailed of kind "unreadable": never a blank answer.
        try:
            parsed = parse_completion(payload)
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            if isinstance(payload, CutBody):  # as large again if sent again: not retried
                message = f"the reply is over the reply cap (max_reply_mb, {len(payload)} bytes read): {exc}"
                raise RequestFailed(message, kind="over_cap", status=status, attempts=attempt) from None
            start = payload[:80].decode("utf-8", errors="replace")
            raise _Transient(
                f"unreadable response body ({type(exc).__name__}: {exc}; body starts {start!r})",
                "unreadable",
            ) from None
        return completion_from(parsed, latency, attempt)
    message = f"HTTP {status}: {_server_message(payload)}"
    if _CONTEXT_EXCEEDED.search(message):
        served = f" ({context} tokens served)" if context else ""
        message = f"the prompt does not fit the model's context{served}: {message}"
        raise RequestFailed(message, kind="context_length", status=status, attempts=attempt)
    if is_retryable_status(status):
        kind = "rate_limited" if status == 429 else "server_error"
        raise _Transient(message, kind, status, parse_retry_after(retry_after))
    raise RequestFailed(message, kind="client_error", status=status, attempts=attempt)


class EndpointClient:
    """One base URL with its own session; the key travels in a header, never in the body.

    The session borrows the engine's one connection pool (``budget``), so open sockets are bounded by the
    global concurrency, not by endpoints x ``parallel``; without a budget (a lone probe) it has its own.
    Another API is spoken by a subclass that names its :attr:`path` and :meth:`headers_for`, rewrites the
    chat-completions body the client built (:meth:`wire_body`) and reads a reply back into that shape
    (:meth:`chat_payload`): the request cache keys, the limits, retries and readers stay the same.
    """

    path = "/chat/completions"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model_name: str,
        connections: int,
        budget: ConnectionBudget | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + self.path
        self.model_name = model_name
        self._headers = self.headers_for(api_key)
        self._connections = connections
        self._budget = budget
        self._session: aiohttp.ClientSession | None = None
        self.in_flight = 0
        self.recent_latency = 0.0  # seconds, an exponential moving average; 0 until the first reply
        self.identity: Identity | None = None  # what answers here, once learned (engine/cache/identity.py)
        self.max_reply_bytes: int | None = cap_bytes(DEFAULT_MAX_REPLY_MB)  # the model's reply cap

    def headers_for(self, api_key: str | None) -> dict[str, str]:
        """The session's headers: the key as a bearer token."""
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        return headers

    def wire_body(self, body: bytes) -> bytes:
        """The chat-completions body as this API takes it (here: as it is)."""
        return body

    def chat_payload(self, payload: bytes) -> bytes:
        """A 200 reply's body as a chat-completions reply (here: as it is)."""
        return payload

    def observe(self, latency: float) -> None:
        """Fold one reply's latency into :attr:`recent_latency` (weight 0.2: recent replies count most)."""
        self.recent_latency = (
            latency if not self.recent_latency else 0.8 * self.recent_latency + 0.2 * latency
        )

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            if self._budget is not None:
                self._session = aiohttp.ClientSession(
                    connector=self._budget.connector(), connector_owner=False, headers=self._headers
                )
            else:
                connector = aiohttp.TCPConnector(limit=self._connections, ttl_dns_cache=300)
                self._session = aiohttp.ClientSession(connector=connector, headers=self._headers)
        return self._session

    async def post(self, body: bytes, timeout: aiohttp.ClientTimeout) -> tuple[int, bytes, str | None]:
        """Send one request (as :meth:`wire_body` has it): the reply's status, body (a 200's through
        :meth:`chat_payload`) and ``Retry-After``; :meth:`exchange` says how a reply is read."""
        status, payload, retry_after = await self.exchange(self.wire_body(body), timeout)
        return status, (self.chat_payload(payload) if status == 200 else payload), retry_after

    async def exchange(self, body: bytes, timeout: aiohttp.ClientTimeout) -> tuple[int, bytes, str | None]:
        """One request's bytes out and the reply's status, body and ``Retry-After`` back.

        A body longer than :attr:`max_reply_bytes` is read that far and no further (a
        :class:`~jurist.engine.wire.reply_cap.CutBody`, which says so; the connection is closed, not pooled
        half-read). A request that ends without a reply (timed out, broken, cancelled) has its connection
        closed, and on a timeout or error the socket let go, before this returns: the caller's concurrency
        slot is then free for another request, and a server that notices closed connections never holds
        more of this process's requests than its cap.
        """
        resp: aiohttp.ClientResponse | None = None
        try:
            async with self.session.post(self.url, data=body, timeout=timeout) as resp:
                payload = await read_capped(resp, self.max_reply_bytes)
                return resp.status, payload, resp.headers.get("Retry-After")
        except asyncio.CancelledError:
            if resp is not None:
                resp.close()  # the connection is dropped, never returned to the pool half-read
            raise
        except Exception:
            if resp is not None:
                resp.close()
            await asyncio.sleep(0)  # a closed transport lets go of its socket in the loop's next round
            raise

    async def models(self, timeout: float) -> tuple[int, bytes]:
        """``GET /models`` (the key in its header, as for a completion): status and body, within
        ``timeout`` seconds. A listing over 4 MB is not read (an identity is a few hundred bytes)."""
        limit = aiohttp.ClientTimeout(total=timeout)
        async with self.session.get(self.base_url + "/models", timeout=limit) as resp:
            chunks: list[bytes] = []
            size = 0
            async for chunk in resp.content.iter_chunked(1 << 16):
                size += len(chunk)
                if size > _MAX_LISTING_BYTES:
                    return resp.status, b""
                chunks.append(chunk)
            return resp.status, b"".join(chunks)

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
