"""``api_type: openai-responses``: the engine sends OpenAI's Responses API shape and reads its reply back,
against a local aiohttp mock of ``POST /v1/responses`` (limits, retries and the cache as for any model)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from conftest import FAST_RETRY
from jurist.config import Endpoint, ModelSpec
from jurist.engine.cache.store import open_cache
from jurist.engine.client import Completion, Engine, RequestFailed
from jurist.engine.wire.responses import chat_reply, responses_params


class ResponsesMock:
    """``POST /v1/responses`` as OpenAI answers it (an output message with ``output_text``, a reasoning
    item, usage with reasoning tokens), ``GET /v1/models``; scripted statuses first, bodies kept."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self.reply: Callable[[dict[str, Any]], str] | None = None  # the answer text (default: an echo)
        self.loop = asyncio.new_event_loop()
        self.runner: web.AppRunner | None = None
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def responses(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies.append(body)
        if self.statuses:
            return web.json_response({"error": {"message": "busy"}}, status=self.statuses.pop(0))
        text = self.reply(body) if self.reply is not None else f"graded: {body['input'][-1]['content'][:20]}"
        return web.json_response(
            {
                "id": "resp_1",
                "object": "response",
                "status": "completed",
                "model": body["model"],
                "output": [
                    {"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking"}]},
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text}],
                    },
                ],
                "usage": {
                    "input_tokens": 30,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 12,
                    "output_tokens_details": {"reasoning_tokens": 5},
                    "total_tokens": 42,
                },
            }
        )

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"object": "list", "data": [{"id": "gpt-5.4-2026-03-05", "object": "model"}]}
        )

    def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/responses", self.responses)
        app.router.add_get("/v1/models", self.models)
        self.runner = web.AppRunner(app)
        self.loop.run_until_complete(self.runner.setup())
        self.loop.run_until_complete(web.TCPSite(self.runner, "127.0.0.1", self.port).start())
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def stop(self) -> None:
        assert self.runner is not None
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)


@pytest.fixture
def server() -> Iterator[ResponsesMock]:
    mock = ResponsesMock()
    mock.start()
    yield mock
    mock.stop()


def grader(url: str, **extra: Any) -> ModelSpec:
    return ModelSpec(
        alias="g",
        model="gpt-5.4-2026-03-05",
        api_type="openai-responses",
        endpoints=[Endpoint(api_base=url, api_key="sk-test-responses-000")],
        timeout=5.0,
        **extra,
    )


def ask(engine: Engine, prompts: list[str], **params: Any) -> list[Completion | RequestFailed]:
    async def main() -> list[Completion | RequestFailed]:
        out: list[Completion | RequestFailed] = []
        try:
            for prompt in prompts:
                try:
                    out.append(
                        await engine.client("g").complete([{"role": "user", "content": prompt}], **params)
                    )
                except RequestFailed as exc:
                    out.append(exc)
        finally:
            await engine.aclose()
        return out

    return asyncio.run(main())


def test_the_request_has_the_responses_shape_and_the_reply_reads_back(server: ResponsesMock) -> None:
    engine = Engine(
        {"g": grader(server.base_url, reasoning_effort="low")}, max_concurrency=2, policy=FAST_RETRY
    )
    (reply,) = ask(engine, ["Is the rubric item met?"])
    assert isinstance(reply, Completion)
    assert reply.text == "graded: Is the rubric item m" and reply.reasoning == "thinking"
    assert (reply.prompt_tokens, reply.completion_tokens, reply.reasoning_tokens) == (30, 12, 5)
    (body,) = server.bodies
    # simple-evals' GPT-5.4 grader: the conversation as input, reasoning effort, nothing else
    assert body == {
        "model": "gpt-5.4-2026-03-05",
        "input": [{"role": "user", "content": "Is the rubric item met?"}],
        "reasoning": {"effort": "low"},
    }


def test_set_fields_are_sent_renamed_and_transient_errors_retried(server: ResponsesMock) -> None:
    server.statuses = [503, 429]
    spec = grader(server.base_url, max_tokens=256, temperature=0.2)
    (reply,) = ask(Engine({"g": spec}, max_concurrency=2, policy=FAST_RETRY), ["hello"])
    assert isinstance(reply, Completion) and reply.attempts == 3
    assert server.bodies[-1]["max_output_tokens"] == 256 and server.bodies[-1]["temperature"] == 0.2
    assert "max_tokens" not in server.bodies[-1] and "messages" not in server.bodies[-1]


def test_a_client_error_fails_at_once(server: ResponsesMock) -> None:
    server.statuses = [400]
    (failed,) = ask(Engine({"g": grader(server.base_url)}, max_concurrency=1, policy=FAST_RETRY), ["x"])
    assert isinstance(failed, RequestFailed) and failed.status == 400 and len(server.bodies) == 1


def test_answers_come_from_the_request_cache_the_second_time(server: ResponsesMock, tmp_path: Path) -> None:
    for _ in range(2):
        engine = Engine(
            {"g": grader(server.base_url)}, max_concurrency=1, policy=FAST_RETRY, cache=open_cache(tmp_path)
        )
        (reply,) = ask(engine, ["same question"])
        assert isinstance(reply, Completion)
    assert len(server.bodies) == 1 and reply.cached


def test_the_shapes_on_their_own() -> None:
    chat = {"model": "m", "messages": [{"role": "user", "content": "q"}], "n": 2, "max_tokens": 9, "top_p": 1}
    assert responses_params(chat) == {
        "model": "m",
        "input": chat["messages"],
        "max_output_tokens": 9,
        "top_p": 1,
    }
    cut = chat_reply({"status": "incomplete", "output": []})
    assert cut["choices"][0] == {
        "index": 0,
        "message": {"role": "assistant", "content": None},
        "finish_reason": "length",
    }
    assert json.dumps(cut)  # a chat.completion the parser reads (content null: unreadable, retried)
