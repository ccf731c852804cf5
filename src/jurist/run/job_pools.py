"""How a stage's jobs are taken: a fixed pool of workers per client, each job made only when a worker
takes it, and word of the last one taken (a batched model's dispatcher; a run waiting on its last replies)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any

from jurist.engine import Engine, ModelClient


def workers_for(engine: Engine, client: ModelClient, jobs: int) -> int:
    """How many jobs of one client run at once: its slots twice over, plus some.

    One task per job (the old way) cost ~0.1 MB of memory per question at 8 models, all of it waiting on
    a semaphore. A fixed pool of workers per client keeps memory flat in the number of questions; twice
    the client's slots keep them busy while some jobs sleep in a retry backoff (which holds no slot).
    """
    if client.batcher is not None:  # requests wait in batches, holding no slot: as many as a batch takes
        return max(1, min(jobs, client.batcher.settings.max_pending))
    slots = min(client.spec.parallel, engine.limits.max_concurrency)
    return max(1, min(jobs, 2 * slots + 64))


def lazy_jobs(
    one: Callable[..., Awaitable[None]], todo: Iterable[Any], *args: Any
) -> Iterator[Awaitable[None]]:
    """``one(job, *args)`` for each job, made only when a worker takes it (the arguments are bound now: a
    generator expression in a loop would see the loop's last client and file)."""
    for job in todo:
        yield one(job, *args)


def announcing(
    jobs: Iterable[Awaitable[None]], count: int, last: Callable[[], None]
) -> Iterator[Awaitable[None]]:
    """``jobs`` (``count`` of them), calling ``last()`` once as the last one is taken (or they end early):
    a batched model's dispatcher then knows no further job will start."""
    told = False
    for index, job in enumerate(jobs, 1):
        if index >= count and not told:
            told = True
            last()
        yield job
    if not told:
        last()


async def run_jobs(jobs: Iterable[Awaitable[None]], workers: int) -> None:
    """Await ``jobs`` (lazy coroutines, made one at a time) with at most ``workers`` of them at once."""
    todo = iter(jobs)

    async def worker() -> None:
        for job in todo:  # one event loop: workers never take the same job
            await job

    await asyncio.gather(*(worker() for _ in range(workers)))


def last_taken(
    fed: Callable[[], None] | None, models_asking: list[int], all_asked: Callable[[], None] | None
) -> Callable[[], None]:
    """What one model's last job being taken tells: its batcher (``fed``), and, once it is the last of
    the ``models_asking`` to get there, ``all_asked``."""

    def last() -> None:
        if fed is not None:
            fed()
        models_asking[0] -= 1
        if not models_asking[0] and all_asked is not None:
            all_asked()

    return last
