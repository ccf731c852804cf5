"""A run's ledger from start to run.json: prices resolved, the budget, the table at the end, the sums.

The engine counts (:mod:`jurist.money.ledger`); this module gives it what it needs before the first
request (the prices of the models file and of ``--prices``, a budget that knows what earlier runs of the
directory already spent) and turns its counts into run.json's ``ledger`` (this run) and ``ledger_total``
(every run of the directory), which ``jurist show --usage`` adds up across directories.

What earlier runs spent is rebuilt from the directory's usage log, one line per request
(:mod:`jurist.money.history`), never from run.json, which is a summary for people: a corrupt run.json
is said in one line and written anew, and the budget still knows every dollar. The run appends its own
requests to that log as they settle (:class:`RunLedger`).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist.config import ModelSpec, Price, load_prices
from jurist.errors import JuristError
from jurist.money import (
    FALLBACK_MAX_TOKENS,
    Budget,
    Ledger,
    add_ledgers,
    directory_usage,
    ledger_of_run,
    read_run_json,
    spent,
    spent_by,
    usage_of_ledger,
    usage_of_runs,
)
from jurist.report import dollars, print_ledger, render_csv, render_markdown, table_console
from jurist.run.config import RunConfig
from jurist.store import UsageLog, add_usage, usage_log_path

if TYPE_CHECKING:
    from rich.console import Console

log = logging.getLogger("jurist.run.budget")

__all__ = [
    "BUDGET_STOPPED", "BudgetPlan", "Estimate", "RunLedger", "add_ledgers", "estimate_notes", "ledger_of_run",
    "priced_estimate", "read_run_json", "resolve_budget", "resolve_prices", "show_usage", "usage_of_runs",
]  # fmt: skip

BUDGET_STOPPED = 3
"""Exit code of a run the budget stopped (0: done, 1: requests failed, 2: usage error, 130: interrupted)."""


def served_names(spec: ModelSpec) -> list[str]:
    """The names a provider bills ``spec`` under: each endpoint's model name, else the spec's model."""
    names = [endpoint.model_name for endpoint in spec.endpoints or [] if endpoint.model_name]
    return list(dict.fromkeys([*names, spec.model]))


def resolve_prices(
    specs: Mapping[str, ModelSpec], table: Mapping[str, Price] | None = None
) -> dict[str, Price]:
    """alias -> price for every spec that has one: its own ``price``, else the table's entry for its
    alias, else for a name it is served under. Aliases with no price are left out (their cost is unknown,
    never zero). The models file's own entry wins over ``--prices``, an alias over a served name. An
    ``api_type: anthropic`` model's prompt-cache reads and writes get Anthropic's rates unless its price
    names them."""
    table = table or {}
    prices: dict[str, Price] = {}
    for alias, spec in specs.items():
        if spec.price is not None:
            prices[alias] = spec.price
        else:
            for name in [alias, *served_names(spec)]:
                if name in table:
                    prices[alias] = table[name]
                    break
        if alias in prices and spec.api_type == "anthropic":  # its prompt-cache reads and writes
            prices[alias] = prices[alias].with_anthropic_cache_rates()
    return prices


LEDGER_COLUMNS = (
    "phase", "model", "requests", "retries", "failed", "cache_hits", "replies", "choices", "prompt_tokens",
    "completion_tokens", "reasoning_tokens", "cached_tokens", "cache_write_tokens", "estimated",
    "estimated_by", "malformed", "malformed_fields", "cost_usd", "batched", "batch_cost_usd",
    "batch_sync_cost_usd", "wall_s", "at_limit_s",
)  # fmt: skip


def show_usage(run_dirs: Sequence[Path], fmt: str) -> None:
    """``jurist show --usage``: the ledger of the run directories (their sum when several) on stdout."""
    ledger = usage_of_runs(run_dirs)
    if fmt == "json":
        print(json.dumps(ledger, indent=2, ensure_ascii=False))
        return
    if fmt in ("csv", "markdown"):
        rows = [*ledger["rows"], {"phase": "total", "model": "", **ledger["total"]}]
        print((render_csv if fmt == "csv" else render_markdown)(rows, LEDGER_COLUMNS), end="")
        return
    names = ", ".join(run_dir.name for run_dir in run_dirs)
    title = f"jurist show --usage: {names}" + (" (summed)" if len(run_dirs) > 1 else "")
    print_ledger(table_console(), ledger, title=title)


@dataclass(frozen=True)
class BudgetPlan:
    """What a run's ledger starts from, resolved before the first request: each alias's price, what
    earlier runs of the directory spent, and the budget (``--max-cost``, ``--max-tokens``) if any."""

    prices: Mapping[str, Price]
    earlier: Mapping[str, Any] | None
    """The ledger of every earlier run of the directory (its usage log's), None for a fresh one."""
    max_cost: float | None = None
    max_tokens: int | None = None
    spent_cost: float = 0.0
    spent_tokens: int = 0
    carried: list[dict[str, Any]] = field(default_factory=list)
    """An older run.json's ledger rows, the first lines of the usage log the run opens (none when the
    directory has a usage log already)."""

    @property
    def bounded(self) -> bool:
        return self.max_cost is not None or self.max_tokens is not None


def resolve_budget(
    config: RunConfig,
    specs: Mapping[str, ModelSpec],
    run_dir: Path,
    generating: Iterable[str],
    judging: Iterable[str],
) -> BudgetPlan:
    """Prices and the budget of a run in ``run_dir``. ``generating`` and ``judging``: the aliases the run
    may send requests for; with ``--max-cost`` each of them must have a price (an unknown cost cannot be
    bounded), else the run is refused before it starts. ``--judge-only`` sends nothing for ``generating``."""
    table = load_prices(config.budget.prices_file) if config.budget.prices_file is not None else {}
    prices = resolve_prices(specs, table)
    usage = directory_usage(run_dir)
    earlier, carried = usage.ledger, usage.carried
    if config.budget.max_cost is None and config.budget.max_tokens is None:
        return BudgetPlan(prices, earlier, carried=carried)
    if usage.unknown is not None or usage.problems:
        why = (
            usage.unknown
            or f"{len(usage.problems)} line(s) of the usage log are unreadable: {usage.problems[0]}"
        )
        raise JuristError(
            f"{why}; so what earlier runs here spent is unknown and --max-cost/--max-tokens cannot be held "
            "(run without a budget, or into a new directory)"
        )
    sending = [*judging] if config.mode == "judge-only" else [*generating, *judging]
    used = [alias for alias in dict.fromkeys(sending) if alias in specs]
    _check_budget(config, used, prices, specs)
    spent_cost, spent_tokens = spent_by(usage.spent, prices)
    return BudgetPlan(
        prices,
        earlier,
        config.budget.max_cost,
        config.budget.max_tokens,
        spent_cost,
        spent_tokens,
        carried=carried,
    )


class RunLedger:
    """The ledger of one ``jurist run``, from its :class:`BudgetPlan`: the engine counts into it, and it
    says what run.json records and what the table at the end shows."""

    def __init__(self, plan: BudgetPlan) -> None:
        self.prices = plan.prices
        self.earlier = plan.earlier
        budget = None
        if plan.bounded:
            budget = Budget(
                plan.max_cost, plan.max_tokens, spent_cost=plan.spent_cost, spent_tokens=plan.spent_tokens
            )
        self.ledger = Ledger(plan.prices, budget)
        self.usage_log = UsageLog()  # every request settled, from the first probe on
        self.ledger.record = self.usage_log.write
        self._carried = plan.carried
        self._closed = False

    def open_log(self, root: Path, run_id: str) -> None:
        """Start writing the directory's usage log (under its lock): an older run.json's rows first,
        where the directory had no log, then every request so far and from now on."""
        self.usage_log.open(usage_log_path(root), run_id, list(self._carried))

    def close_log(self) -> None:
        """The run's time on the wire added to the log, and the log closed (once)."""
        if not self._closed:
            self._closed = True
            for record in self.ledger.time_on_wire():
                self.usage_log.write(record)
        self.usage_log.close()

    def usage_total(self, usage: dict[str, Any]) -> dict[str, Any]:
        """run.json's ``usage_total``: this run's ``usage`` and every earlier run's (from the log)."""
        return add_usage(usage_of_ledger(self.earlier), usage)

    @property
    def stopped(self) -> bool:
        return self.ledger.stopped

    def fields(self) -> dict[str, Any]:
        """run.json's ``ledger`` (this run) and ``ledger_total`` (every run of the directory)."""
        ledger = self.ledger.summary()
        total = add_ledgers(self.earlier, ledger)
        if "budget" not in ledger:
            total.pop("budget", None)  # an earlier run's budget does not hold for this one
        return {"ledger": ledger, "ledger_total": total}

    def report(self, console: Console) -> None:
        """The ledger table of this run, with the budget's state under it."""
        print_ledger(console, self.ledger.summary(), title="usage of this run")


def _check_budget(
    config: RunConfig, aliases: Sequence[str], prices: Mapping[str, Price], specs: Mapping[str, ModelSpec]
) -> None:
    if (config.budget.max_cost is not None and config.budget.max_cost < 0) or (
        config.budget.max_tokens or 0
    ) < 0:
        raise JuristError("--max-cost and --max-tokens take a number of at least 0")
    unpriced = [alias for alias in aliases if alias not in prices]
    if config.budget.max_cost is not None and unpriced:
        raise JuristError(
            f"--max-cost needs a price for every model the run uses; none for {', '.join(unpriced)} "
            "(add price: {input: USD per 1M tokens, output: ...} to the models file, or --prices FILE; "
            "a local model costs price: {input: 0, output: 0})"
        )
    unbounded = [alias for alias in aliases if specs[alias].max_tokens is None]
    if unbounded:
        log.warning(
            "the budget assumes up to %d completion tokens per request for %s (no max_tokens set)",
            FALLBACK_MAX_TOKENS,
            ", ".join(unbounded),
        )


# -- the dry run's estimate, priced -------------------------------------------------------------------------
REASK_TOKENS = 256
"""Room for a re-ask's own instruction, in the cost range's allowance of one re-ask per judge request."""


@dataclass
class Estimate:
    """The requests of one (phase, model) that a run would send, and their tokens (counted, expected)."""

    requests: int = 0
    cached: int = 0
    done: int = 0
    prompt: int = 0
    prompt_low: int = 0  # answers not generated yet taken as empty
    prompt_high: int = 0  # ... as max_tokens long
    completion: int = 0
    completion_high: int | None = 0  # None: some request names no max_tokens, so no worst case
    basis: set[str] = field(default_factory=set)

    def priced(self, phase: str, alias: str, price: Price | None) -> dict[str, Any]:
        """The table's row: the tokens, and dollars (expected, least, most) where there is a price. The
        most allows a judge request one re-ask, which sends its first reply back."""
        row: dict[str, Any] = {
            "phase": phase,
            "model": alias,
            "requests": self.requests,
            "cached": self.cached,
            "done": self.done,
            "prompt_tokens": self.prompt,
            "prompt_tokens_high": self.prompt_high,
            "completion_tokens": self.completion,
            "completion_tokens_high": self.completion_high,
            "basis": ", ".join(sorted(self.basis)),
            "cost_usd": None,
            "cost_low_usd": None,
            "cost_high_usd": None,
        }
        if price is None:
            return row
        high = self.completion_high
        row["cost_usd"] = price.cost(self.prompt, self.completion)
        row["cost_low_usd"] = price.cost(self.prompt_low, 0)
        if high is not None:
            row["cost_high_usd"] = price.cost(self.prompt_high, high)
            if phase == "judge":
                resent = self.prompt_high + high + REASK_TOKENS * self.requests
                row["cost_high_usd"] += price.cost(resent, high)
        return row


def priced_estimate(
    estimates: Mapping[tuple[str, str], Estimate],
    prices: Mapping[str, Price],
    batched: Mapping[str, Collection[str]] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The dry run's rows, a total last, and notes on what the total leaves out (unpriced models).
    ``batched``: alias -> phases sent through batch APIs, priced at the batch rates (the row says
    ``batched`` and what it would cost synchronously, ``sync_cost_usd``)."""
    rows = []
    for (phase, alias), estimate in estimates.items():
        price = prices.get(alias)
        row = estimate.priced(phase, alias, price)
        if batched and phase in batched.get(alias, ()) and phase != "check":
            sync_cost = row["cost_usd"]
            if price is not None:
                row = estimate.priced(phase, alias, price.batch_rates())
            row.update(batched=row["requests"], sync_cost_usd=sync_cost)
        rows.append(row)
    notes = [
        f"no price for {row['model']}: its cost is left out of the total"
        for row in rows
        if row["requests"] and row["cost_usd"] is None
    ]
    total: dict[str, Any] = {"phase": "total", "model": ""}
    for name in ("requests", "cached", "done", "prompt_tokens", "completion_tokens"):
        total[name] = sum(int(row[name]) for row in rows)
    priced = [row for row in rows if row["cost_usd"] is not None]
    for name in ("cost_usd", "cost_low_usd", "cost_high_usd"):
        values = [row[name] for row in priced]
        total[name] = sum(values) if priced and None not in values else None
    return [*rows, total], list(dict.fromkeys(notes))


def estimate_notes(
    config: RunConfig,
    rows: Sequence[Mapping[str, Any]],
    past: Mapping[str, Any] | None,
    prices: Mapping[str, Price],
) -> list[str]:
    """What the estimate (``rows``, a total last) cannot count: re-asks, with the rate earlier runs here
    saw; and whether it fits what ``--max-cost`` leaves in the run directory."""
    notes = []
    if any(row["phase"] == "judge" and row["requests"] for row in rows):
        asked: Counter[str] = Counter()
        for row in (past or {}).get("rows") or []:
            asked[str(row.get("phase"))] += int(row.get("requests") or 0)
        rate = (
            f"; earlier runs here re-asked {asked['reask']:,} of {asked['judge']:,}" if asked["judge"] else ""
        )
        notes.append(
            "re-asks of unreadable verdicts are not in 'to send' (they depend on the replies); the cost "
            f"range allows one per judge request{rate}"
        )
    if config.budget.max_cost is not None:
        left = config.budget.max_cost - spent(past, prices)[0]
        high, fits = rows[-1].get("cost_high_usd"), "even the worst case fits"
        if not isinstance(high, float) or high > left:
            fits = "if the run reaches the budget, it stops safely and a larger budget resumes it"
        notes.append(
            f"budget: {dollars(left)} of {dollars(config.budget.max_cost)} left in this run directory; {fits}"
        )
    return notes
