"""Anthropic's native Messages API, both ways: a chat-completions body as Messages ``params``, and a
Messages reply as a chat-completions reply, so the engine's one reply parser (and every verdict reader
after it) reads an Anthropic answer exactly as it reads an OpenAI one.

Used by the synchronous ``api_type: anthropic`` endpoint (:class:`AnthropicEndpoint`) and by the Message
Batches wire alike. A field
Messages has no counterpart for (``logprobs``, ``n`` > 1, ``response_format``, penalties, ``seed``) is
refused with a one-line reason rather than dropped: a judge that asked for logprobs must not silently get
a verdict read without them.

Prompt caching: a request may say how much of its first user message the other requests of its question
share (:data:`SHARED_PREFIX`, set by the client, never keyed and never sent); where the system prompt and
that part are long enough for Anthropic to cache (:func:`cache_minimum`), the part is sent as its own
text block marked ``cache_control: {"type": "ephemeral"}``, so the question's other requests (the other
game, the other rubric items, the re-asks) read it from Anthropic's prompt cache; without such a part,
a system prompt long enough alone is marked. The reply's cache reads and writes are priced as such.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from jurist.config import ANTHROPIC_API_BASE
from jurist.engine.wire.transport import EndpointClient, RequestFailed
from jurist.tokens import count_text_tokens

if TYPE_CHECKING:
    from jurist.config import ModelSpec
    from jurist.engine.wire.connections import ConnectionBudget

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
"""Messages requires ``max_tokens``; a model that names none gets this (a judge's verdict fits many times)."""

SHARED_PREFIX = "jurist_shared_prefix"
"""A body field for Anthropic only: leading characters of the first user message that the question's
other requests share. Read (and dropped) by :func:`messages_params`; the cache key is made without it."""
CACHE_MARK = {"type": "ephemeral"}
_CACHE_MINIMUMS = (  # Anthropic's shortest cacheable prompt per model family (tokens); others: 1024
    ("opus-4-5", 4096),
    ("opus-4-6", 4096),
    ("haiku-4-5", 4096),
    ("sonnet-4-6", 2048),
    ("haiku", 2048),
)

_REFUSED = (
    "logprobs",
    "top_logprobs",
    "response_format",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "min_p",
    "reasoning_effort",
)
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
}


