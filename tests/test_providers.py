"""LiteLLM as an optional provider, against a stand-in ``litellm`` module (the real one is ~300 MB).

The stand-in mimics the parts jurist uses: ``acompletion(**kwargs)`` returning a pydantic-like response
with ``model_dump()``, and litellm's exception classes, which carry ``status_code`` as litellm's do.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import write_models_file
from jurist.config import Endpoint, ModelSpec
from jurist.engine.client import Engine, RequestFailed
from jurist.engine.pacing.retry import RetryPolicy
from jurist.errors import JuristError
from jurist.store.jsonl import read_jsonl

QUICK = RetryPolicy(max_attempts=6, base_delay=0.001, max_delay=0.005)


class _LiteLLMError(Exception):
    status_code: int | None = None

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        if status_code is not None:
            self.status_code = status_code


class _Response:
    """Like litellm's ModelResponse: attributes plus ``model_dump()``."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def model_dump(self) -> dict[str, Any]:
        return self._data


def make_litellm(script: list[Any] | None = None, *, delay: float = 0.0) -> types.ModuleType:
    """A stand-in litellm: each call takes the next scripted outcome (an exception to raise, or text)."""
    module = types.ModuleType("litellm")
    for name, status in [
        ("RateLimitError", 429),
        ("APIConnectionError", 500),
        ("Timeout", 408),
        ("BadRequestError", 400),
        ("AuthenticationError", 401),
        ("InternalServerError", 500),
        ("ServiceUnavailableError", 503),
    ]:
        setattr(module, name, type(name, (_LiteLLMError,), {"status_code": status}))
    calls: list[dict[str, Any]] = []
    queue = list(script or [])
    state = {"in_flight": 0, "peak": 0}

    async def acompletion(**kwargs: Any) -> _Response:
        calls.append(kwargs)
        state["in_flight"] += 1
        state["peak"] = max(state["peak"], state["in_flight"])
        try:
            if delay:
                await asyncio.sleep(delay)
            outcome = queue.pop(0) if queue else "ok"
            if isinstance(outcome, BaseException):
                raise outcome
            content = f"{outcome} from {kwargs['model']}"
            return _Response(
                {
                    "id": "chatcmpl-fake",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
                }
            )
        finally:
            state["in_flight"] -= 1

    module.acompletion = acompletion  # type: ignore[attr-defined]
    module.calls = calls  # type: ignore[attr-defined]
    module.state = state  # type: ignore[attr-defined]
    return module


@pytest.fixture
def fake_litellm(monkeypatch: pytest.MonkeyPatch) -> Callable[..., types.ModuleType]:
    def install(script: list[Any] | None = None, **kwargs: Any) -> types.ModuleType:
        module = make_litellm(script, **kwargs)
        monkeypatch.setitem(sys.modules, "litellm", module)
        return module

    return install


def litellm_spec(**extra: Any) -> ModelSpec:
    fields: dict[str, Any] = {
        "alias": "claude",
        "model": "anthropic/claude-x",
        "api_type": "litellm",
        "max_tokens": 32,
        "temperature": 0.0,
        "timeout": 2.0,
        "top_p": 0.5,
    }
    fields.update(extra)
    return ModelSpec(**fields)


def ask(spec: ModelSpec, n: int = 1, policy: RetryPolicy = QUICK) -> tuple[Engine, list[Any]]:
    engine = Engine({spec.alias: spec}, max_concurrency=16, policy=policy)

    async def main() -> list[Any]:
        try:
            client = engine.client(spec.alias)
            return list(
                await asyncio.gather(
                    *(client.complete([{"role": "user", "content": f"q{i}"}]) for i in range(n))
                )
            )
        finally:
            await engine.aclose()

    return engine, asyncio.run(main())


def test_litellm_spec_dispatches_with_the_request_fields(fake_litellm: Any) -> None:
    litellm = fake_litellm()
    spec = litellm_spec(endpoints=[Endpoint(api_base="http://gw:4000", api_key="sk-test")])
    engine, (completion,) = ask(spec)
    assert completion.text == "ok from anthropic/claude-x"
    assert (completion.prompt_tokens, completion.completion_tokens, completion.attempts) == (11, 7, 1)
    (call,) = litellm.calls
    assert call["messages"] == [{"role": "user", "content": "q0"}]
    assert (call["max_tokens"], call["temperature"], call["top_p"]) == (32, 0.0, 0.5)
    assert (call["api_base"], call["api_key"], call["num_retries"], call["timeout"]) == (
        "http://gw:4000",
        "sk-test",
        0,
        2.0,
    )
    assert engine.stats.per_model["claude"] == {
        "requests": 1,
        "cache_hits": 0,
        "prompt_tokens": 11,
        "completion_tokens": 7,
    }


def test_without_an_api_base_litellm_routes_by_model(fake_litellm: Any) -> None:
    litellm = fake_litellm()
    ask(litellm_spec())
    assert "api_base" not in litellm.calls[0] and "api_key" not in litellm.calls[0]


def test_transient_litellm_errors_are_retried(fake_litellm: Any) -> None:
    module = make_litellm()  # only for its exception classes
    script = [
        module.RateLimitError("slow down"),
        module.APIConnectionError("connection reset"),
        module.Timeout("took too long"),
        module.ServiceUnavailableError("overloaded"),
        module.InternalServerError("oops", status_code=502),
    ]
    litellm = fake_litellm(script)
    engine, (completion,) = ask(litellm_spec())
    assert completion.text.startswith("ok") and completion.attempts == 6
    assert len(litellm.calls) == 6 and engine.stats.retries == 5 and engine.stats.failures == 0


