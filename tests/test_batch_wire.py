"""jurist's batch wire and dispatcher against the batch mock: both protocols, per-line errors retried,
expiry retried, a failing batch retried, a refused line failed, the deadline's synchronous fallback,
and resuming from the journal without submitting again."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurist.config import ModelSpec
from jurist.engine.batch import Batching, BatchSettings, dispatcher_for
from jurist.engine.batch.journal import BatchJournal
from jurist.engine.cache.store import RequestCache
from jurist.engine.wire.transport import RequestFailed
from mock_batch import MockBatchServer

FAST = BatchSettings(poll_s=0.02, max_age_s=0.05, attempts=3)


@pytest.fixture
def server() -> Iterator[MockBatchServer]:
    mock = MockBatchServer(validate_s=0.01, run_s=0.05, finalize_s=0.01)
    mock.start()
    yield mock
    mock.stop()


def _spec(server: MockBatchServer, api_type: str) -> ModelSpec:
    base = server.base_url
    return ModelSpec.model_validate(
        {
            "alias": "judge",
            "model": "judge",
            "api_type": api_type,
            "endpoints": [{"api_base": base, "api_key": "k"}],
        }
    )


def _body(text: str) -> dict[str, Any]:
    return {"model": "judge", "messages": [{"role": "user", "content": text}], "max_tokens": 32}


async def _ask(
    server: MockBatchServer, tmp: Path, api_type: str, texts: list[str], **settings: Any
) -> list[Any]:
    batching = Batching(
        tmp / "batches.jsonl", {"judge": frozenset({"judge"})}, BatchSettings(**{**FAST.__dict__, **settings})
    )
    cache = RequestCache(tmp / "cache.sqlite")
    dispatcher = dispatcher_for(_spec(server, api_type), batching, cache)
    try:
        ids = [f"{i:064x}" for i in range(len(texts))]
        return await asyncio.gather(
            *(dispatcher.request(cid, _body(text)) for cid, text in zip(ids, texts, strict=True)),
            return_exceptions=True,
        )
    finally:
        await dispatcher.aclose()
        cache.close()


@pytest.mark.parametrize("api_type", ["openai", "anthropic"])
def test_lines_are_answered_errors_and_expiry_retried(
    server: MockBatchServer, tmp_path: Path, api_type: str
) -> None:
    server.line_faults = {"two": ["error500"], "three": ["expire"], "four": ["error400"]}
    got = asyncio.run(_ask(server, tmp_path, api_type, ["one", "two", "three", "four"]))
    assert [g.text for g in got[:3]] == ["[judge] one", "[judge] two", "[judge] three"]
    assert [g.attempts for g in got[:3]] == [1, 2, 2]
    assert isinstance(got[3], RequestFailed) and got[3].kind == "client_error"
    assert server.batch_stats.batches[api_type] == 2  # the first, then one for the two lines retried
    journal = BatchJournal(tmp_path / "batches.jsonl")
    assert all(batch.ended for batch in journal.batches.values())


def test_a_failed_batch_is_retried_within_bounds(server: MockBatchServer, tmp_path: Path) -> None:
    server.fail_batches = 1
    got = asyncio.run(_ask(server, tmp_path, "openai", ["a", "b"]))
    assert [g.text for g in got] == ["[judge] a", "[judge] b"]
    server.fail_batches = 5
    failed = asyncio.run(_ask(server, tmp_path / "again", "openai", ["c"], attempts=2))
    assert isinstance(failed[0], RequestFailed) and "after 2 batch" in str(failed[0])


@pytest.mark.parametrize("api_type", ["openai", "anthropic"])
def test_batch_attempts_are_bounded_over_runs(server: MockBatchServer, tmp_path: Path, api_type: str) -> None:
    """The journal counts the batches that left a request unanswered: a run started again goes on from
    that count instead of starting it again, and a request past it is not sent until the bound is raised."""
    server.line_faults = {"flaky": ["error500"] * 3}
    first = asyncio.run(_ask(server, tmp_path, api_type, ["flaky", "fine"], attempts=2))
    assert isinstance(first[0], RequestFailed) and "after 2 batch" in str(first[0])
    assert first[1].text == "[judge] fine"
    assert server.batch_stats.batches[api_type] == 2
    again = asyncio.run(_ask(server, tmp_path, api_type, ["flaky"], attempts=2))
    assert isinstance(again[0], RequestFailed) and "over earlier runs" in str(again[0])
    assert server.batch_stats.batches[api_type] == 2  # not sent again
    raised = asyncio.run(_ask(server, tmp_path, api_type, ["flaky"], attempts=3))
    assert isinstance(raised[0], RequestFailed) and "after 3 batch" in str(raised[0])
    assert server.batch_stats.batches[api_type] == 3  # one batch more, its third
    assert BatchJournal(tmp_path / "batches.jsonl").unanswered[f"{0:064x}"] == 3


def test_batches_are_cut_by_size(server: MockBatchServer, tmp_path: Path) -> None:
    got = asyncio.run(_ask(server, tmp_path, "openai", [f"q{i}" for i in range(7)], max_requests=3))
    assert len(got) == 7 and server.batch_stats.batches["openai"] == 3
    assert max(server.batch_stats.lines.values()) == 1


def test_a_resumed_run_polls_the_batch_it_submitted(server: MockBatchServer, tmp_path: Path) -> None:
    """A run killed while its batch runs: the next one finds the batch in the journal and polls it."""
    server.hold = True

    async def killed() -> None:
        task = asyncio.ensure_future(_ask(server, tmp_path, "anthropic", ["x", "y"]))
        while server.batch_stats.polls < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(killed())
    assert server.batch_stats.batches["anthropic"] == 1
    server.release()
    got = asyncio.run(_ask(server, tmp_path, "anthropic", ["x", "y"]))
    assert [g.text for g in got] == ["[judge] x", "[judge] y"]
    assert server.batch_stats.batches["anthropic"] == 1  # polled, never submitted again
    cache = RequestCache(tmp_path / "cache.sqlite")
    assert cache.get(f"{0:064x}") is not None  # the answers are in the request cache under their ids
    cache.close()


def test_past_the_deadline_lines_go_synchronously(server: MockBatchServer, tmp_path: Path) -> None:
    from jurist.engine.batch import BatchFallback

    server.hold = True
    got = asyncio.run(_ask(server, tmp_path, "openai", ["late"], deadline_s=0.2))
    assert isinstance(got[0], BatchFallback)  # the batch was cancelled at the deadline
    assert server.batch_stats.batches["openai"] == 1


def test_a_crash_between_creating_a_batch_and_journaling_it_finds_the_batch(
    server: MockBatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAI: the input file's id is journaled before the batch is created, so a run that died before
    the batch's id reached the journal finds the batch (GET /v1/batches) instead of submitting again."""

    def die(*args: Any, **kwargs: Any) -> None:
        raise asyncio.CancelledError  # the process stops here, as under kill -9: nothing more is said

    server.hold = True
    with monkeypatch.context() as patch:
        patch.setattr(BatchJournal, "submitted", die)

        async def dying() -> None:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(_ask(server, tmp_path, "openai", ["x", "y"]), 0.5)

        asyncio.run(dying())
    assert server.batch_stats.batches["openai"] == 1
    server.release()
    got = asyncio.run(_ask(server, tmp_path, "openai", ["x", "y"]))
    assert [g.text for g in got] == ["[judge] x", "[judge] y"]
    assert server.batch_stats.batches["openai"] == 1  # found, never created twice
    journal = BatchJournal(tmp_path / "batches.jsonl")
    assert not journal.intents and len(journal.batches) == 1


