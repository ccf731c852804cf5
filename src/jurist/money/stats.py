"""run.json's ``usage`` totals, read off a ledger: the view of the rows that run.json has always held."""

from __future__ import annotations

from typing import Any

from jurist.money.ledger import Ledger
from jurist.money.rows import Row

_PER_MODEL = ("requests", "cache_hits", "prompt_tokens", "completion_tokens")


class EngineStats:
    """run.json's ``usage`` totals (requests, cache hits, retries, failures, tokens; overall and per model)
    read off the engine's ledger, which counts each request once by phase and model. Probes (phase
    ``check``) are left out, as ``usage`` never held them; the ledger shows them in their own rows."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger

    def _rows(self) -> list[tuple[str, Row]]:
        return [(alias, row) for (phase, alias), row in self._ledger.rows() if phase != "check"]

    def _sum(self, name: str) -> int:
        return sum(int(getattr(row, name)) for _, row in self._rows())

    requests = property(lambda self: self._sum("requests"))
    cache_hits = property(lambda self: self._sum("cache_hits"))
    retries = property(lambda self: self._sum("retries"))
    failures = property(lambda self: self._sum("failed"))
    prompt_tokens = property(lambda self: self._sum("prompt_tokens"))
    completion_tokens = property(lambda self: self._sum("completion_tokens"))

    @property
    def per_model(self) -> dict[str, dict[str, int]]:
        models: dict[str, dict[str, int]] = {}
        for alias, row in self._rows():
            counts = models.setdefault(alias, dict.fromkeys(_PER_MODEL, 0))
            for name in _PER_MODEL:
                counts[name] += int(getattr(row, name))
        return models

    def summary(self) -> dict[str, Any]:
        """Totals for ``run.json``: requests, cache hits, retries and tokens, overall and per model."""
        return {
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "per_model": self.per_model,
        }
