"""The batch dispatcher against hostile batch servers (tests/mock_batch.py's faults): a batch object of
any shape, a journal the disk refuses, an API that stops answering, a cancel that never completes — each
ends its requests in one line or retries them within the deadline, never hangs, and never submits a batch
that may still run again."""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurist.config import ModelSpec
from jurist.engine.batch import Batching, BatchSettings, BatchStopped, dispatcher_for
from jurist.engine.batch.journal import BatchJournal
from jurist.engine.cache.store import RequestCache
from jurist.engine.wire.transport import RequestFailed
from jurist.errors import StorageError
from mock_batch import MockBatchServer

FAST = BatchSettings(poll_s=0.02, max_age_s=0.05, attempts=2, cancel_wait_s=0.3)
BOUND_S = 30.0  # far above what any case takes: a hang fails the test instead of the suite


@pytest.fixture
def server() -> Iterator[MockBatchServer]:
    mock = MockBatchServer(validate_s=0.01, run_s=0.05, finalize_s=0.01)
    mock.start()
    yield mock
    mock.stop()


def spec_of(server: MockBatchServer, api_type: str) -> ModelSpec:
    return ModelSpec.model_validate(
        {
            "alias": "judge",
            "model": "judge",
            "api_type": api_type,
            "endpoints": [{"api_base": server.base_url, "api_key": "k"}],
        }
    )


def body(text: str) -> dict[str, Any]:
    return {"model": "judge", "messages": [{"role": "user", "content": text}], "max_tokens": 32}


async def ask(
    server: MockBatchServer, tmp: Path, texts: list[str], api_type: str = "openai", **settings: Any
) -> list[Any]:
    """Every text through a fresh dispatcher (as a run would), each request's completion or exception."""
    batching = Batching(
        tmp / "batches.jsonl", {"judge": frozenset({"judge"})}, BatchSettings(**{**FAST.__dict__, **settings})
    )
    cache = RequestCache(tmp / "cache.sqlite")
    dispatcher = dispatcher_for(spec_of(server, api_type), batching, cache)
    try:
        ids = [f"{i:064x}" for i in range(len(texts))]
        asked = (dispatcher.request(cid, body(text)) for cid, text in zip(ids, texts, strict=True))
        return await asyncio.wait_for(asyncio.gather(*asked, return_exceptions=True), BOUND_S)
    finally:
        await dispatcher.aclose()
        cache.close()


@pytest.mark.parametrize("fault", ["errors_list", "errors_string"])
def test_a_failed_batch_with_errors_of_any_shape_ends_its_requests_with_the_reason(
    server: MockBatchServer, tmp_path: Path, fault: str
) -> None:
    server.object_fault = fault
    got = asyncio.run(ask(server, tmp_path, ["one", "two"]))
    assert all(isinstance(g, RequestFailed) and "boom" in str(g) for g in got), got
    assert all("--batch-attempts 2 spent: raise it" in str(g) for g in got)  # not "run it again"
    assert server.batch_stats.batches["openai"] == 2  # a failed batch ran nothing: asked again, once


@pytest.mark.parametrize("api_type", ["openai", "anthropic"])
def test_a_status_the_api_does_not_have_stops_in_one_line_without_resubmitting(
    server: MockBatchServer, tmp_path: Path, api_type: str
) -> None:
    server.object_fault = "status_garbage"
    got = asyncio.run(ask(server, tmp_path, ["one", "two"], api_type))
    assert all(isinstance(g, BatchStopped) for g in got), got
    message = str(got[0])
    assert "unknown" in message and "\n" not in message and "running the same command again" in message
    assert server.batch_stats.batches[api_type] == 1 and max(server.batch_stats.lines.values()) == 1


