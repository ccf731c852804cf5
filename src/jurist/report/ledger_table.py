"""The ledger and the dry-run estimate as tables for people, and as JSON for programs.

``jurist run`` prints the ledger at the end of every run (on stderr, so ``--format json`` keeps stdout to
the scores), ``jurist show --usage`` prints it for one run directory or the sum of several, and
``jurist run --dry-run`` prints what a run would send. Model names are user text: never rich markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a table is drawn: dollars() is on a run's way to its first request
    from rich.console import Console
    from rich.table import Table

PHASE_NAMES = {
    "check": "check",
    "generate": "generate",
    "judge": "judge",
    "reask": "re-ask",
    "probe": "card probe",
    "all": "all",
}
WIDE = 160
ESTIMATED_NOTE = "~ tokens counted by jurist: the server gave no usage for some replies"
APPROXIMATE_NOTE = (
    "approximate: o200k stands in for a tokenizer jurist does not know; name the model's own with "
    "tokenizer: in the models file (a GGUF, a tokenizer.json, a hub id, o200k or cl100k)"
)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def dollars(value: Any) -> str:
    """``$0.0123``: four decimals below a dollar, two above; ``-`` when unknown."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "-"
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:.4f}"


def _tokens(value: Any, estimated: bool) -> str:
    return ("~" if estimated else "") + f"{_int(value):,}"


