"""A good answer in a reply whose usage or metadata has the wrong type or shape: the answer is kept, the bad
field ignored with a note in the ledger (usage then counted by jurist, the row marked estimated), never a
crash (mock server, ``patch:`` replies)."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_RETRY
from jurist.config import Endpoint, ModelSpec
from jurist.engine.client import Engine
from jurist.store.jsonl import read_jsonl
from jurist.tokens import MAX_REPLY_TOKENS
from test_ledger import priced_models, run_json


def patch(fields: dict[str, Any]) -> str:
    return "patch:" + json.dumps(fields)


def ask(server: Any) -> tuple[Any, dict[str, Any]]:
    """One request to model ``m``; the completion and its ledger row."""
    spec = ModelSpec(alias="m", model="m", endpoints=[Endpoint(api_base=server.base_url)], timeout=2.0)
    engine = Engine({"m": spec}, max_concurrency=2, policy=FAST_RETRY)

    async def main() -> Any:
        try:
            return await engine.client("m").complete([{"role": "user", "content": "hello"}], cache="off")
        finally:
            await engine.aclose()

    completion = asyncio.run(main())
    [row] = [row for row in engine.ledger.summary()["rows"] if row["model"] == "m"]
    return completion, row


BAD_USAGE = {
    "a string and a null": {"prompt_tokens": "x", "completion_tokens": None},
    "a list": [3, 4],
    "negative": {"prompt_tokens": -5, "completion_tokens": 3},
    "a huge float": {"prompt_tokens": 1e300, "completion_tokens": 3},
    "infinite": {"prompt_tokens": 3, "completion_tokens": float("inf")},
    "fractional": {"prompt_tokens": 3.5, "completion_tokens": 3},
    "too many": {"prompt_tokens": MAX_REPLY_TOKENS + 1, "completion_tokens": 3},
    "a bool": {"prompt_tokens": True, "completion_tokens": 3},
}


@pytest.mark.parametrize("usage", BAD_USAGE.values(), ids=BAD_USAGE.keys())
def test_a_malformed_usage_keeps_the_answer_and_estimates_the_tokens(mock_server: Any, usage: Any) -> None:
    server = mock_server(faults={"hello": [patch({"usage": usage})]})
    completion, row = ask(server)
    assert completion.text == "[m] hello" and completion.attempts == 1  # an answer, not a retry
    assert completion.prompt_tokens is None or completion.completion_tokens is None
    assert row["replies"] == 1 and row["estimated"] == 1 and row["estimated_by"]
    assert row["malformed"] == 1 and row["malformed_fields"].startswith("usage")
    assert row["prompt_tokens"] > 0 and row["completion_tokens"] > 0  # counted by jurist instead
    assert isinstance(row["prompt_tokens"], int) and isinstance(row["completion_tokens"], int)


BAD_METADATA = {
    "finish_reason": {"choice": {"finish_reason": 7}},
    "logprobs": {"choice": {"logprobs": "zz"}},
    "logprobs.content": {"choice": {"logprobs": {"content": 5}}},
    "logprobs.top_logprobs": {
        "choice": {"logprobs": {"content": [{"token": "1", "logprob": "high", "top_logprobs": []}]}}
    },
    "legacy logprobs": {"choice": {"logprobs": {"tokens": ["1"], "top_logprobs": [{"1": "x"}]}}},
    "message.reasoning": {
        "choice": {"message": {"role": "assistant", "content": "[m] hello", "reasoning_content": [1]}}
    },
    "reasoning_tokens": {
        "usage": {
            "prompt_tokens": 3,
            "completion_tokens": 2,
            "completion_tokens_details": {"reasoning_tokens": 9},
        }
    },
    "cached_tokens": {"usage": {"prompt_tokens": 3, "completion_tokens": 2, "prompt_tokens_details": "all"}},
}


@pytest.mark.parametrize("fields", BAD_METADATA.values(), ids=BAD_METADATA.keys())
def test_malformed_metadata_is_ignored_with_a_note(
    mock_server: Any, fields: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    server = mock_server(faults={"hello": [patch(fields)]})
    with caplog.at_level(logging.WARNING):
        completion, row = ask(server)
    assert completion.text == "[m] hello" and completion.attempts == 1
    assert completion.finish_reason in (None, "stop") and completion.logprobs is None
    assert completion.reasoning is None and completion.notes
    assert row["malformed"] == 1 and row["malformed_fields"]
    assert "the field is ignored and the answer kept" in caplog.text


def test_well_formed_metadata_has_no_note(mock_server: Any) -> None:
    logprobs = {"content": [{"token": "1", "logprob": -0.1, "top_logprobs": [{"token": "2", "logprob": -3}]}]}
    usage = {"prompt_tokens": 3.0, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 1}}
    server = mock_server(faults={"hello": [patch({"usage": usage, "choice": {"logprobs": logprobs}})]})
    completion, row = ask(server)
    assert completion.notes == [] and completion.logprobs == logprobs
    assert (completion.prompt_tokens, completion.cached_tokens) == (3, 1)  # a whole float is a count
    assert row["malformed"] == 0 and "malformed_fields" not in row and row["estimated"] == 0


def test_a_run_keeps_the_answers_of_a_model_whose_usage_is_broken(
    tmp_path: Path, mock_server: Any, run_quiet: Any
) -> None:
    """The reliability probe's crash: a 200 with ``prompt_tokens: "x"`` killed the run and lost the model's
    answers. Now every answer is saved, the run finishes, and the ledger says what it estimated."""
    bad = patch({"usage": {"prompt_tokens": "x", "completion_tokens": None}})
    server = mock_server(faults={"": [bad, bad, patch({"usage": [1]})]})  # the first three requests
    models = priced_models(tmp_path / "m.yaml", server.base_url, ["strong", "judge-good"])
    out = tmp_path / "run"
    result = run_quiet(
        models_file=models, out=out, models=["strong"], judges=["judge-good"], limit=4, cache=False
    )
    assert result.exit_code == 0 and result.failures == 0
    assert len(read_jsonl(out / "answers" / "strong.jsonl")) == 4
    total = run_json(out)["ledger"]["total"]
    assert total["malformed"] == 3 and total["estimated"] == 3 and total["cost_usd"] > 0
    logged = read_jsonl(out / "usage.jsonl")
    assert sum(record.get("malformed", 0) for record in logged) == 3
