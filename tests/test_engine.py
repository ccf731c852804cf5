"""The engine against the mock server: retries per fault kind, fast 4xx failures, limits, secrets."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_RETRY, write_models_file
from jurist.config import Endpoint, ModelSpec
from jurist.engine.client import Engine, RequestFailed
from jurist.engine.pacing.retry import RetryPolicy, parse_retry_after
from jurist.store.jsonl import read_jsonl


def spec(alias: str, urls: list[str], **extra: Any) -> ModelSpec:
    return ModelSpec(
        alias=alias, model=alias, endpoints=[Endpoint(api_base=u) for u in urls], **{"timeout": 2.0, **extra}
    )


async def ask(engine: Engine, alias: str, prompt: str) -> Any:
    try:
        return await engine.client(alias).complete([{"role": "user", "content": prompt}])
    finally:
        await engine.aclose()


@pytest.mark.parametrize("fault", ["429", "500", "503", "timeout", "drop", "garbage", "truncated"])
def test_transient_faults_are_retried_until_success(mock_server: Any, fault: str) -> None:
    server = mock_server(faults={"hello": [fault, fault]})
    engine = Engine({"m": spec("m", [server.base_url], timeout=0.5)}, max_concurrency=4, policy=FAST_RETRY)
    completion = asyncio.run(ask(engine, "m", "hello"))
    assert completion.text == "[m] hello"
    assert completion.attempts == 3
    assert server.stats.requests == 3
    assert engine.stats.retries == 2 and engine.stats.failures == 0


def test_transient_faults_give_up_after_max_attempts(mock_server: Any) -> None:
    server = mock_server(faults={"hello": ["503"] * 10})
    engine = Engine({"m": spec("m", [server.base_url])}, max_concurrency=4, policy=FAST_RETRY)
    with pytest.raises(RequestFailed) as info:
        asyncio.run(ask(engine, "m", "hello"))
    assert info.value.kind == "server_error" and info.value.status == 503
    assert info.value.attempts == FAST_RETRY.max_attempts == server.stats.requests
    assert "server overloaded" in str(info.value)


@pytest.mark.parametrize("status", ["400", "401"])
def test_client_errors_fail_at_once_with_the_server_message(mock_server: Any, status: str) -> None:
    server = mock_server(faults={"hello": [status]})
    engine = Engine({"m": spec("m", [server.base_url])}, max_concurrency=4, policy=FAST_RETRY)
    with pytest.raises(RequestFailed) as info:
        asyncio.run(ask(engine, "m", "hello"))
    assert server.stats.requests == 1
    assert info.value.status == int(status) and f"bad request: {status} from mock" in str(info.value)


def test_retry_after_is_honoured(mock_server: Any) -> None:
    server = mock_server(faults={"hello": ["429"]}, retry_after="0.4")
    engine = Engine(
        {"m": spec("m", [server.base_url])},
        max_concurrency=4,
        policy=RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01),
    )
    asyncio.run(ask(engine, "m", "hello"))
    first, second = server.stats.arrivals["m"]
    assert second - first >= 0.4  # the backoff alone would have waited ~1 ms


def test_backoff_grows_exponentially_with_jitter() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=60.0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (8, 60.0)]:
        delays = [policy.delay(attempt) for _ in range(200)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 150  # jittered
    assert policy.delay(1, retry_after=30.0) == 30.0
    assert parse_retry_after("12") == 12.0 and parse_retry_after("0.5") == 0.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0 and parse_retry_after("soon") is None


def test_global_and_per_model_limits_hold(mock_server: Any) -> None:
    server = mock_server(delay=0.03)
    specs = {
        "a": spec("a", [server.base_url], parallel=8),
        "b": spec("b", [server.base_url], parallel=8),
        "c": spec("c", [server.base_url], parallel=2),
    }
    engine = Engine(specs, max_concurrency=5, policy=FAST_RETRY)

    async def main() -> None:
        try:
            await asyncio.gather(
                *[
                    engine.client(alias).complete([{"role": "user", "content": f"q{i}"}])
                    for alias in specs
                    for i in range(30)
                ]
            )
        finally:
            await engine.aclose()

    asyncio.run(main())
    assert server.stats.requests == 90
    assert server.stats.peak_in_flight == 5  # measured at the server: the cap holds and is used
    assert server.stats.peak_by_model["c"] == 2
    assert max(server.stats.peak_by_model["a"], server.stats.peak_by_model["b"]) <= 5


def test_endpoints_are_load_balanced(mock_server: Any) -> None:
    one, two = mock_server(delay=0.02), mock_server(delay=0.02)
    engine = Engine({"m": spec("m", [one.base_url, two.base_url], parallel=8)}, max_concurrency=8)

    async def main() -> None:
        try:
            await asyncio.gather(
                *[engine.client("m").complete([{"role": "user", "content": "x"}]) for _ in range(40)]
            )
        finally:
            await engine.aclose()

    asyncio.run(main())
    assert one.stats.requests + two.stats.requests == 40
    assert min(one.stats.requests, two.stats.requests) >= 15


def test_reasoning_is_kept_apart_from_the_answer() -> None:
    from jurist.engine.wire.transport import _parse_completion

    body = {
        "choices": [
            {
                "message": {"content": "<think>step 1</think>\n\nThe answer.", "role": "assistant"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 5},
    }
    parsed = _parse_completion(json.dumps(body).encode())
    assert (parsed.text, parsed.reasoning, parsed.prompt_tokens, parsed.completion_tokens) == (
        "The answer.",
        "step 1",
        3,
        5,
    )
    assert parsed.finish_reason == "stop" and not parsed.truncated_thought
    body["choices"][0]["message"] = {"content": "Plain.", "reasoning_content": "hidden"}
    parsed = _parse_completion(json.dumps(body).encode())
    assert (parsed.text, parsed.reasoning) == ("Plain.", "hidden")


SECRET = "sk-test-VERYSECRET-0123456789"
WRONG = "sk-test-WRONGKEY-9876543210"


def test_secrets_never_reach_artifacts(
    tmp_path: Path, mock_server: Any, run_quiet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mock_server(require_key=SECRET)
    monkeypatch.setenv("JURIST_TEST_KEY", SECRET)
    models = write_models_file(
        tmp_path / "models.yaml", server.base_url, {"strong": {}, "judge-good": {}, "badkey": {}}
    )
    data = (tmp_path / "models.yaml").read_text()
    data = data.replace("api_key: null", "api_key: ${JURIST_TEST_KEY}", 2).replace(
        "api_key: null", f"api_key: {WRONG}"
    )
    models.write_text(data)
    out = tmp_path / "run"
    result = run_quiet(
        models_file=models, models=["strong", "badkey"], judges=["judge-good"], out=out, limit=2
    )
    assert result.exit_code == 1  # badkey: 401, whose message echoes the wrong key
    assert server.stats.auth_headers == {f"Bearer {SECRET}", f"Bearer {WRONG}"}
    failures = read_jsonl(out / "failures.jsonl")
    assert len(failures) == 2 and all(f["status"] == 401 for f in failures)
    assert "Incorrect API key provided" in failures[0]["error"]
    for path in out.rglob("*"):  # every file the run wrote: bytes, not only text
        if path.is_file():
            data = path.read_bytes()
            assert SECRET.encode() not in data and WRONG.encode() not in data, path
    assert "***" in json.dumps(json.loads((out / "run.json").read_text())["model_specs"])


def test_a_failure_carries_the_retry_after_its_last_reply_asked_for(mock_server: Any) -> None:
    server = mock_server(faults={"hello": ["429"] * 10}, retry_after="7")
    policy = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.05, max_retry_after=0.01)
    engine = Engine({"m": spec("m", [server.base_url])}, max_concurrency=4, policy=policy)
    with pytest.raises(RequestFailed) as info:
        asyncio.run(ask(engine, "m", "hello"))
    assert info.value.kind == "rate_limited" and info.value.retry_after == 7.0
    assert "retry_after" not in info.value.record()  # the failure log's line is as it was


def test_a_client_sends_through_the_transport_it_is_given() -> None:
    """The seam the dry run uses: the cache, the ledger and the client's life of a request stay, only the
    sending is another's; no server is started and no connection opened."""
    from jurist.engine import Completion, EndpointClient, ModelClient, WireRequest
    from jurist.engine.pacing.limits import ConcurrencyLimits
    from jurist.money import Ledger

    class Echo:
        starts_servers = False

        def __init__(self) -> None:
            self.sent: list[WireRequest] = []

        def endpoints(self, spec: ModelSpec, budget: object) -> list[EndpointClient]:
            return [EndpointClient("http://127.0.0.1:9/v1", None, "served-name", 1)]

        async def send(self, client: ModelClient, request: WireRequest) -> Completion:
            self.sent.append(request)
            text = f"{client.served_name}: {request.messages[-1]['content']}"
            return Completion(text, None, 3, 2, 0.0, 1)

        def answered_from_cache(self, phase: str, alias: str, completion: Completion) -> None:
            raise AssertionError("no cache here")

    echo, ledger = Echo(), Ledger()
    client = ModelClient(
        spec("m", ["http://127.0.0.1:9/v1"]),
        ConcurrencyLimits(1),
        RetryPolicy(),
        ledger=ledger,
        transport=echo,
    )
    reply = asyncio.run(client.complete([{"role": "user", "content": "hi"}], phase="judge", max_tokens=5))
    assert reply.text == "served-name: hi"
    assert [(r.phase, r.params) for r in echo.sent] == [("judge", {"max_tokens": 5})]
    (row,) = ledger.summary()["rows"]
    assert (row["phase"], row["replies"], row["prompt_tokens"], row["completion_tokens"]) == (
        "judge",
        1,
        3,
        2,
    )
