"""OpenAI's Responses API (``POST /v1/responses``) behind the chat-completions interface.

simple-evals grades HealthBench Professional with ``gpt-5.4-2026-03-05`` through the Responses API
(PR #108): the conversation as ``input``, ``reasoning: {"effort": ...}``, and neither a system message, a
temperature nor a token limit. An ``api_type: openai-responses`` model sends that shape: the body the
client built (chat-completions shape, which the request cache keys on) is rewritten field by field on the
way out, and the reply read back into a chat.completion, so limits, retries, the cache and the readers
apply unchanged. Only fields the body holds are sent: what the models file leaves unset stays unset.
"""

from __future__ import annotations

import json
from typing import Any

from jurist.config import ModelSpec
from jurist.engine.wire.connections import ConnectionBudget
from jurist.engine.wire.transport import EndpointClient

_RENAMED = {"max_tokens": "max_output_tokens"}
_DROPPED = ("n", "stop", "presence_penalty", "frequency_penalty", "seed", "logprobs", "top_logprobs")
"""Chat-completions fields the Responses API does not take: never sent (``n`` > 1 is not asked of it)."""


def responses_params(chat: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions request body as a Responses API request."""
    params: dict[str, Any] = {"model": chat["model"], "input": chat["messages"]}
    for name, value in chat.items():
        if name in ("model", "messages") or name in _DROPPED:
            continue
        if name == "reasoning_effort":
            params["reasoning"] = {"effort": value}
        else:
            params[_RENAMED.get(name, name)] = value
    return params


def chat_reply(response: dict[str, Any]) -> dict[str, Any]:
    """A Responses API reply as a chat.completion: the ``output_text`` parts of its messages as the
    answer, its reasoning summaries as the thought, ``incomplete`` (token limit) as ``length``."""
    texts: list[str] = []
    thoughts: list[str] = []
    for item in response.get("output") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            texts += [
                str(part.get("text", ""))
                for part in item.get("content") or []
                if isinstance(part, dict) and part.get("type") == "output_text"
            ]
        elif item.get("type") == "reasoning":
            thoughts += [str(s.get("text", "")) for s in item.get("summary") or [] if isinstance(s, dict)]
    incomplete = response.get("status") == "incomplete"
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if thoughts:
        message["reasoning_content"] = "\n".join(thoughts)
    chat: dict[str, Any] = {
        "id": response.get("id"),
        "object": "chat.completion",
        "model": response.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": "length" if incomplete else "stop"}],
    }
    usage = response.get("usage")
    if isinstance(usage, dict):
        details = usage.get("output_tokens_details") or {}
        cached = usage.get("input_tokens_details") or {}
        chat["usage"] = {
            "prompt_tokens": usage.get("input_tokens"),
            "completion_tokens": usage.get("output_tokens"),
            "completion_tokens_details": {"reasoning_tokens": details.get("reasoning_tokens")},
            "prompt_tokens_details": {"cached_tokens": cached.get("cached_tokens")},
        }
    return chat


class ResponsesEndpoint(EndpointClient):
    """``POST {base}/responses``: the chat body rewritten by :func:`responses_params`, the reply read
    back by :func:`chat_reply` (an unreadable one is passed on as it came, for the client to retry)."""

    path = "/responses"

    def wire_body(self, body: bytes) -> bytes:
        return json.dumps(responses_params(json.loads(body))).encode()

    def chat_payload(self, payload: bytes) -> bytes:
        try:
            data = json.loads(payload)
        except ValueError:
            return payload
        if not isinstance(data, dict):
            return payload
        return json.dumps(chat_reply(data)).encode()


def responses_endpoints(spec: ModelSpec, budget: ConnectionBudget | None) -> list[EndpointClient]:
    """The endpoints of an ``api_type: openai-responses`` model."""
    return [
        ResponsesEndpoint(ep.base_url, ep.api_key, ep.model_name or spec.model, spec.parallel, budget)
        for ep in spec.resolved_endpoints()
    ]
