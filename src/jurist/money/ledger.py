"""The ledger: what a run's requests cost, per phase and model, counted where the requests are sent.

Every request goes through :meth:`ModelClient.complete <jurist.engine.client.ModelClient.complete>`, so
the ledger is kept there (the client admits each request here, then settles it), in one place, from the
servers' own ``usage`` fields, instead of being pieced together from the files a run writes. A row per
(phase, model) counts requests sent, retried, failed and served from the cache; prompt, completion and
reasoning tokens; dollars where the model has a price; the time the row had a request on the wire and the
part of it spent at the concurrency limit.

The ledger reserves each request's worst case against the run's :class:`~jurist.money.budget.Budget`
(``--max-cost`` / ``--max-tokens``) before it is sent. Each request it settles (a reply, a failure, a cache
hit) is also handed to :attr:`Ledger.record` as one partial row, which a run appends to its usage log, so
what a directory spent is rebuilt from every request, not from one summary file
(:mod:`jurist.money.history`).

A reply whose usage or metadata has the wrong type is still an answer: the bad fields are ignored (token
counts then estimated, as for a reply with no usage), counted in the row's ``malformed``, named in its
``malformed_fields``, and warned about once per model and field.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from jurist.config import Price
from jurist.money.budget import Budget, NoRoom
from jurist.money.rows import Row, row_order, total_of
from jurist.tokens import CountedModel, counter_or_approximate, merge_labels, token_count

FALLBACK_MAX_TOKENS = 32_768
"""The worst case a budget assumes for a request that names no ``max_tokens`` (a warning says so)."""
_BODY_SLACK = 16  # bytes added to a body's length for the template's own tokens

log = logging.getLogger("jurist.money.ledger")


class BilledModel(CountedModel, Protocol):
    """A model as the ledger bounds and counts it (:class:`jurist.config.ModelSpec` is one)."""

    @property
    def max_tokens(self) -> int | None: ...


class Reply(Protocol):
    """One reply as the ledger bills it (the engine's :class:`~jurist.engine.Completion` is one): the
    server's counts, with the texts to count where it gave none."""

    @property
    def text(self) -> str: ...
    @property
    def reasoning(self) -> str | None: ...
    @property
    def attempts(self) -> int: ...
    @property
    def prompt_tokens(self) -> int | None: ...
    @property
    def completion_tokens(self) -> int | None: ...
    @property
    def reasoning_tokens(self) -> int | None: ...
    @property
    def cached_tokens(self) -> int | None: ...
    @property
    def cache_write_tokens(self) -> int | None: ...
    @property
    def notes(self) -> list[str]: ...
    @property
    def batch_line(self) -> str | None: ...
    @property
    def more(self) -> Sequence[Reply]: ...


def worst_prompt_tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    """An upper bound on prompt tokens for any byte-level tokenizer: every byte of the messages as JSON
    (roles and quoting included, more than any template adds) counts as a token."""
    return len(json.dumps(list(messages), ensure_ascii=False).encode("utf-8")) + _BODY_SLACK


def worst_completion_tokens(spec: BilledModel, params: Mapping[str, Any]) -> int:
    """``max_tokens`` of the request (else the model's, else :data:`FALLBACK_MAX_TOKENS`) per choice."""
    limit = params.get("max_tokens") or params.get("max_completion_tokens") or spec.max_tokens
    choices = int(params.get("n") or 1)
    return int(limit or FALLBACK_MAX_TOKENS) * max(choices, 1)


@dataclass
class Ticket:
    """A request's reservation against the budget, settled exactly once."""

    cost: float
    tokens: int
    settled: bool = False


class Ledger:
    """The (phase, model) rows of one engine, the prices that turn tokens into dollars, the budget."""

    def __init__(
        self,
        prices: Mapping[str, Price] | None = None,
        budget: Budget | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.prices = dict(prices or {})
        self.budget = budget
        self._clock = clock
        self._rows: dict[tuple[str, str], Row] = {}
        self._flight: Counter[tuple[str, str]] = Counter()
        self._model_flight: Counter[str] = Counter()
        self._caps: dict[str, int] = {}
        self._global_cap = 0
        self._last = clock()
        self._warned: set[tuple[str, str]] = set()
        self.first_sent: float | None = None  # when the first request went on the wire (epoch seconds)
        self.record: Callable[[dict[str, Any]], None] | None = None
        """Where each settled request goes as a partial row (phase, model, counts, cost): the run's
        usage log (:class:`jurist.store.usage.UsageLog`); None keeps the counts in memory only."""

    def row(self, phase: str, alias: str) -> Row:
        row = self._rows.get((phase, alias))
        if row is None:
            row = self._rows[(phase, alias)] = Row(cost_usd=0.0 if alias in self.prices else None)
        return row

    def rows(self) -> list[tuple[tuple[str, str], Row]]:
        """Every (phase, model) row counted so far."""
        return list(self._rows.items())

    def cache_hit(self, phase: str, alias: str) -> None:
        self.row(phase, alias).cache_hits += 1
        self._log(phase, alias, {"cache_hits": 1})

    def _log(self, phase: str, alias: str, counts: dict[str, Any]) -> None:
        """One settled request to :attr:`record`, its cost 0 unless said where the model has a price (so
        a rebuilt row is priced as this one is)."""
        if self.record is not None:
            if alias in self.prices:
                counts.setdefault("cost_usd", 0.0)
            self.record({"phase": phase, "model": alias, **counts})

    # -- time on the wire -------------------------------------------------------------------------------
    def _tick(self) -> None:
        """Add the time since the last change to every row with a request on the wire."""
        now = self._clock()
        elapsed, self._last = now - self._last, now
        if elapsed <= 0 or not self._flight:
            return
        total = sum(self._model_flight.values())
        for phase, alias in self._flight:
            row = self._rows[(phase, alias)]
            row.wall_s += elapsed
            model_full = self._model_flight[alias] >= self._caps.get(alias, 1 << 30)
            if model_full or (self._global_cap and total >= self._global_cap):
                row.at_limit_s += elapsed

    @contextmanager
    def on_wire(
        self, phase: str, alias: str, attempt: int, model_cap: int, global_cap: int
    ) -> Iterator[None]:
        """Around one attempt on the wire: counts it, and its time, at the limit or not. ``model_cap``:
        the model's own slots; ``global_cap``: the process's (whichever is full holds requests back)."""
        row = self.row(phase, alias)
        row.requests += 1
        row.retries += attempt > 1
        if self.first_sent is None:  # a sweep's "checkpoint ready -> first request" (sweep.json)
            self.first_sent = time.time()
        self._caps[alias] = min(model_cap, global_cap)
        self._global_cap = global_cap
        self._tick()
        self._flight[(phase, alias)] += 1
        self._model_flight[alias] += 1
        try:
            yield
        finally:
            self._tick()
            self._flight[(phase, alias)] -= 1
            self._model_flight[alias] -= 1
            if not self._flight[(phase, alias)]:
                del self._flight[(phase, alias)]
            if not self._model_flight[alias]:
                del self._model_flight[alias]

    # -- budget -----------------------------------------------------------------------------------------
    async def admit(
        self,
        phase: str,
        spec: BilledModel,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any],
        *,
        batch: bool = False,
    ) -> Ticket | None:
        """Reserve the request's worst case, or raise :class:`~jurist.money.budget.NoRoom`; None without a
        budget. ``batch``: it goes through a batch API, its worst case at the batch rates."""
        budget = self.budget
        if budget is None or (budget.max_cost is None and budget.max_tokens is None):
            return None
        prompt = worst_prompt_tokens(messages)
        completion = worst_completion_tokens(spec, params)
        price = self.prices.get(spec.alias)
        if budget.max_cost is not None and price is None:
            budget.stopped = True
            raise NoRoom(f"model {spec.alias!r} has no price, so --max-cost cannot bound it")
        if batch and price is not None:
            price = price.batch_rates()
        # the worst case of a prompt a provider may write to its prompt cache is all of it written
        cost = price.cost(prompt, completion, cache_write_tokens=prompt) if price is not None else 0.0
        if not await budget.reserve(cost, prompt + completion):
            if budget.blocked is None:
                worst = {"worst_cost_usd": round(cost, 8), "worst_tokens": prompt + completion}
                budget.blocked = {"model": spec.alias, "phase": phase, **worst}
            raise NoRoom(f"the budget has no room for the next request of {spec.alias!r}")
        return Ticket(cost, prompt + completion)

    def release(self, ticket: Ticket | None) -> None:
        """A request that ended without a reply (failed or cancelled): its reservation is freed."""
        if ticket is not None and not ticket.settled and self.budget is not None:
            ticket.settled = True
            self.budget.settle(ticket.cost, ticket.tokens, 0.0, 0)

    def failed(self, phase: str, alias: str, ticket: Ticket | None, *, attempts: int = 0) -> None:
        self.row(phase, alias).failed += 1
        self.release(ticket)
        self._log(phase, alias, {"requests": attempts, "retries": max(attempts - 1, 0), "failed": 1})

    def _malformed(self, row: Row, alias: str, notes: list[str]) -> str:
        """Count a reply with fields ignored; warn once per model and field. Returns the fields' names."""
        names = [note.split(" is ", 1)[0] for note in notes]
        row.malformed += 1
        row.malformed_fields = merge_labels(row.malformed_fields, *names)
        for name, note in zip(names, notes, strict=True):
            if (alias, name) not in self._warned:
                self._warned.add((alias, name))
                log.warning(
                    "%s: a reply's %s; the field is ignored and the answer kept (the ledger counts such "
                    "replies as 'malformed')",
                    alias,
                    note,
                )
        return merge_labels(*names) or ""

    def completed(
        self,
        phase: str,
        alias: str,
        completion: Reply,
        messages: list[dict[str, Any]],
        ticket: Ticket | None = None,
        *,
        spec: BilledModel | None = None,
        batch: bool = False,
    ) -> None:
        """Add one reply: the server's token counts, or jurist's own count (``estimated``) where it gave
        none or gave something that is no count, with ``spec``'s tokenizer; its cost where the model is
        priced; then settle its reservation. Fields the reply had of the wrong type (the completion's
        ``notes``) are counted as ``malformed``; they never cost the answer. ``batch``: it came through a
        batch API, priced at the model's batch rates, and what it would have cost synchronously kept."""
        row = self.row(phase, alias)
        choices = [completion, *completion.more]
        notes = [note for choice in choices for note in choice.notes]
        entry: dict[str, Any] = {"requests": completion.attempts, "retries": max(completion.attempts - 1, 0)}
        # counted again here: a completion made elsewhere than the wire parser (a local model) is held
        # to the same rule
        prompt = token_count(completion.prompt_tokens, "usage.prompt_tokens", notes)
        output = token_count(completion.completion_tokens, "usage.completion_tokens", notes)
        if prompt is None or output is None:
            counter = counter_or_approximate(spec)
            row.estimated += 1
            row.estimated_by = merge_labels(row.estimated_by, counter.label)
            entry.update(estimated=1, estimated_by=counter.label)
            if prompt is None:
                prompt = counter.count_prompt(messages)
            if output is None:
                output = sum(counter.count_text(c.text + (c.reasoning or "")) for c in choices)
        reasoning = token_count(completion.reasoning_tokens, "usage.reasoning_tokens", notes)
        if reasoning is None or reasoning > output:  # the thought's share of the characters (cheap)
            thought = sum(len(c.reasoning or "") for c in choices)
            reasoning = round(output * thought / (thought + sum(len(c.text) for c in choices) or 1))
        cached = min(token_count(completion.cached_tokens, "usage.cached_tokens", notes) or 0, prompt)
        written = token_count(completion.cache_write_tokens, "usage.cache_write_tokens", notes) or 0
        written = min(written, prompt - cached)
        if notes:
            entry.update(malformed=1, malformed_fields=self._malformed(row, alias, notes))
        if completion.batch_line is not None:
            entry["batch_line"] = completion.batch_line  # booked once: a restarted run skips it
        row.replies += 1
        row.choices += len(choices)
        row.prompt_tokens += prompt
        row.completion_tokens += output
        row.reasoning_tokens += reasoning
        row.cached_tokens += cached
        row.cache_write_tokens += written
        price = self.prices.get(alias)
        if batch:
            sync_cost = price.cost(prompt, output, cached, written) if price is not None else 0.0
            row.batched += 1
            row.batch_sync_cost_usd += sync_cost
            entry.update(batched=1, batch_sync_cost_usd=sync_cost)
            price = price.batch_rates() if price is not None else None
        cost = price.cost(prompt, output, cached, written) if price is not None else 0.0
        if price is not None:
            row.cost_usd = (row.cost_usd or 0.0) + cost
        if batch:
            row.batch_cost_usd += cost
            entry["batch_cost_usd"] = cost
        self._log(phase, alias, {
            **entry, "replies": 1, "choices": len(choices), "prompt_tokens": prompt,
            "completion_tokens": output, "reasoning_tokens": reasoning, "cached_tokens": cached,
            **({"cache_write_tokens": written} if written else {}),
            **({"cost_usd": cost} if price is not None else {}),
        })  # fmt: skip
        if ticket is not None and not ticket.settled and self.budget is not None:
            ticket.settled = True
            self.budget.settle(ticket.cost, ticket.tokens, cost, prompt + output)

    def batch_completed(
        self,
        phase: str,
        alias: str,
        completion: Reply,
        messages: list[dict[str, Any]],
        ticket: Ticket | None,
        *,
        spec: BilledModel | None = None,
    ) -> None:
        """A reply that came through a batch API: its lines sent (one per batch it was in) counted as the
        requests the wire would have counted, then the reply at the batch rates (:meth:`completed`)."""
        row = self.row(phase, alias)
        row.requests += completion.attempts
        row.retries += max(completion.attempts - 1, 0)
        self.completed(phase, alias, completion, messages, ticket, spec=spec, batch=True)

    def batch_booked(self, phase: str, alias: str, completion: Reply, spec: BilledModel | None) -> None:
        """A batch line the provider billed that no request of this run waits for (answered before a
        kill, read again after it): booked at the batch rates, and its cost spent against the budget, as
        the provider's bill has it."""
        before = self.row(phase, alias).cost_usd or 0.0
        tokens = self.row(phase, alias).prompt_tokens + self.row(phase, alias).completion_tokens
        self.batch_completed(phase, alias, completion, [], None, spec=spec)
        row = self.row(phase, alias)
        if self.budget is not None:
            spent = row.prompt_tokens + row.completion_tokens - tokens
            self.budget.charge((row.cost_usd or 0.0) - before, spent)

    def time_on_wire(self) -> list[dict[str, Any]]:
        """Each row's time on the wire so far, as partial rows for the usage log (written when a run
        closes: time is no spend, and a run killed before that loses only it)."""
        self._tick()
        return [
            {
                "phase": phase,
                "model": alias,
                "wall_s": round(row.wall_s, 3),
                "at_limit_s": round(row.at_limit_s, 3),
            }
            for (phase, alias), row in self._rows.items()
            if row.wall_s or row.at_limit_s
        ]

    # -- what run.json keeps ----------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """``{"rows": [{phase, model, ...counts}], "total": {...}, "budget": {...}}`` for run.json."""
        self._tick()
        rows = [
            {"phase": phase, "model": alias, **row.as_dict()}
            for (phase, alias), row in sorted(self._rows.items(), key=row_order)
        ]
        data: dict[str, Any] = {"rows": rows, "total": total_of(rows)}
        if self.budget is not None and (
            self.budget.max_cost is not None or self.budget.max_tokens is not None
        ):
            data["budget"] = self.budget.summary()
        return data

    @property
    def stopped(self) -> bool:
        """Whether the budget refused a request: nothing more is sent in this run."""
        return self.budget is not None and self.budget.stopped
