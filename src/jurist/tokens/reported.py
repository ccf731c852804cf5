"""Token counts a server reported, checked: a count is a whole number in range, or it is no count.

The wire parser (:mod:`jurist.engine.wire.reply_parse`) and the ledger (:mod:`jurist.money.ledger`) both
hold a reply's ``usage`` to this rule, so a broken field is noted and estimated, never billed as it came.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_REPLY_TOKENS = 1 << 31
"""More tokens than any model reads or writes in one request: a count above it is not a count."""


def shown(value: Any) -> str:
    """A reply's value as a note shows it: its JSON, cut short."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def token_count(value: Any, name: str, notes: list[str]) -> int | None:
    """A token count a server gave: a whole number from 0 to :data:`MAX_REPLY_TOKENS` (a whole float
    too, as some servers send). None when not given; anything else (a string, a negative or fractional
    number, a count no request can have) is not a count: None, with a note in ``notes``."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_REPLY_TOKENS:
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        if 0 <= value <= MAX_REPLY_TOKENS:
            return int(value)
    notes.append(f"{name} is {shown(value)}, not a token count")
    return None
