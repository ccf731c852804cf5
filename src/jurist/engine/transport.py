"""The wire layer: OpenAI chat-completions over aiohttp, one session per endpoint over a shared pool.

The official SDK costs 2-2.7 ms of client CPU per request at high concurrency against ~0.15 ms for a bare
aiohttp session (shared/reference/peers-and-ratings.md §4), so this layer stays thin: bytes out,
``json.loads`` in, no per-response model objects. Provider adapters (:mod:`jurist.engine.providers`)
subclass :class:`EndpointClient`; the client (:mod:`jurist.engine.client`) adds limits, retries, the cache
and accounting on top.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp

from jurist.engine.reply_fields import logprobs_problem, shown, token_count
from jurist.redact import mask

if TYPE_CHECKING:
    from jurist.engine.connections import ConnectionBudget
    from jurist.engine.identity import Identity

_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)
_OPEN_THINK = re.compile(r"^\s*<think>")
_MAX_ERROR_CHARS = 500
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
    answered_by: Identity | None = None
    """What answered it (the endpoint's identity; a cache hit: the identity whose entry it was): the request
    cache keys it on this. Never stored in the cache or the records."""
    notes: list[str] = field(default_factory=list)
    """Fields of the reply that had the wrong type or shape and were ignored (``usage.prompt_tokens is
    "x", not a token count``): the answer stands, the ledger counts the reply as malformed."""

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
        )


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


@dataclass(slots=True)
class ParsedReply:
    """The parts of a chat.completion body jurist keeps."""

    text: str
    reasoning: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None
    logprobs: Any
    truncated_thought: bool = False
    more: list[ParsedReply] = field(default_factory=list)
    """Further choices of a request with ``n`` > 1, in order (the usage counts are the request's)."""
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None
    notes: list[str] = field(default_factory=list)
    """Fields ignored for their wrong type or shape (see :attr:`Completion.notes`)."""


def _parse_completion(body: bytes) -> ParsedReply:
    """Pull text, reasoning, token counts and logprobs out of a chat.completion body, or raise ValueError.

    Only a reply that says something counts: a body that is not a JSON object (an HTML error page served
    with status 200, a body cut short), no choices, or ``content: null`` with neither a tool call nor a
    thought is unreadable, so the client retries it like a transient error instead of recording "" as the
    model's answer. ``content: ""`` is a deliberate empty answer and is returned (flagged by the caller).
    A ``<think>`` that never closes is a thought cut off by the token limit: the answer is empty, flagged
    ``truncated_thought``, and the thought text never becomes the answer.

    The metadata around a readable answer (usage, finish reason, logprobs, reasoning) never makes it
    unreadable: a field of the wrong type or shape is dropped with a note (:attr:`ParsedReply.notes`), so
    a broken ``usage`` costs an estimated count, not the answer.
    """
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError(f"the body is a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ValueError("the reply has no choices")
    first = _parse_choice(choices[0], 0)
    _read_usage(data.get("usage"), first)
    for index, choice in enumerate(choices[1:], start=1):
        try:
            first.more.append(_parse_choice(choice, index))
        except ValueError:
            break  # the choices after an unreadable one are asked again one by one
    return first


def _read_usage(usage: Any, reply: ParsedReply) -> None:
    """The reply's token counts from its ``usage`` object; what does not hold up is left None (counted by
    jurist instead) with a note: a count that is no count, a part larger than its whole."""
    if usage is None:
        return
    if not isinstance(usage, dict):
        reply.notes.append(f"usage is a JSON {type(usage).__name__}, not an object")
        return
    notes = reply.notes
    reply.prompt_tokens = token_count(usage.get("prompt_tokens"), "usage.prompt_tokens", notes)
    reply.completion_tokens = token_count(usage.get("completion_tokens"), "usage.completion_tokens", notes)
    reasoning = _usage_detail(usage, "completion_tokens_details", "reasoning_tokens", notes)
    cached = _usage_detail(usage, "prompt_tokens_details", "cached_tokens", notes)
    if reasoning is not None and reply.completion_tokens is not None and reasoning > reply.completion_tokens:
        notes.append("usage.completion_tokens_details.reasoning_tokens is more than completion_tokens")
        reasoning = None
    if cached is not None and reply.prompt_tokens is not None and cached > reply.prompt_tokens:
        notes.append("usage.prompt_tokens_details.cached_tokens is more than prompt_tokens")
        cached = None
    reply.reasoning_tokens, reply.cached_tokens = reasoning, cached


def _usage_detail(usage: dict[str, Any], group: str, name: str, notes: list[str]) -> int | None:
    """A count inside ``usage[group]`` (OpenAI's ``*_tokens_details``); None when the server gives none."""
    details = usage.get(group)
    if details is None:
        return None
    if not isinstance(details, dict):
        notes.append(f"usage.{group} is a JSON {type(details).__name__}, not an object")
        return None
    return token_count(details.get(name), f"usage.{group}.{name}", notes)


def _parse_choice(choice: Any, index: int) -> ParsedReply:
    """One choice of a chat.completion, without token counts (the body has them per request only)."""
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise ValueError(f"choices[{index}] has no message")
    message = choice["message"]
    notes: list[str] = []
    finish = choice.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        notes.append(f"finish_reason is {shown(finish)}, not a string")
        finish = None
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, str):
        notes.append(f"message.reasoning is a JSON {type(reasoning).__name__}, not a string")
        reasoning = None
    logprobs = choice.get("logprobs")
    if (wrong := logprobs_problem(logprobs)) is not None:
        notes.append(f"logprobs is not of a known shape: {wrong}")
        logprobs = None
    content = message.get("content")
    truncated = False
    if content is None:
        if not message.get("tool_calls") and not reasoning:
            raise ValueError(f"message.content is null (finish_reason {finish!r})")
        content = ""  # a tool call, or a reasoning parser's thought with no answer after it
        truncated = bool(reasoning) and finish == "length"
    if isinstance(content, list):
        content = _text_of_parts(content)
    if not isinstance(content, str):
        raise ValueError("message.content is not a string")
    match = _THINK.match(content)
    if match:
        reasoning = (reasoning + "\n" if reasoning else "") + match.group(1).strip()
        content = content[match.end() :]
    elif _OPEN_THINK.match(content):
        thought = _OPEN_THINK.sub("", content, count=1).strip()
        reasoning = (reasoning + "\n" if reasoning else "") + thought
        content, truncated = "", True
    return ParsedReply(content, reasoning, None, None, finish, logprobs, truncated, notes=notes)


def _text_of_parts(parts: list[Any]) -> str:
    """``message.content`` given as OpenAI's list of content parts (``[{"type": "text", "text": ...}]``):
    its text parts joined in order, as pieces of one answer. Any other kind of part (an image, audio) is
    not an answer a judge can read, so a reply made only of such parts stays unreadable."""
    texts = [part.get("text") for part in parts if isinstance(part, dict) and part.get("type") == "text"]
    if not texts or not all(isinstance(text, str) for text in texts):
        raise ValueError("message.content is a list without text parts")
    return "".join(str(text) for text in texts)


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
        notes=parsed.notes,
    )


class EndpointClient:
    """One base URL with its own session; the key travels in a header, never in the body.

    The session borrows the engine's one connection pool (``budget``), so open sockets are bounded by the
    global concurrency, not by endpoints x ``parallel``; without a budget (a lone probe) it has its own.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model_name: str,
        connections: int,
        budget: ConnectionBudget | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.base_url = base_url.rstrip("/")
        self.model_name = model_name
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._connections = connections
        self._budget = budget
        self._session: aiohttp.ClientSession | None = None
        self.in_flight = 0
        self.recent_latency = 0.0  # seconds, an exponential moving average; 0 until the first reply
        self.identity: Identity | None = None  # what answers here, once learned (engine/identity.py)

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
        async with self.session.post(self.url, data=body, timeout=timeout) as resp:
            payload = await resp.read()
            return resp.status, payload, resp.headers.get("Retry-After")

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