@pytest.mark.parametrize(("name", "status"), [("BadRequestError", 400), ("AuthenticationError", 401)])
def test_client_errors_fail_at_once(fake_litellm: Any, name: str, status: int) -> None:
    module = make_litellm()
    litellm = fake_litellm([getattr(module, name)("no such model: anthropic/claude-x")])
    with pytest.raises(RequestFailed) as info:
        ask(litellm_spec())
    assert len(litellm.calls) == 1
    assert (info.value.kind, info.value.status, info.value.attempts) == ("client_error", status, 1)
    assert f"HTTP {status}: {name}: no such model" in str(info.value)


def test_giving_up_keeps_the_kind(fake_litellm: Any) -> None:
    module = make_litellm()
    fake_litellm([module.RateLimitError("slow down") for _ in range(10)])
    with pytest.raises(RequestFailed) as info:
        ask(litellm_spec(), policy=RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.001))
    assert (info.value.kind, info.value.status, info.value.attempts) == ("rate_limited", 429, 2)


def test_an_error_without_status_is_not_retried(fake_litellm: Any) -> None:
    litellm = fake_litellm([ValueError("LLM Provider NOT provided")])
    with pytest.raises(RequestFailed, match="litellm: ValueError: LLM Provider NOT provided") as info:
        ask(litellm_spec())
    assert info.value.kind == "provider_error" and len(litellm.calls) == 1


def test_a_hanging_call_times_out_under_the_spec_timeout(fake_litellm: Any) -> None:
    fake_litellm(delay=1.0)
    with pytest.raises(RequestFailed) as info:
        ask(litellm_spec(timeout=0.05), policy=RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.001))
    assert info.value.kind == "timeout" and info.value.attempts == 2


def test_the_models_parallel_cap_applies(fake_litellm: Any) -> None:
    litellm = fake_litellm(delay=0.02)
    _, completions = ask(litellm_spec(parallel=3), n=12)
    assert len(completions) == 12 and litellm.state["peak"] == 3


def test_missing_litellm_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)  # makes ``import litellm`` fail
    engine = Engine({"claude": litellm_spec()}, max_concurrency=4)
    with pytest.raises(
        JuristError, match=r"api_type: litellm needs the litellm package.*pip install 'jurist\[litellm\]'"
    ):
        engine.client("claude")


def test_litellm_is_not_imported_unless_used() -> None:
    code = (
        "import sys, jurist.cli, jurist.run.pipeline, jurist.engine.client; "
        "print('jurist.engine.wire.litellm' in sys.modules, 'litellm' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["False", "False"], result.stderr


def test_a_litellm_judge_in_a_run(
    tmp_path: Path, mock_server: Any, run_quiet: Any, fake_litellm: Any
) -> None:
    """Candidates over HTTP, a LiteLLM judge: one engine, one usage summary."""
    litellm = fake_litellm(["[[B>>A]]", "[[A>>B]]"] * 2)
    server = mock_server()
    models = write_models_file(
        tmp_path / "m.yaml",
        server.base_url,
        {"strong": {}, "claude": {"api_type": "litellm", "model": "anthropic/x"}},
    )
    out = tmp_path / "run"
    result = run_quiet(models_file=models, models=["strong"], judges=["claude"], out=out, limit=2)
    assert result.exit_code == 0 and result.leaderboard
    assert len(litellm.calls) == 4 and litellm.calls[0]["api_base"] == server.base_url
    games = [g for r in read_jsonl(out / "judgments" / "claude" / "strong.jsonl") for g in r["games"]]
    assert [g["usage"]["completion_tokens"] for g in games] == [7] * 4
    usage = json.loads((out / "run.json").read_text())["usage"]["per_model"]["claude"]
    assert usage == {"requests": 4, "cache_hits": 0, "prompt_tokens": 44, "completion_tokens": 28}


FAKE_LITELLM_PACKAGE = """
import logging, os
COST_MAP_AT_IMPORT = os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP")
telemetry = True
suppress_debug_info = False
_handler = logging.StreamHandler()
_handler.setFormatter(logging.Formatter("LiteLLM-format: %(message)s"))
for _name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
    logging.getLogger(_name).addHandler(_handler)  # as litellm/_logging.py does (and they propagate)
"""


def test_litellm_is_imported_offline_and_warns_once(tmp_path: Path) -> None:
    """Before import: the bundled cost map (no GitHub fetch); after: no telemetry, one handler, not two."""
    (tmp_path / "litellm").mkdir()
    (tmp_path / "litellm" / "__init__.py").write_text(FAKE_LITELLM_PACKAGE)
    code = (
        "import logging; logging.basicConfig(format='jurist: %(message)s'); "
        "from jurist.engine.wire.litellm import import_litellm; m = import_litellm(); "
        "print(m.COST_MAP_AT_IMPORT, m.telemetry, m.suppress_debug_info); "
        "logging.getLogger('LiteLLM').warning('provider offline')"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert result.stdout.split() == ["True", "False", "True"], result.stderr
    assert result.stderr.count("provider offline") == 1, result.stderr
