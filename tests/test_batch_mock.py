"""The batch mock speaks the real protocols: the official ``openai`` and ``anthropic`` SDKs (test-only
dependencies) drive it end to end, so what jurist's batch wire is tested against is what the providers
take and give."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mock_batch import MockBatchServer

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

JUDGE_SYSTEM = "Please act as an impartial judge."
PROMPT = (
    "<|User Prompt|>\nq\n\n<|The Start of Assistant A's Answer|>\n[strong] x\n"
    "<|The End of Assistant A's Answer|>"
)


@pytest.fixture
def server() -> Iterator[MockBatchServer]:
    mock = MockBatchServer(line_faults={"expire-me": ["expire"], "refuse-me": ["error400"]})
    mock.start()
    yield mock
    mock.stop()


def _wait(poll: Any, done: set[str]) -> Any:
    for _ in range(200):  # bounded: the mock ends a batch in ~0.2 s
        obj = poll()
        if getattr(obj, "status", None) in done or getattr(obj, "processing_status", None) in done:
            return obj
        time.sleep(0.02)
    raise AssertionError("the batch did not end")


def test_openai_sdk_runs_a_batch_with_errors_and_expiry(server: MockBatchServer) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    lines = [
        {
            "custom_id": f"r{i}",
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": {"model": "judge", "messages": [{"role": "user", "content": text}]},
        }
        for i, text in enumerate(["hello", "expire-me", "refuse-me"])
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    uploaded = client.files.create(file=("in.jsonl", io.BytesIO(data)), purpose="batch")
    batch = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    assert batch.status == "validating"
    ended = _wait(lambda: client.batches.retrieve(batch.id), {"completed", "expired", "failed"})
    assert ended.status == "expired"  # a line expired: the batch says so, the rest is answered
    out = [json.loads(x) for x in client.files.content(ended.output_file_id).text.splitlines()]
    err = [json.loads(x) for x in client.files.content(ended.error_file_id).text.splitlines()]
    assert [row["custom_id"] for row in out] == ["r0"]
    assert out[0]["response"]["body"]["choices"][0]["message"]["content"] == "[judge] hello"
    by_id = {row["custom_id"]: row for row in err}
    assert by_id["r1"]["error"]["code"] == "batch_expired"
    assert by_id["r2"]["response"]["status_code"] == 400


def test_openai_sdk_sees_a_failed_batch_and_a_cancel(server: MockBatchServer) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    line = {
        "custom_id": "a",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": "m", "messages": [{"role": "user", "content": "x"}]},
    }
    uploaded = client.files.create(
        file=("in.jsonl", io.BytesIO((json.dumps(line) + "\n").encode())), purpose="batch"
    )
    server.fail_batches = 1
    failed = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    assert failed.status == "failed" and failed.errors is not None and failed.errors.data
    server.hold = True
    held = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    assert client.batches.cancel(held.id).status == "cancelling"
    assert _wait(lambda: client.batches.retrieve(held.id), {"cancelled"}).status == "cancelled"


def test_anthropic_sdk_runs_a_message_batch(server: MockBatchServer) -> None:
    client = anthropic.Anthropic(
        base_url=server.base_url.removesuffix("/v1"), api_key="sk-ant", max_retries=0
    )
    requests = [
        {
            "custom_id": f"r{i}",
            "params": {
                "model": "judge",
                "max_tokens": 64,
                "system": JUDGE_SYSTEM,
                "messages": [{"role": "user", "content": text}],
            },
        }
        for i, text in enumerate([PROMPT, "expire-me", "refuse-me"])
    ]
    batch = client.messages.batches.create(requests=requests)  # type: ignore[arg-type]
    assert batch.processing_status == "in_progress"
    _wait(lambda: client.messages.batches.retrieve(batch.id), {"ended"})
    results = {row.custom_id: row.result for row in client.messages.batches.results(batch.id)}
    assert results["r0"].type == "succeeded"
    assert "[[" in results["r0"].message.content[0].text  # the judge's verdict, as the chat mock gives it
    assert results["r1"].type == "expired"
    assert results["r2"].type == "errored" and results["r2"].error.error.type == "invalid_request_error"
    message = client.messages.create(
        model="judge", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
    )
    assert message.content[0].text == "[judge] hi"  # type: ignore[union-attr]
    with pytest.raises(anthropic.BadRequestError):
        client.messages.batches.create(requests=[{"custom_id": "bad id!", "params": requests[0]["params"]}])  # type: ignore[list-item]
