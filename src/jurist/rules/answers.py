"""What a rule checker sees of an answer: the visible text, never a reasoning model's thought.

The engine already moves a leading ``<think>…</think>`` (or ``reasoning_content``) out of the answer and
flags an answer whose thought never closed (``usage.truncated_thought``). Answers from elsewhere
(``--answers FILE``, imported runs) may still carry the block, so it is removed here too; a thought that
never closed means the model ran out of tokens while thinking: the answer is empty and counted as
truncated, never checked as if the thought were the answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_OPEN = re.compile(r"^\s*<think>", re.IGNORECASE)
_CLOSE = re.compile(r"</think>", re.IGNORECASE)


def visible_text(text: str) -> tuple[str, bool]:
    """(the answer after any leading thought, whether the thought never closed)."""
    if not _OPEN.match(text):
        return text, False
    closes = list(_CLOSE.finditer(text))
    if not closes:
        return "", True
    return text[closes[-1].end() :].lstrip(), False


def visible_answer(record: Mapping[str, Any]) -> tuple[str, bool]:
    """The checkable text of an answer record and whether it was cut off inside its thought."""
    usage = record.get("usage") or {}
    if usage.get("truncated_thought"):
        return "", True
    return visible_text(str(record.get("answer", "")))
