"""How a run uses batch APIs (``--batch-*``), and the signal that a request is to go synchronously."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BatchSettings:
    """How a run uses batch APIs (``--batch-*``)."""

    poll_s: float = 30.0
    max_requests: int | None = None
    """Cut a batch at this many requests (None: the provider's limit)."""
    max_age_s: float = 30.0
    """Or once its oldest request has waited this long (answers arriving now are judged in the next)."""
    attempts: int = 3
    """Batches that may leave a request unanswered before it fails, over every run of the run directory
    (the journal counts them: a run started again does not start the count again)."""
    deadline_s: float | None = None
    """Past this long in batches, a request is sent synchronously (None: never)."""
    cancel_wait_s: float = 60.0
    """How long a batch cancelled at the deadline may take to confirm it (then the run stops with one
    line: the batch may still answer, so its requests are not sent again)."""
    max_pending: int = 200_000
    """Requests of one model waiting in batches at once (the most workers of a batched model's stage;
    started as jobs arrive)."""


class BatchFallback(Exception):
    """The request is past ``--batch-deadline``: the caller sends it synchronously."""
