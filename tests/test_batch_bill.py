"""The ledger against the provider's bill (the batch mock's own, ``billed``): a line a batch answered is
booked once, whether the run that submitted it read it, cached it, journaled it or died first; and the
budget spends the same figure. Each kill point is reached exactly, in process (the process stops there, as
under kill -9), then a second run books what the first did not; tests/test_batch_kill.py kills real runs
at random."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurist.config import Price
from jurist.engine.batch import Batching, BatchSettings, dispatcher_for, send_batched
from jurist.engine.batch.dispatcher import BatchDispatcher
from jurist.engine.batch.journal import BatchJournal
from jurist.engine.cache.store import RequestCache
from jurist.money import Budget, Ledger
from mock_batch import MockBatchServer
from test_batch_faults import body, spec_of

FAST = BatchSettings(poll_s=0.02, max_age_s=0.05)
RATES = (2.0, 8.0)
TEXTS = ["one", "two", "three", "four"]


@pytest.fixture
def server() -> Iterator[MockBatchServer]:
    mock = MockBatchServer(validate_s=0.01, run_s=0.05, finalize_s=0.01)
    mock.start()
    yield mock
    mock.stop()


class Run:
    """One run's engine parts over a run directory: the usage log as a list of records (what
    usage.jsonl would hold), the journal, the cache, a ledger with a budget."""

    def __init__(self, tmp: Path, server: MockBatchServer, log: list[dict[str, Any]], api_type: str) -> None:
        self.log, self.server, self.api_type = log, server, api_type
        self.ledger = Ledger({"judge": Price(input=RATES[0], output=RATES[1])}, Budget(max_cost=100.0))
        self.ledger.budget.spent_cost = sum(r.get("cost_usd", 0.0) for r in log)  # type: ignore[union-attr]
        self.ledger.record = log.append
        booked = {r["batch_line"] for r in log if "batch_line" in r}
        self.batching = Batching(tmp / "batches.jsonl", {"judge": frozenset({"judge"})}, FAST, booked)
        self.cache = RequestCache(tmp / "cache.sqlite")
        self.spec = spec_of(server, api_type)

    async def ask(self, texts: list[str]) -> list[Any]:
        dispatcher = dispatcher_for(self.spec, self.batching, self.cache, self.ledger)
        try:
            dispatcher.feeding()
            asked = []
            for text in texts:
                key = hashlib.sha256(text.encode()).hexdigest()  # the request's cache key
                value = self.cache.get(key)
                if value is not None:  # what the client does first: a cache hit is free
                    self.ledger.cache_hit("judge", "judge")
                    asked.append(asyncio.sleep(0, value["text"]))
                    continue
                b = body(text)
                how = dispatcher, self.ledger, self.spec, "judge", b["messages"], {"max_tokens": 32}, key, b
                asked.append(send_batched(*how, None))
            dispatcher.fed()
            answers = asyncio.ensure_future(asyncio.gather(*asked, return_exceptions=True))
            while not answers.done() and not KILLED.is_set():
                await asyncio.sleep(0.01)
            if KILLED.is_set():
                answers.cancel()
                raise asyncio.CancelledError
            return answers.result()
        finally:
            await dispatcher.aclose()
            self.cache.close()

    def batch_cost(self) -> float:
        return sum(r.get("batch_cost_usd", 0.0) for r in self.log)


KILLED = threading.Event()


def _stop_here(*args: Any, **kwargs: Any) -> None:
    KILLED.set()  # the process ends here: nothing after it runs
    raise asyncio.CancelledError


@pytest.mark.parametrize("api_type", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "kill_at",
    [
        (BatchJournal, "ended"),  # answers in the cache, the journal not told: the batch looks open
        (BatchDispatcher, "_hand_out"),  # journaled ended, nothing booked
        (Ledger, "batch_completed"),  # handed out, the request killed before it booked its line
    ],
    ids=["after-cache", "after-journal", "before-booking"],
)
def test_a_kill_at_each_point_books_every_billed_line_once(
    tmp_path: Path,
    server: MockBatchServer,
    monkeypatch: pytest.MonkeyPatch,
    api_type: str,
    kill_at: tuple[type, str],
) -> None:
    log: list[dict[str, Any]] = []
    KILLED.clear()
    with monkeypatch.context() as patch, contextlib.suppress(asyncio.CancelledError):
        patch.setattr(*kill_at, _stop_here)
        asyncio.run(Run(tmp_path, server, log, api_type).ask(TEXTS))
    assert KILLED.is_set()
    KILLED.clear()
    bill = server.bill_usd(*RATES)
    assert bill > 0 and len(server.batch_stats.billed) == len(TEXTS)
    second = Run(tmp_path, server, log, api_type)
    got = asyncio.run(second.ask(TEXTS))
    assert [g if isinstance(g, str) else g.text for g in got] == [f"[judge] {t}" for t in TEXTS]
    assert server.batch_stats.batches[api_type] == 1  # nothing submitted again
    assert second.batch_cost() == pytest.approx(bill)  # the ledger is the provider's bill
    assert second.ledger.budget is not None and second.ledger.budget.spent_cost == pytest.approx(bill)
    booked = [r["batch_line"] for r in log if "batch_line" in r]
    assert sorted(booked) == sorted(server.batch_stats.billed)  # each billed line booked, once
    third = Run(tmp_path, server, log, api_type)  # and once more: nothing new is booked
    asyncio.run(third.ask(TEXTS))
    assert third.batch_cost() == pytest.approx(bill)


def test_the_same_line_asked_twice_at_once_is_booked_once(tmp_path: Path, server: MockBatchServer) -> None:
    log: list[dict[str, Any]] = []
    run = Run(tmp_path, server, log, "openai")
    got = asyncio.run(run.ask(["same", "same"]))
    assert [g.text for g in got] == ["[judge] same"] * 2
    assert len(server.batch_stats.billed) == 1 and run.batch_cost() == pytest.approx(server.bill_usd(*RATES))
