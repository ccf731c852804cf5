"""Keep API keys out of everything jurist writes or prints.

Every key read from a models file, the environment or a ``.env`` file is registered here, and every error
message, failure record and log line passes through :func:`mask` before it leaves the process.

Every registered key is masked, whatever its length. Keys of 6 characters or more are replaced wherever
they occur. A shorter key (a local server's ``abc``, a test's ``k1``) is replaced only where it stands as a
whole token, not inside a longer word: substring masking of a 2-character key would turn every ``k1`` in
``rank1``/``task1`` and every matching pair of letters in a server's message into ``***`` and make the
message unreadable, while a short key leaking into text almost always appears as a token of its own
(``Bearer abc``, ``key=abc``, ``'abc'``). The residual risk (a short key glued to other word characters) is
small, and a key that short protects little anyway.
"""

from __future__ import annotations

import re

_MASK = "***"
_SHORT = 6
_secrets: set[str] = set()
_short: set[str] = set()
_short_pattern: re.Pattern[str] | None = None
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}")


def register_secret(value: str | None) -> None:
    """Remember a secret so :func:`mask` can blank it; a value with a line break is refused (no key is
    one line short of valid, and masking cannot match it across rewrapped text)."""
    global _short_pattern
    if not value:
        return
    if "\n" in value or "\r" in value:
        raise ValueError("a key contains a line break; a key is one line")
    if len(value) >= _SHORT:
        _secrets.add(value)
    elif value not in _short:
        _short.add(value)
        alternation = "|".join(re.escape(s) for s in sorted(_short, key=len, reverse=True))
        # A whole token: no word character (or the key-ish "-" / ".") on either side.
        _short_pattern = re.compile(rf"(?<![\w.\-])(?:{alternation})(?![\w\-]|\.\w)")


def mask(text: str) -> str:
    """Replace every registered secret (and any bearer token) in ``text`` with ``***``."""
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, _MASK)
    if _short_pattern is not None:
        text = _short_pattern.sub(_MASK, text)
    return _BEARER.sub(lambda m: m.group(1) + _MASK, text)
