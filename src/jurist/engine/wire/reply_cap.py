"""The reply cap: a body longer than a model's ``max_reply_mb`` is read that far, its answer kept, flagged.

A runaway or hostile server can send a body of any size; read whole it holds memory and time without
bound. So the wire layer stops reading at the cap and closes the connection (the rest is never read,
the socket never pooled half-read), and the answer is what the cut body holds: the first choice's
``message.content`` (or, if the body ends before it, the thought before it), taken from the JSON text as
far as it goes. Nothing is cut silently: the completion says ``cut_at_bytes``, its record keeps that in
``usage``, and the ledger counts the reply with a note (field ``body``) that the run's output gives once
per model. The default cap (64 MiB) is far above any answer a judge or a person would read.
"""

from __future__ import annotations

import json
import re
from typing import Any

import aiohttp

MIB = 1 << 20
DEFAULT_MAX_REPLY_MB = 64.0
_CHUNK = 1 << 20
# A key of the first message: no quote stands unescaped inside a JSON string, so these match keys only.
_CONTENT = re.compile(rb'"content"\s*:\s*"')
_REASONING = re.compile(rb'"(?:reasoning_content|reasoning)"\s*:\s*"')
# How a string cut at an arbitrary byte may end in no whole character: an unfinished escape (a backslash,
# ``\u`` and up to three digits) or a high surrogate whose low half was cut off.
_CUT_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}$|\\u[0-9a-fA-F]{0,3}$|\\$")


class CutBody(bytes):
    """The first ``len(self)`` bytes of a reply body longer than the reply cap."""

    __slots__ = ()


def cap_bytes(max_reply_mb: float) -> int:
    return max(1, int(max_reply_mb * MIB))


async def read_capped(resp: aiohttp.ClientResponse, max_bytes: int | None) -> bytes:
    """The body, whole when it fits ``max_bytes``; else its first ``max_bytes`` bytes as a
    :class:`CutBody`, the response closed (its connection dropped: the rest is never read)."""
    if max_bytes is None:
        return await resp.read()
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.content.iter_chunked(_CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            resp.close()
            return CutBody(b"".join(chunks)[:max_bytes])
    return b"".join(chunks)


def cut_to(payload: bytes, max_bytes: int | None) -> bytes:
    """A body made in this process (a local model, LiteLLM) held to the same cap as one read off the
    wire: its first ``max_bytes`` bytes as a :class:`CutBody` when it is longer."""
    if max_bytes is None or len(payload) <= max_bytes or isinstance(payload, CutBody):
        return payload
    return CutBody(payload[:max_bytes])


def cut_message(body: bytes) -> tuple[dict[str, Any], str | None]:
    """The first choice's message as far as a cut body holds it, and its finish reason when the
    content was whole (``"length"`` when the text itself was cut); ValueError when neither the answer
    nor a thought began within the body."""
    match = _CONTENT.search(body)
    if match is not None:
        text, whole = _string_from(body, match.end() - 1)
        return {"content": text}, (None if whole else "length")
    match = _REASONING.search(body)
    if match is not None:  # the body ended inside a thought: no answer, the thought kept
        thought, _ = _string_from(body, match.end() - 1)
        return {"content": None, "reasoning": thought}, "length"
    raise ValueError("the reply is over the reply cap and no answer begins within it")


def _string_from(body: bytes, quote: int) -> tuple[str, bool]:
    """The JSON string that opens at ``body[quote]``: whole (True) if it closes within the body, else
    what it holds up to the cut (its last, partial character dropped)."""
    raw = body[quote:]
    for drop in range(4):  # a UTF-8 character cut in two at the end of the body
        try:
            text = raw[: len(raw) - drop].decode("utf-8")
            break
        except UnicodeDecodeError:
            continue
    else:
        text = raw.decode("utf-8", errors="replace")
    try:
        value, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        pass
    else:
        if isinstance(value, str):
            return value, True
    value = json.loads(_without_cut_escape(_without_cut_escape(text)) + '"')  # "\\ud83d\\u" takes two
    if not isinstance(value, str):
        raise ValueError("the cut reply's text is not a JSON string")
    return value, False


def _without_cut_escape(text: str) -> str:
    """``text`` without an escape cut short at its end; only its last characters are looked at, and the
    backslashes before them (an even run: the escape is real; an odd one: its backslash is escaped)."""
    cut = _CUT_ESCAPE.search(text, max(0, len(text) - 12))
    if cut is None:
        return text
    before = text[: cut.start()]
    run = len(before) - len(before.rstrip("\\"))
    return before if run % 2 == 0 else text
