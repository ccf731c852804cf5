"""The fields around a reply's answer, checked by type: what a server says about usage and the answer's
metadata is taken only where it has the type and shape it must have; anything else is no value, and the
reader notes it (:func:`jurist.engine.wire.reply_parse.parse_completion`), so a broken field never costs the
answer, nor crashes whoever reads the field later."""

from __future__ import annotations

from typing import Any


def logprobs_problem(logprobs: Any) -> str | None:
    """What is wrong with a choice's ``logprobs`` (None: nothing). Chat completions give
    ``{"content": [{"token": str, "logprob": number, "top_logprobs": [{"token", "logprob"}]}]}``, legacy
    completions ``{"tokens": [str], "token_logprobs": [number], "top_logprobs": [{str: number}]}``;
    the judges that read them trust that shape, so any other is dropped (linear in its size)."""
    if logprobs is None:
        return None
    if not isinstance(logprobs, dict):
        return f"a JSON {type(logprobs).__name__}"
    content = logprobs.get("content")
    if content is not None:
        if not isinstance(content, list) or not all(_is_position(entry) for entry in content):
            return "content is not a list of {token, logprob, top_logprobs}"
        return None
    tokens, values, tops = (logprobs.get(name) for name in ("tokens", "token_logprobs", "top_logprobs"))
    if tokens is not None and not (isinstance(tokens, list) and all(isinstance(t, str) for t in tokens)):
        return "tokens is not a list of strings"
    if values is not None and not (
        isinstance(values, list) and all(v is None or _is_number(v) for v in values)
    ):
        return "token_logprobs is not a list of numbers"
    if tops is not None and not (
        isinstance(tops, list)
        and all(
            top is None or (isinstance(top, dict) and all(_is_number(v) for v in top.values()))
            for top in tops
        )
    ):
        return "top_logprobs is not a list of {token: logprob}"
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_alternative(entry: Any) -> bool:
    return (
        isinstance(entry, dict) and isinstance(entry.get("token"), str) and _is_number(entry.get("logprob"))
    )


def _is_position(entry: Any) -> bool:
    if not _is_alternative(entry):
        return False
    alternatives = entry.get("top_logprobs")
    return alternatives is None or (
        isinstance(alternatives, list) and all(_is_alternative(alt) for alt in alternatives)
    )