def test_an_unforeseen_exception_in_a_poll_task_reaches_the_requests(
    server: MockBatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jurist.engine.batch.openai_batches import OpenAIBatches

    async def broken(self: OpenAIBatches, batch_id: str) -> Any:
        raise AttributeError("'list' object has no attribute 'get'")

    monkeypatch.setattr(OpenAIBatches, "state", broken)
    got = asyncio.run(ask(server, tmp_path, ["one"]))
    assert isinstance(got[0], BatchStopped)
    assert "could not be followed (AttributeError" in str(got[0]) and "batch batch_" in str(got[0])


def test_a_disk_full_while_journaling_ends_every_request_with_one_storage_line(
    server: MockBatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jurist.engine.batch.journal as journal_module

    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal_module, "_write_all", full)
    got = asyncio.run(ask(server, tmp_path, ["one", "two", "three"]))
    assert all(isinstance(g, StorageError) for g in got), got
    assert "No space left on device" in str(got[0]) and "batch journal" in str(got[0])
    assert server.batch_stats.batches["openai"] == 0  # nothing created without its journal line first


def test_an_unreachable_batch_is_never_submitted_again(server: MockBatchServer, tmp_path: Path) -> None:
    """F3: polls fail in a row: the run stops in one line instead of submitting the lines again."""
    server.hold = True

    async def main() -> list[Any]:
        asking = asyncio.ensure_future(ask(server, tmp_path, ["one", "two"]))
        while not server.batch_stats.batches["openai"]:
            await asyncio.sleep(0.01)
        server.poll_down = True
        return await asking

    got = asyncio.run(main())
    assert all(isinstance(g, BatchStopped) and "could not be polled 8 times" in str(g) for g in got)
    assert server.batch_stats.batches["openai"] == 1 and max(server.batch_stats.lines.values()) == 1
    journal = BatchJournal(tmp_path / "batches.jsonl")
    assert [b.ended for b in journal.batches.values()] == [False]  # the next run polls it
    server.poll_down, server.hold = False, False
    again = asyncio.run(ask(server, tmp_path, ["one", "two"]))
    assert [g.text for g in again] == ["[judge] one", "[judge] two"]
    assert server.batch_stats.batches["openai"] == 1  # polled, not submitted again


def test_a_few_failed_polls_are_retried(server: MockBatchServer, tmp_path: Path) -> None:
    server.poll_failures = 5
    got = asyncio.run(ask(server, tmp_path, ["one"]))
    assert got[0].text == "[judge] one" and server.batch_stats.batches["openai"] == 1


@pytest.mark.parametrize("fault", ["cancel_stuck", "poll_down"])
def test_the_deadline_bounds_a_cancel_that_never_completes(
    server: MockBatchServer, tmp_path: Path, fault: str
) -> None:
    """Past --batch-deadline the batch is cancelled; a cancel not confirmed within cancel_wait_s stops
    the run in one line (the batch may still answer: its lines are not sent synchronously too)."""
    server.hold = True

    async def main() -> list[Any]:
        asking = asyncio.ensure_future(ask(server, tmp_path, ["one"], deadline_s=0.2))
        while not server.batch_stats.batches["openai"]:
            await asyncio.sleep(0.01)
        setattr(server, fault, True)
        return await asking

    got = asyncio.run(main())
    assert isinstance(got[0], BatchStopped) and "cancel 0.3s after --batch-deadline" in str(got[0])
    assert server.stats.requests == 0 and server.batch_stats.batches["openai"] == 1


@pytest.mark.parametrize("fault", ["status_garbage", "poll_down"])
def test_the_command_ends_in_one_line_naming_the_batch(
    tmp_path: Path, server: MockBatchServer, fault: str
) -> None:
    """End to end: the hostile batch server makes ``jurist run --batch judges`` end, without a hang or a
    traceback, in one line naming the batch, and nothing is submitted twice."""
    import subprocess
    import sys

    from conftest import write_models_file

    if fault == "poll_down":
        server.poll_down = True
    else:
        server.object_fault = fault
    write_models_file(tmp_path / "models.yaml", server.base_url, {"strong": {}, "judge-good": {}})
    args = [sys.executable, "-m", "jurist", "run", "--models-file", "models.yaml", "--model", "strong"]
    args += ["--judge", "judge-good", "--limit", "3", "--no-progress", "--no-check", "--batch", "judges"]
    args += ["--batch-poll", "0.02", "--batch-age", "0.05"]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "batch batch_" in lines[0] and "running the same command again polls it" in lines[0]
    assert server.batch_stats.batches["openai"] == 1 and max(server.batch_stats.lines.values()) == 1
