"""The only code that talks to models: clients over the OpenAI wire (and provider adapters), managed
servers and in-process models, the request cache, limits, retries, throttle, the ledger and budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.engine.batch import (
        JOURNAL_FILE,
        Batching,
        BatchJournal,
        BatchSettings,
        batch_limits,
        check_batchable,
    )
    from jurist.engine.budget import Budget, BudgetExhausted
    from jurist.engine.cache import RequestCache, default_cache_path, open_cache
    from jurist.engine.check import PROBE_MESSAGES, require_ready, run_checks
    from jurist.engine.client import Completion, EndpointClient, Engine, ModelClient, RequestFailed
    from jurist.engine.embedded import EMBEDDED_ALIAS, embedded_model_spec
    from jurist.engine.gpus import check_visible, pick_gpus, visible_gpus
    from jurist.engine.ledger import FALLBACK_MAX_TOKENS, Ledger, worst_prompt_tokens
    from jurist.engine.ledger_rows import COUNTS, LABELS, Phase, add_rows, row_order, total_of
    from jurist.engine.limits import ConcurrencyLimits
    from jurist.engine.local import LocalModels
    from jurist.engine.pool import KeptServer, ServerFactory, ServerPool
    from jurist.engine.retry import RetryPolicy
    from jurist.engine.sending import HttpTransport, Transport, WireRequest
    from jurist.engine.throttle import make_throttle

_HOMES = {
    "JOURNAL_FILE": "batch",
    "Batching": "batch",
    "BatchJournal": "batch",
    "BatchSettings": "batch",
    "batch_limits": "batch",
    "check_batchable": "batch",
    "Budget": "budget",
    "BudgetExhausted": "budget",
    "RequestCache": "cache",
    "default_cache_path": "cache",
    "open_cache": "cache",
    "PROBE_MESSAGES": "check",
    "require_ready": "check",
    "run_checks": "check",
    "Completion": "client",
    "EndpointClient": "client",
    "Engine": "client",
    "ModelClient": "client",
    "RequestFailed": "client",
    "EMBEDDED_ALIAS": "embedded",
    "embedded_model_spec": "embedded",
    "check_visible": "gpus",
    "pick_gpus": "gpus",
    "visible_gpus": "gpus",
    "FALLBACK_MAX_TOKENS": "ledger",
    "Ledger": "ledger",
    "COUNTS": "ledger_rows",
    "LABELS": "ledger_rows",
    "Phase": "ledger_rows",
    "add_rows": "ledger_rows",
    "row_order": "ledger_rows",
    "total_of": "ledger_rows",
    "worst_prompt_tokens": "ledger",
    "ConcurrencyLimits": "limits",
    "LocalModels": "local",
    "KeptServer": "pool",
    "ServerFactory": "pool",
    "ServerPool": "pool",
    "RetryPolicy": "retry",
    "HttpTransport": "sending",
    "Transport": "sending",
    "WireRequest": "sending",
    "make_throttle": "throttle",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "JOURNAL_FILE",
    "Batching",
    "BatchJournal",
    "BatchSettings",
    "batch_limits",
    "check_batchable",
    "COUNTS",
    "LABELS",
    "Budget",
    "BudgetExhausted",
    "Completion",
    "ConcurrencyLimits",
    "EMBEDDED_ALIAS",
    "EndpointClient",
    "Engine",
    "FALLBACK_MAX_TOKENS",
    "HttpTransport",
    "KeptServer",
    "Ledger",
    "LocalModels",
    "ModelClient",
    "PROBE_MESSAGES",
    "Phase",
    "RequestCache",
    "RequestFailed",
    "RetryPolicy",
    "ServerFactory",
    "ServerPool",
    "Transport",
    "WireRequest",
    "add_rows",
    "check_visible",
    "default_cache_path",
    "embedded_model_spec",
    "make_throttle",
    "open_cache",
    "pick_gpus",
    "require_ready",
    "row_order",
    "run_checks",
    "total_of",
    "visible_gpus",
    "worst_prompt_tokens",
]
