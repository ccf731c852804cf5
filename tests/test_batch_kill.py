"""kill -9 over real batch runs (``jurist run --batch judges`` against the batch mock): at random moments,
then the same command to the end. No line is billed twice, the ledger equals the mock's own bill, and a
batch whose creation was in flight at the kill (both providers) is found again, not submitted twice."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import write_models_file
from mock_batch import MockBatchServer

PRICE = {"input": 2.0, "output": 8.0}
LIMIT = 6


@pytest.fixture
def server() -> Iterator[MockBatchServer]:
    mock = MockBatchServer(validate_s=0.05, run_s=0.3, finalize_s=0.05)
    mock.start()
    yield mock
    mock.stop()


def _command(tmp: Path, server: MockBatchServer, api_type: str) -> list[str]:
    judge = {"price": PRICE, "api_type": api_type}
    write_models_file(tmp / "models.yaml", server.base_url, {"strong": {}, "judge-good": judge})
    return [
        sys.executable, "-m", "jurist", "run", "--models-file", "models.yaml", "--model", "strong",
        "--judge", "judge-good", "--limit", str(LIMIT), "--no-progress", "--no-check", "--batch", "judges",
        "--batch-poll", "0.05", "--batch-age", "0.2", "--batch-size", "4",
    ]  # fmt: skip


def _kill_after(args: list[str], tmp: Path, ready: object, delay: float) -> None:
    """Start the command, wait until ``ready()`` (bounded), then ``delay`` s more, then kill -9."""
    process = subprocess.Popen(
        args, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 60
        while not ready() and process.poll() is None and time.monotonic() < deadline:  # type: ignore[operator]
            time.sleep(0.01)
        time.sleep(delay)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait(10)


def _batch_cost(run_dir: Path) -> float:
    rows = json.loads((run_dir / "run.json").read_text())["ledger_total"]["rows"]
    return sum(float(row.get("batch_cost_usd") or 0.0) for row in rows)


def test_random_kills_bill_no_line_twice_and_the_ledger_is_the_bill(
    tmp_path: Path, server: MockBatchServer
) -> None:
    args = _command(tmp_path, server, "openai")
    journal = tmp_path / "runs" / "starter" / "batches.jsonl"
    draw = random.Random(43)
    for _ in range(4):
        _kill_after(args, tmp_path, journal.exists, draw.uniform(0.0, 1.2))
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert max(server.batch_stats.lines.values()) == 1  # no request in two batches
    assert server.stats.requests_by_model["judge-good"] == 0
    assert _batch_cost(tmp_path / "runs" / "starter") == pytest.approx(server.bill_usd(2.0, 8.0))


@pytest.mark.parametrize("api_type", ["openai", "anthropic"])
def test_a_kill_while_a_creation_is_in_flight_finds_the_batch_again(
    tmp_path: Path, server: MockBatchServer, api_type: str
) -> None:
    """The journal's ``submitting`` line is on disk before the creation is sent; the creation's reply
    comes late (``create_delay_s``) and the run is killed after the batch exists but before the reply:
    the next run finds it (OpenAI by its metadata and input file, Anthropic by the listing), polls it,
    and submits none of its lines again."""
    args = _command(tmp_path, server, api_type)
    server.create_delay_s = 2.0
    _kill_after(args, tmp_path, lambda: server.batch_stats.batches[api_type] >= 1, 0.2)
    created = server.batch_stats.batches[api_type]
    assert created >= 1
    server.create_delay_s = 0.0
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert max(server.batch_stats.lines.values()) == 1, "a line was submitted twice"
    assert _batch_cost(tmp_path / "runs" / "starter") == pytest.approx(server.bill_usd(2.0, 8.0))
