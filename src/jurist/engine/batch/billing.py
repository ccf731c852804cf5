"""What a provider bills for a batch, booked in the ledger exactly once, whatever a kill interrupted.

A provider bills each line a batch answered, once, whether or not the run that submitted it lived to
read the answer. The ledger books each such line under its key, ``batch id/custom id``
(:func:`line_key`), which travels with the reply into the usage log (``batch_line``): a run started again
is handed the keys the log already holds (:attr:`~jurist.engine.batch.Batching.booked`) and books every
answered line that is not among them — the answers a killed run put in the cache or journaled but never
booked — and nothing twice. The journal's ``ended`` record keeps each answered line's usage
(:func:`usage_of`), so such a line is booked from it without asking the provider again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jurist.engine.wire.transport import Completion
from jurist.errors import JuristError

Book = Callable[[str, Completion], None]
"""Books one answered batch line no request of this run waits for: (ledger phase, its completion, whose
``batch_line`` is set)."""


class BatchStopped(JuristError):
    """A batch whose requests can neither be answered nor safely asked again in this run (it may still
    run at the provider): one line naming it and what to do; the journal keeps it for the next run."""


def line_key(batch_id: str, custom_id: str) -> str:
    """The key a batch line's bill is booked under (one per batch and line: the provider bills each)."""
    return f"{batch_id}/{custom_id}"


def usage_of(completion: Completion) -> list[int | None]:
    """A line's billed usage as the journal keeps it: prompt, completion, cache-read, cache-write tokens."""
    return [
        completion.prompt_tokens,
        completion.completion_tokens,
        completion.cached_tokens,
        completion.cache_write_tokens,
    ]


def billed_line(usage: Any) -> Completion | None:
    """The completion a journaled usage stands for (no text: it books the bill only); None when the
    journal holds no readable usage for it."""
    if not isinstance(usage, list) or len(usage) != 4:
        return None
    counts = [
        value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
        for value in usage
    ]
    prompt, output, cached, written = counts
    return Completion("", None, prompt, output, 0.0, 1, cached_tokens=cached, cache_write_tokens=written)


def stopped_message(alias: str, batch_id: str, why: str) -> str:
    """The one line of a batch the run stops on, and what to do."""
    return (
        f"model {alias!r}: batch {batch_id} {why}; it may still run at the provider, so its requests are "
        "not submitted again (that would bill them twice): it stays in batches.jsonl, and running the "
        "same command again polls it"
    )
