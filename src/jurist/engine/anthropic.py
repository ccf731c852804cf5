"""Anthropic's native Messages API, both ways: a chat-completions body as Messages ``params``, and a
Messages reply as a chat-completions reply, so the engine's one reply parser (and every verdict reader
after it) reads an Anthropic answer exactly as it reads an OpenAI one.

Used by the synchronous ``api_type: anthropic`` endpoint (:class:`AnthropicEndpoint`) and by the Message
Batches wire alike. A field
Messages has no counterpart for (``logprobs``, ``n`` > 1, ``response_format``, penalties, ``seed``) is
refused with a one-line reason rather than dropped: a judge that asked for logprobs must not silently get
a verdict read without them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import aiohttp

from jurist.config import ANTHROPIC_API_BASE
from jurist.engine.transport import EndpointClient, RequestFailed

if TYPE_CHECKING:
    from jurist.config import ModelSpec
    from jurist.engine.connections import ConnectionBudget

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
"""Messages requires ``max_tokens``; a model that names none gets this (a judge's verdict fits many times)."""

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
    return params


def chat_reply(message: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic Messages reply as a chat-completions reply: text blocks joined as the answer,
    thinking blocks as ``reasoning_content``, ``usage`` in OpenAI's names (prompt tokens include the
    prompt-cache reads and writes, the reads also as ``cached_tokens``)."""
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
        chat["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": usage.get("output_tokens"),
            **({"prompt_tokens_details": {"cached_tokens": read}} if read else {}),
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

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model_name: str,
        connections: int,
        budget: ConnectionBudget | None = None,
    ) -> None:
        super().__init__(base_url, None, model_name, connections, budget)
        self.url = self.base_url + "/messages"
        self._headers = anthropic_headers(api_key)

    async def post(self, body: bytes, timeout: aiohttp.ClientTimeout) -> tuple[int, bytes, str | None]:
        params = messages_params(json.loads(body))
        status, payload, retry_after = await super().post(json.dumps(params).encode(), timeout)
        return status, (chat_reply_bytes(payload) if status == 200 else payload), retry_after


def anthropic_endpoints(spec: ModelSpec, budget: ConnectionBudget | None) -> list[EndpointClient]:
    """The endpoints of an ``api_type: anthropic`` model (Anthropic's own API unless ``api_base`` says)."""
    return [
        AnthropicEndpoint(
            ep.api_base or ANTHROPIC_API_BASE, ep.api_key, ep.model_name or spec.model, spec.parallel, budget
        )
        for ep in spec.resolved_endpoints()
    ]