def _seconds(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return "-"
    return f"{value:.2f}" if value < 10 else f"{value:,.1f}"


def _share(part: Any, whole: Any) -> str:
    if not isinstance(part, (int, float)) or not isinstance(whole, (int, float)) or whole <= 0:
        return "-"
    return f"{100 * part / whole:.0f}%"


def ledger_table(ledger: Mapping[str, Any], title: str = "usage") -> Table:
    """One row per (phase, model) and a total: requests, tokens, dollars, time on the wire and at the
    concurrency limit (the share of that time in which the model, or the process, had no free slot)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title)
    headers = (
        "phase", "model", "requests", "retried", "failed", "cached", "prompt tok", "completion tok",
        "reasoning tok", "cost", "wall s", "at limit",
    )  # fmt: skip
    for header in headers:
        table.add_column(header, justify="left" if header in ("phase", "model") else "right")
    rows: Sequence[Mapping[str, Any]] = ledger.get("rows") or []
    total = ledger.get("total") or {}
    for row in [*rows, {"phase": "total", "model": "", **total}]:
        estimated = _int(row.get("estimated")) > 0
        cells = [
            PHASE_NAMES.get(str(row.get("phase")), str(row.get("phase"))),
            str(row.get("model", "")) + (" (batch)" if _int(row.get("batched")) and row.get("model") else ""),
            f"{_int(row.get('requests')):,}",
            f"{_int(row.get('retries')):,}",
            f"{_int(row.get('failed')):,}",
            f"{_int(row.get('cache_hits')):,}",
            _tokens(row.get("prompt_tokens"), estimated),
            _tokens(row.get("completion_tokens"), estimated),
            _tokens(row.get("reasoning_tokens"), estimated),
            dollars(row.get("cost_usd")),
            _seconds(row.get("wall_s")),
            _share(row.get("at_limit_s"), row.get("wall_s")),
        ]
        table.add_row(*(Text(cell) for cell in cells), style="bold" if row.get("phase") == "total" else None)
    return table


def ledger_notes(ledger: Mapping[str, Any]) -> list[str]:
    """What the table alone does not say: estimated counts, unpriced models, the budget's state."""
    notes = []
    total = ledger.get("total") or {}
    if _int(total.get("estimated")):
        counted = [
            f"{row.get('model')} with {row.get('estimated_by') or 'o200k (approximate)'}"
            for row in ledger.get("rows") or []
            if _int(row.get("estimated"))
        ]
        notes.append(f"{ESTIMATED_NOTE}; counted: {', '.join(dict.fromkeys(counted))}")
        if any("approximate" in entry for entry in counted):
            notes.append(APPROXIMATE_NOTE)
    cache = [
        f"{row.get('model')} ({row.get('phase')}) read {_int(row.get('cached_tokens')):,}, wrote "
        f"{_int(row.get('cache_write_tokens')):,}"
        for row in ledger.get("rows") or []
        if _int(row.get("cached_tokens")) or _int(row.get("cache_write_tokens"))
    ]
    if cache:  # part of the prompt tokens, priced at the provider's cache rates
        notes.append("prompt tokens from / to the providers' prompt caches: " + "; ".join(cache))
    unpriced = total.get("unpriced") or []
    if unpriced:
        notes.append(
            "no price for " + ", ".join(map(str, unpriced)) + ": the cost leaves them out "
            "(add price: {input, output} to the models file, or --prices FILE)"
        )
    budget = ledger.get("budget")
    if isinstance(budget, Mapping):
        notes.append(budget_line(budget))
    return notes


def budget_line(budget: Mapping[str, Any]) -> str:
    """``budget: $0.41 of $0.50 spent, $0.09 left`` (and the tokens), with what a stop means."""
    parts = []
    if budget.get("max_cost_usd") is not None:
        parts.append(
            f"{dollars(budget.get('spent_cost_usd'))} of {dollars(budget.get('max_cost_usd'))} spent, "
            f"{dollars(budget.get('remaining_cost_usd'))} left"
        )
    if budget.get("max_tokens") is not None:
        parts.append(
            f"{_int(budget.get('spent_tokens')):,} of {_int(budget.get('max_tokens')):,} tokens spent, "
            f"{_int(budget.get('remaining_tokens')):,} left"
        )
    line = "budget (this run directory): " + "; ".join(parts)
    if budget.get("stopped"):
        line += f". The budget stopped the run: {_int(budget.get('refused')):,} request(s) were not sent"
        blocked = budget.get("blocked")
        if isinstance(blocked, Mapping):
            worst = f"{dollars(blocked.get('worst_cost_usd'))}, {_int(blocked.get('worst_tokens')):,} tokens"
            line += f" (the next, of {blocked.get('model')}, could have cost up to {worst})"
        line += "; everything finished is saved, and a larger budget resumes where it stopped"
    return line


def print_ledger(console: Console, ledger: Mapping[str, Any], title: str = "usage") -> None:
    """The table and its notes, as plain text (names are never markup)."""
    if not ledger.get("rows") and not ledger.get("budget"):
        return
    if not console.is_terminal and console.width < WIDE:  # a log file: wide enough that nothing is cut
        from rich.console import Console

        console = Console(file=console.file, width=WIDE)
    console.print(ledger_table(ledger, title))
    for note in ledger_notes(ledger):
        console.print(note, markup=False, highlight=False, style="dim")


def dry_run_table(rows: Sequence[Mapping[str, Any]], title: str) -> Table:
    """What a run would send, per (phase, model): requests after what is done or cached, counted prompt
    tokens, completion tokens by the basis named, the cost with its range, and the tokenizer that
    counted the prompts."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title)
    headers = (
        "phase", "model", "to send", "cached", "on disk", "prompt tok", "completion tok", "basis",
        "cost", "cost range", "tokenizer",
    )  # fmt: skip
    for header in headers[:-1]:
        table.add_column(header, justify="left" if header in ("phase", "model", "basis") else "right")
    table.add_column("tokenizer", overflow="fold")  # a long file name wraps, never cut
    for row in rows:
        low, high = row.get("cost_low_usd"), row.get("cost_high_usd")
        span = "-" if low is None else f"{dollars(low)} .. {dollars(high) if high is not None else '?'}"
        cells = [
            PHASE_NAMES.get(str(row.get("phase")), str(row.get("phase"))),
            str(row.get("model", "")) + (" (batch)" if _int(row.get("batched")) and row.get("model") else ""),
            f"{_int(row.get('requests')):,}",
            f"{_int(row.get('cached')):,}",
            f"{_int(row.get('done')):,}",
            f"{_int(row.get('prompt_tokens')):,}",
            f"{_int(row.get('completion_tokens')):,}",
            str(row.get("basis", "")),
            dollars(row.get("cost_usd")),
            span,
            str(row.get("tokenizer") or ""),
        ]
        table.add_row(*(Text(cell) for cell in cells), style="bold" if row.get("phase") == "total" else None)
    return table
