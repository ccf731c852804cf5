"""Which models the pre-run check probes with a chat request: those with requests the cache cannot answer.

The probe (:mod:`jurist.engine.check`) costs one chat request per endpoint. A run whose answers are all in
the request cache (the same run again into a new directory, a copy on another disk) would send nothing
else, so it should send no probe either. Whether a model's answers are cached is known without a chat
request: its identity (``GET /v1/models``, or nothing for a hosted API or a server jurist starts) and the
cache keys of its first and last missing answers. When both are cached, nothing new is to come from it;
when every candidate's missing answers are cached, the judges judge answers the cache already held, so
their judgments are taken to be cached too and they are not probed (a judge the cache cannot answer after
all is sent to as with ``--no-check``: its failures are recorded and retried by the next run). Without a
cache, or with answers already on disk (new work for a judge), every model with work is probed as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

from jurist.config import ModelSpec
from jurist.engine import ConcurrencyLimits, ModelClient, RequestCache, RetryPolicy, open_cache
from jurist.run.generate import AnswerJob, answer_messages, sample_params


async def _answer_cached(client: ModelClient, job: AnswerJob) -> bool:
    """Whether the request :func:`jurist.run.generate` sends first for ``job`` is in the cache."""
    messages = answer_messages(client.spec, job.question)
    first = job.samples[0]
    if len(job.samples) > 1 and client.sample_batching is not False:  # one request with ``n``
        return await client.in_cache(
            messages, sample=first, n=len(job.samples), **sample_params(client, first)
        )
    return await client.in_cache(messages, sample=first, **sample_params(client, first))


async def _uncached(
    specs: Mapping[str, ModelSpec], pending: Mapping[str, Sequence[AnswerJob]], cache: RequestCache
) -> set[str]:
    """The aliases whose first or last missing answer the cache does not hold."""
    limits = ConcurrencyLimits(1)
    found: set[str] = set()
    for alias, jobs in pending.items():
        if not jobs or alias not in specs:
            continue
        client = ModelClient(specs[alias], limits, RetryPolicy(max_attempts=1), cache=cache)
        try:
            ends = [jobs[0], jobs[-1]] if len(jobs) > 1 else [jobs[0]]
            if not all([await _answer_cached(client, job) for job in ends]):
                found.add(alias)
        finally:
            await client.aclose()
    return found


def chat_probes_due(
    specs: Mapping[str, ModelSpec],
    pending: Mapping[str, Sequence[AnswerJob]],
    busy: set[str],
    judges: Sequence[str],
    cache_path: Path | None,
    cache_enabled: bool,
) -> set[str]:
    """Of ``busy`` (the models with work in this run), those to probe: see the module's docstring."""
    generating = {alias for alias, jobs in pending.items() if jobs}
    if not generating or not cache_enabled:
        return busy
    cache = open_cache(cache_path, enabled=True)
    if cache is None:
        return busy
    try:
        uncached = asyncio.run(_uncached(specs, pending, cache))
    finally:
        cache.close()
    if not uncached:
        return set()
    return {alias for alias in busy if alias in uncached or alias in judges or alias not in generating}