def anthropic_headers(api_key: str | None) -> dict[str, str]:
    """Anthropic's headers: the key in ``x-api-key`` (never in a body), the API version pinned."""
    headers = {"Content-Type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
    if api_key:
        headers["x-api-key"] = api_key
    return headers


def _text(content: Any) -> str:
    """A message's content as text (a list of OpenAI content parts: their text parts joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def cache_minimum(model: str) -> int:
    """The fewest tokens a prompt prefix must have for Anthropic to cache it (a shorter marked prefix is
    answered uncached at the full rate, so it is not marked)."""
    name = model.lower().replace(".", "-")
    return next((tokens for family, tokens in _CACHE_MINIMUMS if family in name), 1024)


def with_shared_prefix(body: bytes, shared: int) -> bytes:
    """``body`` with :data:`SHARED_PREFIX` set (the synchronous path: the key was made before)."""
    if shared <= 0:
        return body
    return json.dumps({**json.loads(body), SHARED_PREFIX: shared}).encode()


def counts_prompt_tokens(spec: ModelSpec) -> bool:
    """Whether each request to ``spec`` is counted in o200k tokens as it is sent (Anthropic's Messages API:
    where to mark its prompt cache, :func:`_mark_cache`)."""
    return spec.api_type == "anthropic"


@functools.lru_cache(maxsize=32)
def _system_tokens(system: str) -> int:
    """A judge's system prompt is the same in all its requests: counted once."""
    return count_text_tokens(system)


def _mark_cache(params: dict[str, Any], shared: int) -> None:
    """Mark the longest shared prefix Anthropic would cache: the system prompt and the first ``shared``
    characters of the first user message, else the system prompt alone; nothing when too short. Token
    counts are o200k's, which generally counts English in fewer tokens than Claude's tokenizer; a marked
    prefix that still falls short is answered uncached at the full rate, never refused."""
    minimum = cache_minimum(str(params["model"]))
    system = params.get("system") or ""
    first = next((t for t in params["messages"] if t["role"] == "user"), None)
    head = first["content"][:shared] if first is not None and shared > 0 else ""
    if len(system) + len(head) < minimum:  # a token is a character at least: too short, uncounted
        return
    tokens = _system_tokens(system) if system else 0
    if first is not None and head:
        rest = first["content"][len(head) :]
        if tokens + count_text_tokens(head) >= minimum:
            blocks = [{"type": "text", "text": head, "cache_control": dict(CACHE_MARK)}]
            first["content"] = blocks + ([{"type": "text", "text": rest}] if rest else [])
            return
    if system and tokens >= minimum:
        params["system"] = [{"type": "text", "text": system, "cache_control": dict(CACHE_MARK)}]


def messages_params(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions request body as Anthropic Messages ``params`` (what ``POST /v1/messages`` and a
    Message Batches request take). Raises :class:`RequestFailed` (kind ``config``) for a field Messages
    cannot honour."""
    for name in _REFUSED:
        if body.get(name) not in (None, False):
            raise RequestFailed(
                f"the Anthropic Messages API has no {name!r}: this request cannot be sent there",
                kind="config",
            )
    if int(body.get("n") or 1) != 1:
        message = "the Anthropic Messages API answers one choice per request (n=1)"
        raise RequestFailed(message, kind="config", status=400)  # as a server refusing n says it
    system = [_text(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system"]
    turns = [
        {"role": m["role"], "content": _text(m.get("content"))}
        for m in body.get("messages", [])
        if m.get("role") in ("user", "assistant")
    ]
    params: dict[str, Any] = {
        "model": body["model"],
        "max_tokens": int(body.get("max_tokens") or body.get("max_completion_tokens") or DEFAULT_MAX_TOKENS),
        "messages": turns,
    }
    if system:
        params["system"] = "\n\n".join(system)
    for name in ("temperature", "top_p", "top_k"):
        if body.get(name) is not None:
            params[name] = body[name]
    stop = body.get("stop")
    if stop:
        params["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    _mark_cache(params, int(body.get(SHARED_PREFIX) or 0))
    return params


def chat_reply(message: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic Messages reply as a chat-completions reply: text blocks joined as the answer,
    thinking blocks as ``reasoning_content``, ``usage`` in OpenAI's names (prompt tokens include the
    prompt-cache reads and writes, the reads also as ``cached_tokens``, the writes as
    ``cache_write_tokens``, both in ``prompt_tokens_details``)."""
    blocks = message.get("content")
    if not isinstance(blocks, list):
        raise ValueError("the Messages reply has no content list")
    text = "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text")
    thought = "".join(
        str(b.get("thinking", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "thinking"
    )
    usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
    chat: dict[str, Any] = {
        "id": message.get("id"),
        "object": "chat.completion",
        "model": message.get("model"),
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": text,
                    **({"reasoning_content": thought} if thought else {}),
                },
                "finish_reason": _STOP_REASONS.get(
                    str(message.get("stop_reason")), message.get("stop_reason")
                ),
            }
        ],
    }
    if usage:
        read = usage.get("cache_read_input_tokens") or 0
        written = usage.get("cache_creation_input_tokens") or 0
        prompt = usage.get("input_tokens")
        if isinstance(prompt, int) and isinstance(read, int) and isinstance(written, int):
            prompt += read + written
        details = {
            **({"cached_tokens": read} if read else {}),
            **({"cache_write_tokens": written} if written else {}),
        }
        chat["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": usage.get("output_tokens"),
            **({"prompt_tokens_details": details} if details else {}),
        }
    return chat


def chat_reply_bytes(payload: bytes) -> bytes:
    """:func:`chat_reply` of a raw Messages reply body (an unreadable one is passed on as it is, for the
    reply parser to call unreadable)."""
    try:
        message = json.loads(payload)
    except ValueError:
        return payload
    if not isinstance(message, dict) or message.get("type") != "message":
        return payload
    try:
        return json.dumps(chat_reply(message)).encode()
    except ValueError:
        return payload


class AnthropicEndpoint(EndpointClient):
    """``POST {base}/messages`` with Anthropic's headers: the body the client built (chat-completions
    shape, what the request cache keys on) is sent as Messages ``params`` and the reply read back as a
    chat-completions reply, so limits, retries, the cache and the verdict readers apply unchanged."""

    path = "/messages"

    def headers_for(self, api_key: str | None) -> dict[str, str]:
        return anthropic_headers(api_key)

    def wire_body(self, body: bytes) -> bytes:
        return json.dumps(messages_params(json.loads(body))).encode()

    def chat_payload(self, payload: bytes) -> bytes:
        return chat_reply_bytes(payload)


def anthropic_endpoints(spec: ModelSpec, budget: ConnectionBudget | None) -> list[EndpointClient]:
    """The endpoints of an ``api_type: anthropic`` model (Anthropic's own API unless ``api_base`` says)."""
    return [
        AnthropicEndpoint(
            ep.api_base or ANTHROPIC_API_BASE, ep.api_key, ep.model_name or spec.model, spec.parallel, budget
        )
        for ep in spec.resolved_endpoints()
    ]
