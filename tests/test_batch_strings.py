"""Model strings and batches: ``anthropic/NAME`` on the command line, ``-M batch=true`` on the strings
that have a batch API (every request of every string batched) and refused on the others, and
``--batch judges`` for batching the judges alone; the runs go from outside against the batch mock."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurist.config import ModelStringOptions, models_from_strings, parse_settings
from jurist.errors import JuristError
from jurist.store.jsonl import read_jsonl
from mock_batch import MockBatchServer

LIMIT = 3


def one(name: str, env: dict[str, str] | None = None, **options: Any) -> Any:
    return models_from_strings([name], ModelStringOptions(**options), env=env or {})[name]


def test_an_anthropic_string_is_the_native_messages_api() -> None:
    spec = one("anthropic/claude-sonnet-4-5", env={"ANTHROPIC_API_KEY": "ak", "OPENAI_API_KEY": "ok"})
    (endpoint,) = spec.endpoints
    assert (spec.api_type, spec.model) == ("anthropic", "claude-sonnet-4-5")
    assert endpoint.api_base == "https://api.anthropic.com/v1" and endpoint.api_key == "ak"
    assert not spec.batch


@pytest.mark.parametrize("name", ["openai/gpt-4.1", "anthropic/claude-sonnet-4-5"])
def test_batch_true_batches_a_string_that_has_a_batch_api(name: str) -> None:
    assert one(name, settings=parse_settings(["batch=true"])).batch
    assert not one(name, settings=parse_settings(["batch=false"])).batch


@pytest.mark.parametrize(
    "name", ["vllm/m", "litellm/anthropic/claude-sonnet-4", "hf/Qwen/Qwen2.5-0.5B-Instruct"]
)
def test_batch_true_on_a_string_with_no_batch_api_is_refused(name: str) -> None:
    with pytest.raises(JuristError, match="no batch API.*--batch judges"):
        one(name, settings=parse_settings(["batch=true"]))


@pytest.fixture
def server() -> Iterator[MockBatchServer]:
    mock = MockBatchServer(validate_s=0.01, run_s=0.05, finalize_s=0.01)
    mock.start()
    yield mock
    mock.stop()


def _run(tmp: Path, server: MockBatchServer, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [
        sys.executable, "-m", "jurist", "run", "--model", "openai/strong", "--judge", "openai/judge-good",
        "--base-url", server.base_url, "--api-key", "k", "--limit", str(LIMIT), "--no-progress",
        "--no-check", "--batch-poll", "0.05", "--batch-age", "0.1", "--out", str(tmp / "run"), *extra,
    ]  # fmt: skip
    return subprocess.run(args, cwd=tmp, capture_output=True, text=True, timeout=300)


def test_batch_true_on_the_command_line_batches_every_string(tmp_path: Path, server: MockBatchServer) -> None:
    result = _run(tmp_path, server, "-M", "batch=true")
    assert result.returncode == 0, result.stderr
    assert server.stats.requests == 0  # answers and games alike went through batches
    assert server.batch_stats.batches["openai"] >= 2 and sum(server.batch_stats.lines.values()) == 3 * LIMIT
    assert (
        len(read_jsonl(tmp_path / "run" / "judgments" / "openai%2Fjudge-good" / "openai%2Fstrong.jsonl"))
        == LIMIT
    )


def test_batch_judges_batches_the_judge_string_alone(tmp_path: Path, server: MockBatchServer) -> None:
    result = _run(tmp_path, server, "--batch", "judges")
    assert result.returncode == 0, result.stderr
    assert (
        server.stats.requests_by_model["strong"] == LIMIT
        and server.stats.requests_by_model["judge-good"] == 0
    )
    assert sum(server.batch_stats.lines.values()) == 2 * LIMIT  # the two games of each answer
