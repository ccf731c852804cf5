"""A run's ledger from start to run.json: prices resolved, the budget, the table at the end, the sums.

The engine counts (:mod:`jurist.engine.ledger`); this module gives it what it needs before the first
request (the prices of the models file and of ``--prices``, a budget that knows what earlier runs of the
directory already spent) and turns its counts into run.json's ``ledger`` (this run) and ``ledger_total``
(every run of the directory), which ``jurist show --usage`` reads and adds up across directories.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from jurist.config import ModelSpec
from jurist.engine.budget import Budget
from jurist.engine.ledger import FALLBACK_MAX_TOKENS, Ledger, add_rows, row_order, total_of
from jurist.errors import JuristError
from jurist.prices import Price, load_prices
from jurist.report.formats import render_csv, render_markdown, table_console
from jurist.report.ledger_table import dollars, print_ledger
from jurist.run.config import RunConfig

log = logging.getLogger("jurist.run.budget")

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
    never zero). The models file's own entry wins over ``--prices``, an alias over a served name."""
    table = table or {}
    prices: dict[str, Price] = {}
    for alias, spec in specs.items():
        if spec.price is not None:
            prices[alias] = spec.price
            continue
        for name in [alias, *served_names(spec)]:
            if name in table:
                prices[alias] = table[name]
                break
    return prices


def add_ledgers(*ledgers: Mapping[str, Any] | None) -> dict[str, Any]:
    """Several ledgers as one (the runs of one directory, or of a sweep): rows of the same phase and model
    add up; the budget kept is the last one's."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    budget: Any = None
    for ledger in ledgers:
        if not ledger:
            continue
        for row in ledger.get("rows") or []:
            key = (str(row.get("phase")), str(row.get("model")))
            rows[key] = add_rows(rows.get(key, {}), row)
        budget = ledger.get("budget", budget)
    ordered = [{"phase": p, "model": m, **row} for (p, m), row in sorted(rows.items(), key=row_order)]
    data: dict[str, Any] = {"rows": ordered, "total": total_of(ordered)}
    if budget is not None:
        data["budget"] = budget
    return data


def ledger_of_run(run: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ledger a run.json holds for its whole directory; for one written before the ledger existed,
    its usage counters as one row per model under phase "all" (no prices were known then)."""
    for name in ("ledger_total", "ledger"):
        ledger = run.get(name)
        if isinstance(ledger, dict) and isinstance(ledger.get("rows"), list):
            return dict(ledger)
    usage = run.get("usage_total", run.get("usage"))
    if not isinstance(usage, dict) or not isinstance(usage.get("per_model"), dict):
        return None
    rows = []
    for model, counts in sorted(usage["per_model"].items()):
        if isinstance(counts, dict):
            names = ("requests", "cache_hits", "prompt_tokens", "completion_tokens")
            row = {name: counts.get(name, 0) for name in names}
            rows.append({"phase": "all", "model": str(model), **add_rows({}, row)})
    return {"rows": rows, "total": total_of(rows)}


def read_run_json(run_dir: Path) -> dict[str, Any]:
    """``run_dir/run.json`` as a dict; {} when it is missing or unreadable (a fresh directory)."""
    try:
        data = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def usage_of_runs(run_dirs: Sequence[Path]) -> dict[str, Any]:
    """The ledger of each run directory added up (``jurist show --usage RUN...``: a sweep's cost)."""
    ledgers = []
    for run_dir in run_dirs:
        ledger = ledger_of_run(read_run_json(run_dir))
        if ledger is None:
            raise JuristError(f"{run_dir}: no run.json with usage (is it a jurist run directory?)")
        ledgers.append(ledger)
    total = add_ledgers(*ledgers)
    if len(run_dirs) > 1:
        total.pop("budget", None)  # each directory had its own
    return total


LEDGER_COLUMNS = (
    "phase", "model", "requests", "retries", "failed", "cache_hits", "replies", "choices", "prompt_tokens",
    "completion_tokens", "reasoning_tokens", "cached_tokens", "estimated", "estimated_by", "cost_usd",
    "wall_s", "at_limit_s",
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


def spent(ledger: Mapping[str, Any] | None, prices: Mapping[str, Price]) -> tuple[float, int]:
    """Dollars and tokens that ``ledger``'s requests cost; rows recorded before their model had a price
    are charged at today's price, so a budget never forgets what was spent."""
    cost, tokens = 0.0, 0
    for row in (ledger or {}).get("rows") or []:
        prompt, completion = int(row.get("prompt_tokens") or 0), int(row.get("completion_tokens") or 0)
        tokens += prompt + completion
        if isinstance(row.get("cost_usd"), (int, float)):
            cost += float(row["cost_usd"])
        elif str(row.get("model")) in prices:
            cost += prices[str(row["model"])].cost(prompt, completion, int(row.get("cached_tokens") or 0))
    return cost, tokens


@dataclass(frozen=True)
class BudgetPlan:
    """What a run's ledger starts from, resolved before the first request: each alias's price, what
    earlier runs of the directory spent, and the budget (``--max-cost``, ``--max-tokens``) if any."""

    prices: Mapping[str, Price]
    earlier: Mapping[str, Any] | None
    """The ledger of every earlier run of the directory (run.json's), None for a fresh one."""
    max_cost: float | None = None
    max_tokens: int | None = None
    spent_cost: float = 0.0
    spent_tokens: int = 0

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
    table = load_prices(config.prices_file) if config.prices_file is not None else {}
    prices = resolve_prices(specs, table)
    earlier = ledger_of_run(read_run_json(run_dir))
    if config.max_cost is None and config.max_tokens is None:
        return BudgetPlan(prices, earlier)
    sending = [*judging] if config.mode == "judge-only" else [*generating, *judging]
    used = [alias for alias in dict.fromkeys(sending) if alias in specs]
    _check_budget(config, used, prices, specs)
    spent_cost, spent_tokens = spent(earlier, prices)
    return BudgetPlan(prices, earlier, config.max_cost, config.max_tokens, spent_cost, spent_tokens)


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
    if (config.max_cost is not None and config.max_cost < 0) or (config.max_tokens or 0) < 0:
        raise JuristError("--max-cost and --max-tokens take a number of at least 0")
    unpriced = [alias for alias in aliases if alias not in prices]
    if config.max_cost is not None and unpriced:
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
    estimates: Mapping[tuple[str, str], Estimate], prices: Mapping[str, Price]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The dry run's rows, a total last, and notes on what the total leaves out (unpriced models)."""
    rows = [
        estimate.priced(phase, alias, prices.get(alias)) for (phase, alias), estimate in estimates.items()
    ]
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
    if config.max_cost is not None:
        left = config.max_cost - spent(past, prices)[0]
        high, fits = rows[-1].get("cost_high_usd"), "even the worst case fits"
        if not isinstance(high, float) or high > left:
            fits = "if the run reaches the budget, it stops safely and a larger budget resumes it"
        notes.append(
            f"budget: {dollars(left)} of {dollars(config.max_cost)} left in this run directory; {fits}"
        )
    return notes
