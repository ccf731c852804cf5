"""Keep API keys out of everything jurist writes or prints.

Every key read from a models file, the environment or a ``.env`` file is registered here, and every error
message, failure record and log line passes through :func:`mask` before it leaves the process.
"""

from __future__ import annotations

import re

_MASK = "***"
_secrets: set[str] = set()
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}")


def register_secret(value: str | None) -> None:
    """Remember a secret so :func:`mask` can blank it (short values are ignored as too ambiguous)."""
    if value and len(value) >= 6:
        _secrets.add(value)


def mask(text: str) -> str:
    """Replace every registered secret (and any bearer token) in ``text`` with ``***``."""
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, _MASK)
    return _BEARER.sub(lambda m: m.group(1) + _MASK, text)
