"""Which failures are worth retrying, and how long to wait before the next attempt."""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass

# 408 request timeout, 409 conflict and 425 too early are transient by nature; 429 is rate limiting.
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds (fractions accepted) or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter; ``Retry-After`` wins when it asks for longer."""

    max_attempts: int = 6
    base_delay: float = 1.0
    max_delay: float = 60.0
    max_retry_after: float = 600.0

    def delay(
        self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Wait before attempt ``attempt + 1`` (counting from 1): half fixed, half random ("equal jitter")."""
        ceiling = float(min(self.max_delay, self.base_delay * (2 ** (attempt - 1))))
        jittered: float = ceiling / 2 + (rng or random).uniform(0, ceiling / 2)
        if retry_after is not None:
            return float(max(jittered, min(retry_after, self.max_retry_after)))
        return jittered
