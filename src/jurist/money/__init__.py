"""What requests cost: the ledger that counts each request at its model's price, the budget that bounds
them, and what a run directory's earlier runs spent, rebuilt from its usage log.

Below the engine, above the models file (a model's price is read with it: :mod:`jurist.config.prices`):
:mod:`~jurist.money.ledger` (rows per phase and model, kept where requests are sent, against
:mod:`~jurist.money.budget`), :mod:`~jurist.money.rows` (how rows add up), :mod:`~jurist.money.history`
(a directory's spending from ``usage.jsonl``). Nothing here knows what a request is: the engine hands
the ledger replies (:class:`~jurist.money.ledger.Reply`) and models
(:class:`~jurist.money.ledger.BilledModel`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.money.budget import Budget, NoRoom
    from jurist.money.history import (
        DirectoryUsage,
        add_ledgers,
        directory_usage,
        ledger_of_run,
        read_run_json,
        run_json_problem,
        spent,
        spent_by,
        usage_of_ledger,
        usage_of_runs,
    )
    from jurist.money.ledger import (
        FALLBACK_MAX_TOKENS,
        BilledModel,
        Ledger,
        Reply,
        Ticket,
        worst_completion_tokens,
        worst_prompt_tokens,
    )
    from jurist.money.rows import COUNTS, LABELS, Phase, Row, add_rows, row_order, total_of
    from jurist.money.stats import EngineStats

_HOMES = {
    "Budget": "budget",
    "NoRoom": "budget",
    "DirectoryUsage": "history",
    "add_ledgers": "history",
    "directory_usage": "history",
    "ledger_of_run": "history",
    "read_run_json": "history",
    "run_json_problem": "history",
    "spent": "history",
    "spent_by": "history",
    "usage_of_ledger": "history",
    "usage_of_runs": "history",
    "FALLBACK_MAX_TOKENS": "ledger",
    "BilledModel": "ledger",
    "EngineStats": "stats",
    "Ledger": "ledger",
    "Reply": "ledger",
    "Ticket": "ledger",
    "worst_completion_tokens": "ledger",
    "worst_prompt_tokens": "ledger",
    "COUNTS": "rows",
    "LABELS": "rows",
    "Phase": "rows",
    "Row": "rows",
    "add_rows": "rows",
    "row_order": "rows",
    "total_of": "rows",
}

__getattr__ = lazy_face(__name__, _HOMES)

__all__ = [
    "BilledModel",
    "Budget",
    "COUNTS",
    "DirectoryUsage",
    "EngineStats",
    "FALLBACK_MAX_TOKENS",
    "LABELS",
    "Ledger",
    "NoRoom",
    "Phase",
    "Reply",
    "Row",
    "Ticket",
    "add_ledgers",
    "add_rows",
    "directory_usage",
    "ledger_of_run",
    "read_run_json",
    "row_order",
    "run_json_problem",
    "spent",
    "spent_by",
    "total_of",
    "usage_of_ledger",
    "usage_of_runs",
    "worst_completion_tokens",
    "worst_prompt_tokens",
]
