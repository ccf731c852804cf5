"""Rule rewards: each answer checked by :mod:`jurist.rules` exactly as ``jurist run`` checks it, inline or
spread over worker processes (``--rule-workers``): the reference checkers are pure Python (NLTK's Punkt,
langdetect), so one process is bound by one core. A request's batch goes to the workers in a few slices
(one pickled task per slice, not per answer), off the server's event loop, so other clients' requests
are read and answered while a batch is checked."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from jurist.rules import Checker, check_response, checkers, visible_text

_TABLES: dict[str, Mapping[str, Checker]] = {}


def table(suite: str) -> Mapping[str, Checker]:
    """The suite's checkers, built once per process."""
    found = _TABLES.get(suite)
    if found is None:
        found = _TABLES[suite] = checkers(suite)
    return found


def check_answer(
    suite: str,
    answer: str,
    ids: Sequence[str],
    kwargs: Sequence[Mapping[str, Any]],
    prompt: str,
    loose: bool = False,
) -> list[dict[str, Any]]:
    """Each instruction's outcome on the visible answer (a leading thought left out): strict, and loose
    with ``loose`` (the reward counts one of them, so only that one is computed; strict is always there,
    as the prompt's all-strict is)."""
    text, _ = visible_text(answer)
    checks = []
    for result in check_response(table(suite), text, list(ids), list(kwargs), prompt, loose=loose):
        check: dict[str, Any] = {"id": result.instruction_id, "strict": result.strict}
        if loose:
            check["loose"] = result.loose
        if result.error:
            check["error"] = result.error
        checks.append(check)
    return checks


RuleJob = tuple[str, Sequence[str], Sequence[Mapping[str, Any]], str]
"""One answer to check: (answer, instruction ids, their kwargs, the prompt)."""

SLICES_PER_WORKER = 4
"""Slices a batch is cut into per worker: few enough that pickling and waking a worker is paid seldom,
enough that a slower slice does not leave the other workers idle at the end."""


def check_answers(
    suite: str, jobs: Sequence[RuleJob], loose: bool = False
) -> list[tuple[list[dict[str, Any]], float]]:
    """Each job's checks and the seconds they took (a worker's task: one slice of a batch)."""
    done = []
    for answer, ids, kwargs, prompt in jobs:
        started = time.perf_counter()
        checks = check_answer(suite, answer, ids, kwargs, prompt, loose)
        done.append((checks, time.perf_counter() - started))
    return done


MAX_AUTO_RULE_WORKERS = 8
"""Rule workers a server starts by itself at most (more cores are left to the trainer beside it)."""


def usable_cores() -> int:
    """The cores this process may run on (its affinity, as a container or ``taskset`` sets it), at most
    :data:`MAX_AUTO_RULE_WORKERS`: the rule checks are pure Python, one core per process, so one machine
    rewards by rule only as fast as the processes checking."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_AUTO_RULE_WORKERS))


class RuleChecks:
    """Checks in this process (``workers`` 1) or in a pool of spawned processes; strict outcomes, and
    loose ones too with ``loose``."""

    def __init__(self, suite: str, workers: int = 1, loose: bool = False) -> None:
        self.suite, self.loose = suite, loose
        self.known = frozenset(table(suite))
        self.workers = workers
        self._pool = (
            ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
            if workers > 1
            else None
        )

    async def check(
        self, answer: str, ids: Sequence[str], kwargs: Sequence[Mapping[str, Any]], prompt: str
    ) -> list[dict[str, Any]]:
        if self._pool is None:
            return check_answer(self.suite, answer, ids, kwargs, prompt, self.loose)
        loop = asyncio.get_running_loop()
        plain = [dict(k) for k in kwargs]
        return await loop.run_in_executor(
            self._pool, check_answer, self.suite, answer, list(ids), plain, prompt, self.loose
        )

    async def check_many(self, jobs: Sequence[RuleJob]) -> list[tuple[list[dict[str, Any]], float]]:
        """Each job's checks and seconds, in order: inline, or over the pool in a few slices."""
        if self._pool is None:
            return check_answers(self.suite, jobs, self.loose)
        workers = self.workers
        size = max(1, -(-len(jobs) // (workers * SLICES_PER_WORKER)))
        loop = asyncio.get_running_loop()
        plain = [
            (answer, list(ids), [dict(k) for k in kwargs], prompt) for answer, ids, kwargs, prompt in jobs
        ]
        slices = [plain[at : at + size] for at in range(0, len(plain), size)]
        done = await asyncio.gather(
            *(loop.run_in_executor(self._pool, check_answers, self.suite, p, self.loose) for p in slices)
        )
        return [result for piece in done for result in piece]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


__all__ = ["RuleChecks", "RuleJob", "check_answer", "check_answers", "usable_cores"]
