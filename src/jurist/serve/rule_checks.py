"""Rule rewards: each answer checked by :mod:`jurist.rules` exactly as ``jurist run`` checks it, inline or
spread over worker processes (``--rule-workers``): the reference checkers are pure Python (IFEval's
language checks run langdetect, ~50 ms a call), so one process is bound by one core."""

from __future__ import annotations

import asyncio
import multiprocessing
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
    suite: str, answer: str, ids: Sequence[str], kwargs: Sequence[Mapping[str, Any]], prompt: str
) -> list[dict[str, Any]]:
    """Each instruction's strict and loose outcome on the visible answer (a leading thought left out)."""
    text, _ = visible_text(answer)
    checks = []
    for result in check_response(table(suite), text, list(ids), list(kwargs), prompt):
        check: dict[str, Any] = {"id": result.instruction_id, "strict": result.strict, "loose": result.loose}
        if result.error:
            check["error"] = result.error
        checks.append(check)
    return checks


class RuleChecks:
    """Checks in this process (``workers`` 1) or in a pool of spawned processes."""

    def __init__(self, suite: str, workers: int = 1) -> None:
        self.suite = suite
        self.known = frozenset(table(suite))
        self._pool = (
            ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
            if workers > 1
            else None
        )

    async def check(
        self, answer: str, ids: Sequence[str], kwargs: Sequence[Mapping[str, Any]], prompt: str
    ) -> list[dict[str, Any]]:
        if self._pool is None:
            return check_answer(self.suite, answer, ids, kwargs, prompt)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._pool, check_answer, self.suite, answer, list(ids), [dict(k) for k in kwargs], prompt
        )

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


__all__ = ["RuleChecks", "check_answer"]
