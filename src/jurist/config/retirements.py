"""When a hosted model was (or will be) shut down: the facts behind "this benchmark's reference judge no
longer exists" (``jurist list``, a run's notes, the pre-run check's 404).

From OpenAI's deprecations page as of 2026-12 (docs/judge-replacement.md cites it); a name matches the model
or a dated snapshot of it (``gpt-4.1-2025-04-14``), never another model (``gpt-4.1-mini`` has its own row).
"""

from __future__ import annotations

import datetime
import re

SHUTDOWNS: dict[str, str] = {
    "gpt-4-1106-preview": "2026-10-23",
    "gpt-4-turbo": "2026-10-23",
    "gpt-4-turbo-preview": "2026-10-23",
    "gpt-4-0125-preview": "2026-10-23",
    "gpt-4": "2026-10-23",
    "gpt-4-0613": "2026-10-23",
    "gpt-4-0314": "2026-10-23",
    "o3-mini": "2026-10-23",
    "o1": "2026-10-23",
    "o4-mini": "2026-10-23",
    "gpt-4.1-nano": "2026-10-23",
    "gpt-5": "2026-12-11",
    "o3": "2026-12-11",
    "gpt-4.1": "2027-01-14",
    "gpt-4.1-mini": "2027-01-14",
    "gpt-4o": "2027-01-14",
    "gpt-4o-mini": "2027-01-14",
}
RETIREMENT_SOURCE = "OpenAI's deprecations page (developers.openai.com/api/docs/deprecations), as of 2026-12"
REPLACE_HINT = "qualify a replacement with: jurist judges replace --bench {bench} --judge MODEL"


def shutdown_of(model: str) -> str | None:
    """The shutdown date (ISO) of ``model`` or a dated snapshot of it; None when none is known."""
    name = model.rsplit("/", 1)[-1].lower()
    for base in sorted(SHUTDOWNS, key=len, reverse=True):
        if re.fullmatch(re.escape(base) + r"(-\d{4}(-\d{2}-\d{2})?|-\d{8})?", name):
            return SHUTDOWNS[base]
    return None


def retirement_phrase(model: str, today: datetime.date | None = None) -> str | None:
    """``gpt-4-1106-preview was shut down on 2026-10-23`` (or ``shuts down on``); None when not retiring."""
    date = shutdown_of(model)
    if date is None:
        return None
    past = datetime.date.fromisoformat(date) <= (today or datetime.date.today())
    return f"{model} {'was shut down' if past else 'shuts down'} on {date}"