def test_a_submitting_line_whose_batch_was_never_created_is_asked_again(
    server: MockBatchServer, tmp_path: Path
) -> None:
    journal = BatchJournal(tmp_path / "batches.jsonl")
    journal.submitting("openai", "judge", "lost", [f"{0:064x}"], input_file_id="file-gone")
    got = asyncio.run(_ask(server, tmp_path, "openai", ["x"]))
    assert got[0].text == "[judge] x" and server.batch_stats.batches["openai"] == 1
    assert not BatchJournal(tmp_path / "batches.jsonl").intents


def test_a_batched_request_reserves_its_worst_case_at_the_batch_rates() -> None:
    from jurist.config import Price
    from jurist.money import Budget, Ledger

    ledger = Ledger({"j": Price(input=2.0, output=8.0)}, Budget(max_cost=1.0))
    spec = ModelSpec.model_validate({"alias": "j", "model": "j", "max_tokens": 100})
    messages = [{"role": "user", "content": "x" * 400}]
    sync = asyncio.run(ledger.admit("judge", spec, messages, {}))
    batched = asyncio.run(ledger.admit("judge", spec, messages, {}, batch=True))
    assert sync is not None and batched is not None
    assert batched.cost == pytest.approx(sync.cost / 2)


def test_batch_prices_take_explicit_rates_or_a_discount() -> None:
    from jurist.config import Price

    assert Price(input=2.0, output=8.0).batch_rates() == Price(input=1.0, output=4.0)
    explicit = Price(input=2.0, output=8.0, batch_input=1.5, batch_output=3.0).batch_rates()
    assert (explicit.input, explicit.output) == (1.5, 3.0)
    tenth = Price(input=2.0, output=8.0, cached_input=0.5, batch_discount=0.1).batch_rates()
    assert (tenth.input, tenth.output, tenth.cached_input) == pytest.approx((0.2, 0.8, 0.05))


def test_the_models_file_takes_batch_anthropic_and_batch_prices(tmp_path: Path) -> None:
    from jurist.config import ANTHROPIC_API_BASE, load_models_file
    from jurist.errors import InputError

    path = tmp_path / "m.yaml"
    path.write_text(
        "claude:\n  model: anthropic/claude-x\n  batch: true\n"
        "  price: {input: 3, output: 15, batch_discount: 0.5}\n"
    )
    spec = load_models_file(path, {"ANTHROPIC_API_KEY": "sk-ant-test"})["claude"]
    assert (spec.api_type, spec.model, spec.batch) == ("anthropic", "claude-x", True)
    assert spec.endpoints is not None and spec.endpoints[0].api_base == ANTHROPIC_API_BASE
    assert spec.endpoints[0].api_key == "sk-ant-test"
    assert spec.price is not None and spec.price.batch_rates().output == 7.5
    path.write_text("m:\n  model: m\n  batch: true\n  serve: {kind: llama.cpp, model: x.gguf}\n")
    with pytest.raises(InputError, match="batch: true needs a provider's batch API"):
        load_models_file(path, {})
