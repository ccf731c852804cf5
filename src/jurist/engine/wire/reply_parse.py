"""Reading a chat.completion body: the answer, the thought, the token counts, what was ignored and why.

Only a reply that says something counts (else ValueError, and the client retries it); the metadata around
a readable answer never makes it unreadable (a field of the wrong type is dropped with a note); a body cut
at the reply cap (:mod:`jurist.engine.wire.reply_cap`) keeps the answer it holds, flagged.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from jurist.engine.wire.reply_cap import MIB, CutBody, cut_message
from jurist.engine.wire.reply_fields import logprobs_problem
from jurist.tokens import shown, token_count

_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)
_OPEN_THINK = re.compile(r"^\s*<think>")


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
    cache_write_tokens: int | None = None
    notes: list[str] = field(default_factory=list)
    """Fields ignored for their wrong type or shape (see :attr:`Completion.notes`)."""
    cut_at_bytes: int | None = None
    content_head: str | None = None
    """The start of ``message.content`` moved out of :attr:`text` (a leading thought with the space
    around it), so that ``content_head + text`` is the content as the model wrote it; None when the answer
    is the content itself. A benchmark whose upstream cuts the thought its own way cuts that text."""


def parse_completion(body: bytes) -> ParsedReply:
    """Pull text, reasoning, token counts and logprobs out of a chat.completion body, or raise ValueError.

    Only a reply that says something counts: a body that is not a JSON object (an HTML error page served
    with status 200, a body cut short), no choices, or ``content: null`` with neither a tool call nor a
    thought is unreadable, so the client retries it like a transient error instead of recording "" as the
    model's answer. ``content: ""`` is a deliberate empty answer and is returned (flagged by the caller).
    A ``<think>`` that never closes in a reply cut by the token limit (``finish_reason: length``) is a
    thought cut off: the answer is empty, flagged ``truncated_thought``, the thought kept as reasoning. A
    reply that ended on its own with its ``<think>`` never closed keeps its whole text as the answer, with
    a note (the ledger counts it and says so once per model): no answer is ever emptied in silence.

    The metadata around a readable answer (usage, finish reason, logprobs, reasoning) never makes it
    unreadable: a field of the wrong type or shape is dropped with a note (:attr:`ParsedReply.notes`), so
    a broken ``usage`` costs an estimated count, not the answer.
    """
    if isinstance(body, CutBody):
        return _parse_cut(body)
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


def _parse_cut(body: CutBody) -> ParsedReply:
    """A body cut at the reply cap: its first answer as far as it goes, flagged and noted (the ledger
    counts it and says so once per model); no usage (it comes last), so the counts are jurist's own."""
    message, finish = cut_message(body)
    reply = _parse_choice({"message": message, "finish_reason": finish}, 0)
    reply.cut_at_bytes = len(body)
    reply.notes.append(
        f"body is over the reply cap ({len(body) / MIB:g} MiB, max_reply_mb): it was read that far and "
        "its answer kept as cut there"
    )
    return reply


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
    # written to the prompt cache (Anthropic's cache_creation_input_tokens, as wire/anthropic.py names it)
    written = _usage_detail(usage, "prompt_tokens_details", "cache_write_tokens", notes)
    if (
        written is not None
        and reply.prompt_tokens is not None
        and written + (cached or 0) > reply.prompt_tokens
    ):
        notes.append("usage.prompt_tokens_details.cache_write_tokens is more than prompt_tokens")
        written = None
    reply.reasoning_tokens, reply.cached_tokens, reply.cache_write_tokens = reasoning, cached, written


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
    written = content
    match = _THINK.match(content)
    if match:
        reasoning = (reasoning + "\n" if reasoning else "") + match.group(1).strip()
        content = content[match.end() :]
    elif _OPEN_THINK.match(content) and finish == "length":  # the token limit came inside the thought
        thought = _OPEN_THINK.sub("", content, count=1).strip()
        reasoning = (reasoning + "\n" if reasoning else "") + thought
        content, truncated = "", True
    elif _OPEN_THINK.match(content):  # ended on its own with the thought never closed: what it said stays
        notes.append(
            f"message.content is a <think> never closed (finish_reason {finish!r}), kept whole as the answer"
        )
    reply = ParsedReply(content, reasoning, None, None, finish, logprobs, truncated, notes=notes)
    if written != content and written.endswith(content):
        reply.content_head = written[: len(written) - len(content)]
    return reply


def _text_of_parts(parts: list[Any]) -> str:
    """``message.content`` given as OpenAI's list of content parts (``[{"type": "text", "text": ...}]``):
    its text parts joined in order, as pieces of one answer. Any other kind of part (an image, audio) is
    not an answer a judge can read, so a reply made only of such parts stays unreadable."""
    texts = [part.get("text") for part in parts if isinstance(part, dict) and part.get("type") == "text"]
    if not texts or not all(isinstance(text, str) for text in texts):
        raise ValueError("message.content is a list without text parts")
    return "".join(str(text) for text in texts)
