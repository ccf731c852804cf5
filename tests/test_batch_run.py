"""Judged runs through batch APIs against the batch mock: the judgments of a synchronous run, no
synchronous judge call, the batch price in the ledger, errored and expired lines retried, the request
cache shared both ways, and kill -9 while a batch runs, then the same command: polled, not submitted again,
every game billed once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import run_config, write_models_file
from jurist.engine.batch import BatchSettings
from jurist.errors import JuristError
from jurist.run.batching import BatchChoice
from jurist.store.jsonl import read_jsonl
from mock_batch import MockBatchServer

FAST = BatchChoice("judges", BatchSettings(poll_s=0.02, max_age_s=0.05))
PRICE = {"input": 2.0, "output": 8.0}
LIMIT = 6


@pytest.fixture
def server() -> Iterator[MockBatchServer]:
    mock = MockBatchServer(validate_s=0.01, run_s=0.05, finalize_s=0.01)
    mock.start()
    yield mock
    mock.stop()


def _models(tmp: Path, server: MockBatchServer, judge_extra: dict[str, Any] | None = None) -> Path:
    judge = {"price": PRICE, **(judge_extra or {})}
    return write_models_file(
        tmp / "models.yaml", server.base_url, {"strong": {}, "mixed": {}, "judge-good": judge}
    )


def _unpaid(value: Any) -> Any:
    """A stored judgment without its usage and time (latency, attempts and when differ between batches and
    the wire): the labels, raw replies and re-asks stay."""
    if isinstance(value, dict):
        return {k: _unpaid(v) for k, v in value.items() if not k.endswith("usage") and k != "tstamp"}
    if isinstance(value, list):
        return [_unpaid(v) for v in value]
    return value


def _verdicts(out: Path) -> dict[tuple[str, str, int], Any]:
    """Every judgment of the run (labels, raw replies, re-asks), keyed by model, question and sample."""
    found = {}
    for model in ("strong", "mixed"):
        path = out / "judgments" / "judge-good" / f"{model}.jsonl"
        for record in read_jsonl(path) if path.exists() else []:
            found[model, record["uid"], record["sample"]] = _unpaid(record)
    assert found
    return found


def _judge_cost(out: Path) -> tuple[float, dict[str, Any]]:
    rows = json.loads((out / "run.json").read_text())["ledger_total"]["rows"]
    judged = [row for row in rows if row["phase"] in ("judge", "reask") and row["model"] == "judge-good"]
    assert len(judged) >= 1
    return sum(row["cost_usd"] for row in judged), judged[0]


def test_batched_judging_gives_the_synchronous_judgments_at_half_price(
    tmp_path: Path, server: MockBatchServer, run_quiet: Any
) -> None:
    models = _models(tmp_path, server)
    common = {"models_file": models, "models": ["strong", "mixed"], "judges": ["judge-good"], "limit": LIMIT}
    batched = run_quiet(out=tmp_path / "batched", batching=FAST, cache_path=tmp_path / "cache-a", **common)
    assert batched.exit_code == 0
    assert server.stats.requests_by_model["judge-good"] == 0  # not one synchronous judge call
    assert server.batch_stats.batches["openai"] >= 1
    assert sum(server.batch_stats.lines.values()) == 2 * 2 * LIMIT  # two models, two games each
    synchronous = run_quiet(out=tmp_path / "sync", cache_path=tmp_path / "cache-b", **common)
    assert server.stats.requests_by_model["judge-good"] == 2 * 2 * LIMIT
    assert _verdicts(tmp_path / "batched") == _verdicts(tmp_path / "sync")
    assert batched.leaderboard == synchronous.leaderboard
    batch_cost, row = _judge_cost(tmp_path / "batched")
    sync_cost, _ = _judge_cost(tmp_path / "sync")
    assert row["batched"] == 2 * 2 * LIMIT and row["replies"] == 2 * 2 * LIMIT
    assert 0 < batch_cost <= 0.52 * sync_cost
    assert row["batch_sync_cost_usd"] == pytest.approx(sync_cost)
    # The batch's answers are in the request cache under the synchronous key: a synchronous run that
    # shares that cache sends no judge request at all.
    before = server.stats.requests_by_model["judge-good"]
    again = run_quiet(out=tmp_path / "sync-cached", cache_path=tmp_path / "cache-a", **common)
    assert again.exit_code == 0 and server.stats.requests_by_model["judge-good"] == before
    assert _verdicts(tmp_path / "sync-cached") == _verdicts(tmp_path / "sync")


@pytest.mark.parametrize("api_type", ["openai", "anthropic"])
def test_errored_and_expired_lines_are_retried_and_end_judged(
    tmp_path: Path, server: MockBatchServer, run_quiet: Any, api_type: str
) -> None:
    models = _models(tmp_path, server, {"api_type": api_type})
    server.line_faults = {"product description": ["error500", "expire"], "thank-you note": ["expire"]}
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-good"], "limit": LIMIT}
    result = run_quiet(out=tmp_path / "batched", batching=FAST, **common)
    assert result.exit_code == 0 and result.failures == 0
    assert server.stats.requests_by_model["judge-good"] == 0
    assert server.batch_stats.batches[api_type] >= 2  # the retries went in new batches
    assert max(server.batch_stats.lines.values()) >= 2
    judged = read_jsonl(tmp_path / "batched" / "judgments" / "judge-good" / "strong.jsonl")
    assert len(judged) == LIMIT and not any(record.get("invalid") for record in judged)


def test_a_model_that_cannot_be_batched_is_a_usage_error(
    tmp_path: Path, server: MockBatchServer, run_quiet: Any
) -> None:
    models = _models(tmp_path, server, {"api_type": "litellm"})
    with pytest.raises(JuristError, match="cannot be batched"):
        run_quiet(
            models_file=models, models=["strong"], judges=["judge-good"], out=tmp_path / "r", batching=FAST
        )


def test_kill_9_while_a_batch_runs_then_the_same_command_polls_it(
    tmp_path: Path, server: MockBatchServer
) -> None:
    server.hold = True  # every batch stays in progress until released
    _models(tmp_path, server)
    args = [
        sys.executable,
        "-m",
        "jurist",
        "run",
        "--models-file",
        "models.yaml",
        "--model",
        "strong",
        "--judge",
        "judge-good",
        "--limit",
        str(LIMIT),
        "--no-progress",
        "--no-check",
        "--batch",
        "judges",
        "--batch-poll",
        "0.05",
        "--batch-age",
        "0.1",
    ]
    journal = tmp_path / "runs" / "starter" / "batches.jsonl"
    process = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    submitted = 0
    while time.monotonic() < deadline and (submitted < 2 * LIMIT or server.batch_stats.polls < 3):
        time.sleep(0.05)
        lines = read_jsonl(journal) if journal.exists() else []
        submitted = sum(line["requests"] for line in lines if line["event"] == "submitted")
    os.kill(process.pid, signal.SIGKILL)
    process.wait(10)
    assert submitted == 2 * LIMIT, "every game was in a submitted batch before the kill"
    batches = server.batch_stats.batches["openai"]
    judgments = tmp_path / "runs" / "starter" / "judgments" / "judge-good" / "strong.jsonl"
    assert not judgments.exists() or not read_jsonl(judgments)  # killed while every batch was held
    server.release()
    result = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert server.batch_stats.batches["openai"] == batches  # polled, never submitted again
    assert max(server.batch_stats.lines.values()) == 1  # no request in two batches
    assert server.stats.requests_by_model["judge-good"] == 0
    assert len(read_jsonl(judgments)) == LIMIT
    _, row = _judge_cost(tmp_path / "runs" / "starter")
    assert row["replies"] == 2 * LIMIT and row["batched"] == 2 * LIMIT  # every game billed once
    assert "would have cost" in result.stderr and "polled again after a restart" in result.stderr
    events = [line["event"] for line in read_jsonl(journal)]
    assert events.count("ended") == events.count("submitted") and "status" in events


def test_dry_run_shows_what_would_be_batched_at_the_discount(tmp_path: Path, server: MockBatchServer) -> None:
    from jurist.run.dry import plan_run

    models = _models(tmp_path, server)
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-good"], "limit": LIMIT}
    plain, _ = plan_run(run_config(out=tmp_path / "r", check=False, **common))
    batched, notes = plan_run(run_config(out=tmp_path / "r", check=False, batching=FAST, **common))
    judge_plain = next(row for row in plain if row["phase"] == "judge")
    judge_batched = next(row for row in batched if row["phase"] == "judge")
    assert judge_batched["batched"] == judge_batched["requests"] == 2 * LIMIT
    assert judge_batched["cost_usd"] == pytest.approx(0.5 * judge_plain["cost_usd"])
    assert judge_batched["sync_cost_usd"] == pytest.approx(judge_plain["cost_usd"])
    assert not next(row for row in batched if row["phase"] == "generate").get("batched")
    assert any("would go through batch APIs" in note for note in notes)
    assert server.batch_stats.batches.total() == 0 and server.stats.requests == 0  # nothing sent


def test_batch_all_and_a_batch_true_model_on_anthropic(
    tmp_path: Path, server: MockBatchServer, run_quiet: Any
) -> None:
    """``--batch all`` batches the answers too; ``batch: true`` on an Anthropic model batches all of its
    requests through Message Batches; the judgments are those of a synchronous run."""
    models = write_models_file(
        tmp_path / "models.yaml",
        server.base_url,
        {"strong": {}, "judge-good": {"price": PRICE, "api_type": "anthropic", "batch": True}},
    )
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-good"], "limit": LIMIT}
    result = run_quiet(out=tmp_path / "all", batching=BatchChoice("all", FAST.settings), **common)
    assert result.exit_code == 0
    assert server.stats.requests == 0  # no synchronous request at all: answers and games in batches
    assert server.batch_stats.batches["openai"] >= 1 and server.batch_stats.batches["anthropic"] >= 1
    sync = run_quiet(
        out=tmp_path / "sync", cache=False, **{**common, "models_file": _models(tmp_path, server)}
    )
    assert _verdicts(tmp_path / "all") == _verdicts(tmp_path / "sync")
    assert result.leaderboard == sync.leaderboard


def test_anthropic_models_answer_synchronously_through_the_messages_api(
    tmp_path: Path, server: MockBatchServer, run_quiet: Any
) -> None:
    """``model: anthropic/NAME``: the native Messages API, read by the same verdict readers."""
    models = write_models_file(
        tmp_path / "models.yaml",
        server.base_url,
        {"strong": {}, "judge-good": {"model": "anthropic/judge-good"}},
    )
    data = yaml.safe_load(models.read_text())
    del data["judge-good"]["api_type"]  # the prefix alone says it
    models.write_text(yaml.safe_dump(data))
    common = {"models": ["strong"], "judges": ["judge-good"], "limit": LIMIT, "cache": False}
    native = run_quiet(models_file=models, out=tmp_path / "native", **common)
    assert native.exit_code == 0 and server.stats.requests_by_model["judge-good"] == 2 * LIMIT
    assert server.batch_stats.messages == 2 * LIMIT  # through POST /v1/messages, not chat completions
    wire = run_quiet(models_file=_models(tmp_path, server), out=tmp_path / "openai", **common)
    assert _verdicts(tmp_path / "native") == _verdicts(tmp_path / "openai")
    assert native.leaderboard == wire.leaderboard


def test_a_batched_models_large_pool_starts_workers_only_as_jobs_arrive() -> None:
    import asyncio

    from jurist.run.judge import JobQueue

    async def main() -> list[int]:
        queue, done = JobQueue(), []

        async def job(i: int) -> None:
            done.append(i)

        running = asyncio.ensure_future(queue.run(200_000))
        await asyncio.sleep(0)
        queue.put((job(i) for i in range(3)), 3)
        await asyncio.sleep(0.01)
        assert len(queue._workers) <= 4  # not 200,000 idle workers
        queue.put((job(i) for i in range(3, 50)), 47)
        queue.close()
        await running
        return done

    assert sorted(asyncio.run(main())) == list(range(50))


def test_rubric_items_and_their_reasks_through_batches_score_as_synchronously(
    tmp_path: Path, server: MockBatchServer, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HealthBench's grader: one request per rubric item, unreadable items re-asked; through batches the
    items, the re-asks and the score are those of a synchronous run."""
    from conftest import SHARED_DATA
    from test_rubric_judge import hb_reply, install_reply, write_hb_prompt

    install_reply(server, lambda m: hb_reply(m, garbage=True))
    monkeypatch.setenv("JURIST_DATA_DIR", str(SHARED_DATA))
    models = write_models_file(tmp_path / "m.yaml", server.base_url, {"m": {}, "g": {"price": PRICE}})
    common = {
        "bench": "healthbench", "limit": 3, "models_file": models, "models": ["m"], "judges": ["g"],
        "judge_prompt": write_hb_prompt(tmp_path / "grader.py"), "cache": False,
    }  # fmt: skip
    batched = run_quiet(out=tmp_path / "batched", batching=FAST, **common)
    assert batched.exit_code == 0 and server.stats.requests_by_model["g"] == 0
    assert server.batch_stats.batches["openai"] >= 2  # the items, then a batch of re-asks
    synchronous = run_quiet(out=tmp_path / "sync", **common)
    assert batched.leaderboard == synchronous.leaderboard

    def items(out: Path) -> list[Any]:
        return _unpaid(sorted(read_jsonl(out / "judgments" / "g" / "m.jsonl"), key=lambda r: r["uid"]))

    assert items(tmp_path / "batched") == items(tmp_path / "sync")


