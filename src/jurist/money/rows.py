"""A ledger row: one (phase, model)'s counts, and how rows add up across runs (:mod:`jurist.money.ledger`
keeps them; a run directory's usage log is rebuilt into them)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from jurist.tokens import merge_labels

Phase = Literal["generate", "judge", "reask", "check", "probe"]
PHASES: tuple[Phase, ...] = ("check", "generate", "judge", "reask", "probe")
"""``probe``: the judge card's requests (jurist.audit), counted apart from the judgments they test."""


@dataclass
class Row:
    """One (phase, model)'s counts. ``requests`` counts every attempt sent (what a server sees);
    ``replies`` the calls that got an answer (a request with ``n`` choices is one), ``choices`` the answers
    they carried; ``cached_tokens`` the prompt tokens read from the provider's prompt cache,
    ``cache_write_tokens`` those written to it; ``estimated`` the replies whose token counts the server
    left out (or gave in a form that is no count) and jurist counted, ``estimated_by`` with which
    tokenizer (:mod:`jurist.tokens.counters`; "o200k (approximate)" for a model whose own tokenizer is
    not known); ``malformed`` the replies with a field of the wrong type or shape, ignored,
    ``malformed_fields`` which fields; ``batched`` the replies
    that came through a batch API, ``batch_cost_usd`` what they cost at its rates (part of ``cost_usd``),
    ``batch_sync_cost_usd`` what they would have cost sent synchronously."""

    requests: int = 0
    retries: int = 0
    failed: int = 0
    cache_hits: int = 0
    replies: int = 0
    choices: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    estimated: int = 0
    estimated_by: str | None = None
    malformed: int = 0
    malformed_fields: str | None = None
    batched: int = 0
    batch_cost_usd: float = 0.0
    batch_sync_cost_usd: float = 0.0
    cost_usd: float | None = None
    wall_s: float = 0.0
    at_limit_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["wall_s"] = round(self.wall_s, 3)
        data["at_limit_s"] = round(self.at_limit_s, 3)
        for name in _BATCH_DOLLARS:
            data[name] = round(data[name], 8)
        if self.cost_usd is not None:
            data["cost_usd"] = round(self.cost_usd, 8)
        for label in LABELS:
            if data[label] is None:
                del data[label]
        return data


_BATCH_DOLLARS = ("batch_cost_usd", "batch_sync_cost_usd")
LABELS = ("estimated_by", "malformed_fields")
"""A row's text fields: lists of names joined by "; " (each once), merged when rows add up."""
COUNTS = tuple(f.name for f in fields(Row) if f.name not in ("cost_usd", *LABELS))


def row_order(item: tuple[tuple[str, str], Any]) -> tuple[int, str]:
    """Rows in the order work happens (check, generate, judge, re-ask), then by model."""
    phase, alias = item[0]
    return (PHASES.index(phase) if phase in PHASES else len(PHASES), alias)


def add_rows(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Two rows' counts added; dollars stay unknown (None) only where neither row knows them."""
    merged: dict[str, Any] = {}
    for name in COUNTS:
        merged[name] = (a.get(name) or 0) + (b.get(name) or 0)
    costs = [c for c in (a.get("cost_usd"), b.get("cost_usd")) if isinstance(c, (int, float))]
    merged["cost_usd"] = round(sum(costs), 8) if costs else None
    for label in LABELS:
        if labels := merge_labels(a.get(label), b.get(label)):
            merged[label] = labels
    merged["wall_s"] = round(merged["wall_s"], 3)
    merged["at_limit_s"] = round(merged["at_limit_s"], 3)
    for name in _BATCH_DOLLARS:
        merged[name] = round(merged[name], 8)
    return merged


def total_of(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Every row added up; ``unpriced``: models that were sent requests but have no price (the dollar
    total leaves them out, so it is a lower bound while this list is not empty)."""
    total: dict[str, Any] = {name: 0 for name in COUNTS}
    total["cost_usd"] = None
    unpriced: set[str] = set()
    for row in rows:
        total = add_rows(total, row)
        if row.get("cost_usd") is None and row.get("requests"):
            unpriced.add(str(row.get("model")))
    total["unpriced"] = sorted(unpriced)
    return total
