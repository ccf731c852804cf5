"""Requests through providers' batch APIs: OpenAI's Batch API and Anthropic's Message Batches, at about
half the synchronous price, resumable across restarts (docs/batch.md).

:class:`Batching` says which models send which phases through batches and where the run's journal is;
the engine gives each such model a :class:`~jurist.engine.batch.dispatcher.BatchDispatcher`
(:func:`dispatcher_for`), and the model's client hands it every request of those phases after the
request cache has missed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurist import lazy_face
from jurist.config import ANTHROPIC_API_BASE, ModelSpec
from jurist.engine.batch.journal import JOURNAL_FILE, BatchJournal, JournalUnreadable
from jurist.engine.batch.settings import BatchFallback, BatchSettings
from jurist.errors import JuristError

if TYPE_CHECKING:
    from jurist.engine.batch.billing import BatchStopped
    from jurist.engine.batch.dispatcher import BatchDispatcher
    from jurist.engine.batch.openai_batches import OpenAIBatches
    from jurist.engine.cache.identity import Identity
    from jurist.engine.cache.store import RequestCache
    from jurist.engine.wire.transport import Completion
    from jurist.money import Ledger, Phase

__all__ = [
    "JOURNAL_FILE",
    "BatchDispatcher",
    "BatchFallback",
    "BatchJournal",
    "BatchSettings",
    "BatchStopped",
    "Batching",
    "JournalUnreadable",
    "batch_limits",
    "check_batchable",
    "dispatcher_for",
]

# The dispatcher and the providers' wire load when a model is batched (dispatcher_for), not with the
# run's settings: a run that batches nothing never imports them.
_LAZY = {"BatchStopped": "billing", "BatchDispatcher": "dispatcher", "OpenAIBatches": "openai_batches"}
__getattr__ = lazy_face(__name__, _LAZY)


BATCH_PHASES = frozenset({"judge", "reask"})
ALL_PHASES = frozenset({"generate", "judge", "reask"})


@dataclass
class Batching:
    """A run's batching: alias -> the phases it sends through batches, the journal's file, the settings."""

    journal_path: Path
    phases: Mapping[str, frozenset[str]]
    settings: BatchSettings = field(default_factory=BatchSettings)
    booked: set[str] = field(default_factory=set)
    """Batch lines (``batch id/custom id``) whose bill the directory's usage log already holds."""
    tag: str = ""
    """The run directory's mark in its batches' metadata (OpenAI): a lost journal's batches are found
    by it."""
    _journal: BatchJournal | None = None

    @property
    def journal(self) -> BatchJournal:
        """The journal, read strictly the first time (a one-line refusal when it cannot be: before any
        request), and checked against the bills booked: a batch the usage log booked answers of that
        the journal does not know means the journal lost lines."""
        if self._journal is None:
            journal = BatchJournal(self.journal_path)
            lost = sorted({key.split("/", 1)[0] for key in self.booked} - set(journal.batches))
            if lost and self.journal_path.exists():  # moved away on purpose: found again by listing
                raise JournalUnreadable(
                    self.journal_path,
                    "",
                    f"has no line for batch {lost[0]}, whose answers usage.jsonl booked ({len(lost)} such "
                    "batch(es)): the journal was cut or replaced",
                )
            self._journal = journal
        return self._journal


def check_batchable(spec: ModelSpec) -> None:
    """A one-line error for a model that has no batch API to send to (a served or LiteLLM model)."""
    if spec.serve is not None or spec.api_type not in ("openai", "anthropic"):
        kind = "a served model (serve:)" if spec.serve is not None else f"api_type {spec.api_type}"
        raise JuristError(
            f"model {spec.alias!r} cannot be batched: {kind} has no batch API (batching needs api_type "
            "openai or anthropic with endpoints)"
        )


def batch_limits(spec: ModelSpec) -> tuple[int, int]:
    """(requests, bytes) a batch of ``spec``'s provider may hold."""
    from jurist.engine.batch.anthropic_batches import ANTHROPIC_MAX_BYTES, ANTHROPIC_MAX_REQUESTS
    from jurist.engine.batch.openai_batches import OPENAI_MAX_BYTES, OPENAI_MAX_REQUESTS

    if spec.api_type == "anthropic":
        return ANTHROPIC_MAX_REQUESTS, ANTHROPIC_MAX_BYTES
    return OPENAI_MAX_REQUESTS, OPENAI_MAX_BYTES


def dispatcher_for(
    spec: ModelSpec, batching: Batching, cache: RequestCache | None, ledger: Ledger | None = None
) -> BatchDispatcher:
    """The dispatcher of ``spec``'s batches, at its first endpoint (a batch goes to one place); the
    lines it books without a request (billed before a restart) go to ``ledger``."""
    from jurist.engine.batch.dispatcher import BatchDispatcher
    from jurist.engine.batch.openai_batches import OpenAIBatches

    check_batchable(spec)
    endpoint = spec.resolved_endpoints()[0]
    if spec.api_type == "anthropic":
        from jurist.engine.batch.anthropic_batches import AnthropicBatches

        wire: AnthropicBatches | OpenAIBatches = AnthropicBatches(
            endpoint.api_base or ANTHROPIC_API_BASE, endpoint.api_key, spec.timeout
        )
    else:
        wire = OpenAIBatches(endpoint.base_url, endpoint.api_key, spec.timeout, batching.tag)

    def book(phase: str, completion: Completion) -> None:
        if ledger is not None:
            ledger.batch_booked(phase, spec.alias, completion, spec)

    return BatchDispatcher(
        spec.alias,
        wire,
        batching.journal,
        batching.settings,
        cache,
        book=book,
        booked=batching.booked,
        tag=batching.tag if spec.api_type != "anthropic" else "",
    )


async def send_batched(
    batcher: BatchDispatcher,
    ledger: Ledger,
    spec: ModelSpec,
    phase: Phase,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    key: str,
    body: dict[str, Any],
    identity: Identity | None,
    *,
    fresh: bool = False,
) -> Completion:
    """One request through ``batcher``, accounted as the wire accounts one: its worst case reserved
    against the budget, its reply priced at the batch rates, a failure counted; a line whose bill the
    ledger already holds (booked by an earlier run, or the same line handed to two requests) counts as a
    cache hit. :class:`BatchFallback` (past the deadline) passes through with nothing spent.
    ``identity``: what answers at the endpoint the batch goes to (the completion's ``answered_by``).
    ``fresh``: asked anew (a cache refresh)."""
    from jurist.engine.spending import admit
    from jurist.engine.wire.transport import RequestFailed

    ticket = await admit(ledger, phase, spec, messages, params, batch=True)
    try:
        completion = await batcher.request(key, body, fresh=fresh, phase=phase)
    except RequestFailed as exc:
        ledger.failed(phase, spec.alias, ticket, attempts=exc.attempts)
        raise
    except BaseException:  # cancelled, or past the deadline: nothing spent here
        ledger.release(ticket)
        raise
    if completion.cached:
        ledger.release(ticket)
        ledger.cache_hit(phase, spec.alias)
    else:
        ledger.batch_completed(phase, spec.alias, completion, messages, ticket, spec=spec)
    completion.answered_by = identity
    return completion