def test_the_logprob_game_through_batches_reads_as_synchronously(
    tmp_path: Path, server: MockBatchServer, run_quiet: Any
) -> None:
    """AlpacaEval's one game read from the verdict's logprobs: the batch line carries ``logprobs`` and its
    answer brings them back, so the preference read is the synchronous one."""
    models = _models(tmp_path, server)
    common = {
        "models_file": models, "models": ["strong", "mixed"], "judges": ["judge-good"], "limit": LIMIT,
        "judge_protocol": "logprob", "cache": False,
    }  # fmt: skip
    batched = run_quiet(out=tmp_path / "batched", batching=FAST, **common)
    assert batched.exit_code == 0 and server.stats.requests_by_model["judge-good"] == 0
    synchronous = run_quiet(out=tmp_path / "sync", **common)
    assert _verdicts(tmp_path / "batched") == _verdicts(tmp_path / "sync")
    assert batched.leaderboard == synchronous.leaderboard
    assert all(game.get("verdict_source") == "logprobs" for game in _games(tmp_path / "batched"))


def _games(out: Path) -> list[dict[str, Any]]:
    return [game for record in _verdicts(out).values() for game in record["games"]]


def test_past_the_deadline_a_running_batch_is_cancelled_and_its_requests_sent_synchronously(
    tmp_path: Path, server: MockBatchServer, run_quiet: Any
) -> None:
    server.hold = True  # the batch never ends on its own
    models = _models(tmp_path, server)
    late = BatchChoice("judges", BatchSettings(poll_s=0.02, max_age_s=0.05, deadline_s=0.3))
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-good"], "limit": LIMIT}
    result = run_quiet(out=tmp_path / "late", batching=late, **common)
    assert result.exit_code == 0 and result.failures == 0
    assert server.stats.requests_by_model["judge-good"] == 2 * LIMIT  # every game, synchronously
    assert len(read_jsonl(tmp_path / "late" / "judgments" / "judge-good" / "strong.jsonl")) == LIMIT
    _, row = _judge_cost(tmp_path / "late")
    assert row["batched"] == 0 and row["replies"] == 2 * LIMIT  # billed once, at the synchronous rate
    ended = [line for line in read_jsonl(tmp_path / "late" / "batches.jsonl") if line["event"] == "ended"]
    assert ended and {line["status"] for line in ended} == {"cancelled"}


@pytest.mark.parametrize("api_type", ["openai", "anthropic"])
def test_the_last_batches_are_cut_once_the_stage_is_fed_not_at_their_age(
    tmp_path: Path, server: MockBatchServer, run_quiet: Any, api_type: str
) -> None:
    """With ``--batch-age 60`` the games (and the retries of an expired line) still go out as soon as the
    judge stage has started its last job: every batch is created well before its oldest line's age."""
    age = 60.0
    models = _models(tmp_path, server, {"api_type": api_type})
    server.line_faults = {"thank-you note": ["expire"]}  # its games are asked again in a later batch
    slow = BatchChoice("judges", BatchSettings(poll_s=0.02, max_age_s=age))
    common = {"models_file": models, "models": ["strong"], "judges": ["judge-good"], "limit": LIMIT}
    started = time.monotonic()
    result = run_quiet(out=tmp_path / "batched", batching=slow, **common)
    assert result.exit_code == 0 and result.failures == 0
    assert server.batch_stats.batches[api_type] >= 2  # the games, then the expired line's retry
    assert all(created - started < age for created in server.batch_stats.created)
    assert len(read_jsonl(tmp_path / "batched" / "judgments" / "judge-good" / "strong.jsonl")) == LIMIT
