"""The only code that talks to models: clients over the OpenAI wire (and provider adapters), managed
servers and in-process models, the request cache, limits, retries, throttle. What requests cost is
counted by :mod:`jurist.money`'s ledger, which the client settles each request with.
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
    from jurist.engine.cache.store import RequestCache, default_cache_path, open_cache
    from jurist.engine.check import PROBE_MESSAGES, require_ready, run_checks
    from jurist.engine.client import Completion, EndpointClient, Engine, ModelClient, RequestFailed
    from jurist.engine.local import LocalModels
    from jurist.engine.local.embedded import EMBEDDED_ALIAS, embedded_model_spec
    from jurist.engine.pacing.limits import ConcurrencyLimits
    from jurist.engine.pacing.retry import RetryPolicy
    from jurist.engine.pacing.throttle import make_throttle
    from jurist.engine.servers.gpus import check_visible, pick_gpus, visible_gpus
    from jurist.engine.servers.pool import KeptServer, ServerFactory, ServerPool
    from jurist.engine.wire.anthropic import counts_prompt_tokens
    from jurist.engine.wire.sending import HttpTransport, Transport, WireRequest
    from jurist.engine.wire.transport import BudgetExhausted

_HOMES = {
    "JOURNAL_FILE": "batch",
    "Batching": "batch",
    "BatchJournal": "batch",
    "BatchSettings": "batch",
    "batch_limits": "batch",
    "check_batchable": "batch",
    "BudgetExhausted": "wire.transport",
    "counts_prompt_tokens": "wire.anthropic",
    "RequestCache": "cache.store",
    "default_cache_path": "cache.store",
    "open_cache": "cache.store",
    "PROBE_MESSAGES": "check",
    "require_ready": "check",
    "run_checks": "check",
    "Completion": "client",
    "EndpointClient": "client",
    "Engine": "client",
    "ModelClient": "client",
    "RequestFailed": "client",
    "EMBEDDED_ALIAS": "local.embedded",
    "embedded_model_spec": "local.embedded",
    "check_visible": "servers.gpus",
    "pick_gpus": "servers.gpus",
    "visible_gpus": "servers.gpus",
    "ConcurrencyLimits": "pacing.limits",
    "LocalModels": "local",
    "KeptServer": "servers.pool",
    "ServerFactory": "servers.pool",
    "ServerPool": "servers.pool",
    "RetryPolicy": "pacing.retry",
    "HttpTransport": "wire.sending",
    "Transport": "wire.sending",
    "WireRequest": "wire.sending",
    "make_throttle": "pacing.throttle",
}

__getattr__ = lazy_face(__name__, _HOMES)


__all__ = [
    "JOURNAL_FILE",
    "Batching",
    "BatchJournal",
    "BatchSettings",
    "batch_limits",
    "check_batchable",
    "BudgetExhausted",
    "Completion",
    "ConcurrencyLimits",
    "EMBEDDED_ALIAS",
    "EndpointClient",
    "Engine",
    "HttpTransport",
    "KeptServer",
    "LocalModels",
    "ModelClient",
    "PROBE_MESSAGES",
    "RequestCache",
    "RequestFailed",
    "RetryPolicy",
    "ServerFactory",
    "ServerPool",
    "Transport",
    "WireRequest",
    "check_visible",
    "counts_prompt_tokens",
    "default_cache_path",
    "embedded_model_spec",
    "make_throttle",
    "open_cache",
    "pick_gpus",
    "require_ready",
    "run_checks",
    "visible_gpus",
]
