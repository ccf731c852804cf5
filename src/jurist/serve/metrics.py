"""What ``GET /metrics`` says: requests by endpoint and status, latency percentiles, items, the judge's
requests and cache hits, spend, and the spend of each training step a client named (``step``).

The step ledger is also appended to ``steps.jsonl`` in the service's directory, one line per item with a
step, so a trainer's cost per step survives the server (``jurist serve reward`` prints where it is).
"""

from __future__ import annotations

import math
import time
from collections import Counter, deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurist.serve.service import RewardItem, RewardOutcome
from jurist.store import JsonlAppender

LATENCY_WINDOW = 10_000
"""Latencies kept for the percentiles (the most recent ones)."""
STEPS_SHOWN = 200
"""Training steps /metrics lists (the latest); steps.jsonl keeps every one."""


def percentile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) by the nearest rank; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


class ServeMetrics:
    """Counters of one server's life, cheap enough to update on every request."""

    def __init__(self, steps_file: Path | None = None) -> None:
        self.started = time.time()
        self.requests: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()
        self.latency: dict[str, deque[float]] = {}
        self.items = 0
        self.invalid = 0
        self.errors = 0
        self.steps: dict[int, dict[str, Any]] = {}
        self._out = JsonlAppender(steps_file) if steps_file is not None else None

    def request(self, endpoint: str, status: int, seconds: float) -> None:
        self.requests[endpoint] += 1
        self.statuses[str(status)] += 1
        self.latency.setdefault(endpoint, deque(maxlen=LATENCY_WINDOW)).append(seconds)

    def item(self, item: RewardItem, outcome: RewardOutcome) -> None:
        self.items += 1
        self.invalid += outcome.invalid
        self.errors += outcome.error is not None
        if item.step is None:
            return
        row = self.steps.get(item.step)
        if row is None:
            row = self.steps[item.step] = {"step": item.step, "items": 0, "cost_usd": None}
            row.update(dict.fromkeys(("requests", "cache_hits", "prompt_tokens", "completion_tokens"), 0))
        cost = outcome.cost
        row["items"] += 1
        for name in ("requests", "cache_hits", "prompt_tokens", "completion_tokens"):
            row[name] += getattr(cost, name)
        if cost.cost_usd is not None:
            row["cost_usd"] = (row["cost_usd"] or 0.0) + cost.cost_usd
        if self._out is not None:
            self._out.append({"step": item.step, "uid": outcome.uid, "time": time.time(), **cost.as_dict()})
        while len(self.steps) > STEPS_SHOWN:
            del self.steps[min(self.steps)]

    def document(self, engine_usage: Mapping[str, Any], ledger_total: Mapping[str, Any]) -> dict[str, Any]:
        """The /metrics body."""
        latency = {
            endpoint: {
                "n": len(values),
                "p50_ms": _ms(percentile(list(values), 0.5)),
                "p90_ms": _ms(percentile(list(values), 0.9)),
                "p99_ms": _ms(percentile(list(values), 0.99)),
            }
            for endpoint, values in sorted(self.latency.items())
        }
        return {
            "uptime_s": round(time.time() - self.started, 3),
            "requests": dict(self.requests),
            "statuses": dict(self.statuses),
            "latency": latency,
            "items": self.items,
            "invalid_items": self.invalid,
            "failed_items": self.errors,
            "judge_requests": engine_usage.get("requests", 0),
            "cache_hits": engine_usage.get("cache_hits", 0),
            "prompt_tokens": engine_usage.get("prompt_tokens", 0),
            "completion_tokens": engine_usage.get("completion_tokens", 0),
            "cost_usd": ledger_total.get("cost_usd"),
            "steps": [self.steps[step] for step in sorted(self.steps)],
        }

    def close(self) -> None:
        if self._out is not None:
            self._out.close()


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000.0, 3)


__all__ = ["ServeMetrics", "percentile"]
