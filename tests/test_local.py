"""``--local``: served models in this process (jurist.engine.local).

Fast tests: how a request body becomes llama-cpp-python's call and vLLM's SamplingParams, how a finished
vLLM output becomes an OpenAI body, and how failures become statuses the client retries or records.
Slow tests (the embedded GGUF): a whole ``jurist run --local``, its resume, and the same answers as a
server run at temperature 0.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_RETRY
from jurist.config import ModelSpec, ServeSpec
from jurist.engine.client import Engine, RequestFailed
from jurist.engine.local import LocalModels, load_model
from jurist.engine.local.embedded import EMBEDDED_ALIAS, EMBEDDED_N_CTX, embedded_model_spec
from jurist.engine.local.vllm import chat_body, engine_argv, sampling_params
from jurist.engine.wire.transport import _parse_completion
from jurist.errors import JuristError
from jurist.judging.protocols import VERDICT_SCHEMA, response_format
from jurist.judging.verdict import verdict_distribution
from jurist.store.jsonl import read_jsonl, rewrite_jsonl_atomic

MESSAGES = [{"role": "user", "content": "Say hello."}]


def served_spec(path: Path, kind: str = "llama.cpp", **serve: Any) -> ModelSpec:
    return ModelSpec(alias="tiny", model="tiny", serve=ServeSpec(kind=kind, model=str(path), **serve))  # type: ignore[arg-type]


# -- llama.cpp: the request as llama-cpp-python's server would pass it on ------------------------------


def test_a_body_gets_the_llama_cpp_servers_defaults_and_keeps_what_jurist_sets() -> None:
    pytest.importorskip("llama_cpp.server.types")
    from jurist.engine.local.llama_cpp import llama_call

    bare = llama_call({"model": "m", "messages": MESSAGES})
    # The server's defaults, not Llama.create_chat_completion's (temperature 0.2, repeat_penalty 1.0).
    assert (bare["temperature"], bare["top_p"], bare["top_k"], bare["repeat_penalty"]) == (0.8, 0.95, 40, 1.1)
    assert bare["max_tokens"] is None and bare["messages"] == MESSAGES
    fmt = response_format("llama_cpp")
    sent = llama_call(
        {
            "model": "m",
            "messages": MESSAGES,
            "max_tokens": 64,
            "temperature": 0.0,
            "top_p": 0.5,
            "seed": 7,
            "stop": ["\n\n"],
            "n": 3,
            "user": "someone",
            "logprobs": True,
            "top_logprobs": 5,
            "response_format": fmt,
        }
    )
    assert (sent["max_tokens"], sent["temperature"], sent["top_p"], sent["seed"]) == (64, 0.0, 0.5, 7)
    assert sent["stop"] == ["\n\n"] and sent["logprobs"] is True and sent["top_logprobs"] == 5
    assert sent["response_format"] == {"type": "json_object", "schema": VERDICT_SCHEMA}
    assert "n" not in sent and "user" not in sent  # the server answers one choice and drops the user


def test_a_body_the_llama_cpp_server_refuses_is_refused_with_its_status() -> None:
    pytest.importorskip("llama_cpp.server.types")
    from jurist.engine.local.base import LocalRequestError
    from jurist.engine.local.llama_cpp import llama_call

    with pytest.raises(LocalRequestError) as invalid:
        llama_call({"model": "m", "messages": MESSAGES, "temperature": "hot"})
    assert invalid.value.status == 422 and "temperature" in str(invalid.value)
    with pytest.raises(LocalRequestError) as streamed:
        llama_call({"model": "m", "messages": MESSAGES, "stream": True})
    assert streamed.value.status == 400


def test_the_serve_block_becomes_the_servers_own_settings(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp.server.settings")
    from jurist.engine.local.llama_cpp import model_settings

    gguf = tmp_path / "weights.gguf"
    gguf.write_bytes(b"GGUF")
    settings = model_settings(served_spec(gguf, n_ctx=2048, args=["--n_threads", "3", "--n_batch", "64"]))
    assert (settings.model, settings.n_ctx, settings.n_threads, settings.n_batch) == (str(gguf), 2048, 3, 64)
    assert settings.model_alias == "tiny" and settings.verbose is False
    with pytest.raises(JuristError, match="not a llama.cpp server option: --no-such-flag"):
        model_settings(served_spec(gguf, args=["--no-such-flag", "1"]))
    with pytest.raises(JuristError, match="n_threads"):
        model_settings(served_spec(gguf, args=["--n_threads", "many"]))
    with pytest.raises(JuristError, match="does not exist"):
        model_settings(served_spec(tmp_path / "missing.gguf"))


class ScriptedLlama:
    """Stands in for ``llama_cpp.Llama`` to test the error mapping: each call takes the next scripted
    outcome (an exception, or a reply built from the request); the real model is in the slow tests."""

    def __init__(self, outcomes: list[BaseException | None]) -> None:
        self.outcomes = outcomes
        self.calls: list[dict[str, Any]] = []
        self.closed = False

    def n_ctx(self) -> int:
        return 512

    def token_eos(self) -> int:
        return 2

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        outcome = self.outcomes.pop(0) if self.outcomes else None
        if outcome is not None:
            raise outcome
        return {
            "id": "x",
            "object": "chat.completion",
            "model": kwargs["model"],
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "Hi."}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11},
        }

    def close(self) -> None:
        self.closed = True


def scripted_engine(llama: ScriptedLlama, path: Path) -> tuple[Engine, LocalModels]:
    from jurist.engine.local.llama_cpp import LoadedLlama

    local = LocalModels(loader=lambda spec: LoadedLlama(llama, path))
    engine = Engine({"tiny": served_spec(path)}, max_concurrency=4, policy=FAST_RETRY, local=local)
    return engine, local


def test_failures_become_the_statuses_a_server_sends_so_the_client_retries_or_records_them(
    tmp_path: Path,
) -> None:
    pytest.importorskip("llama_cpp.server.types")
    context = ValueError("Requested tokens (900) exceed context window of 512")
    llama = ScriptedLlama([RuntimeError("llama_decode returned -1"), None, context])
    engine, local = scripted_engine(llama, tmp_path / "w.gguf")

    async def main() -> tuple[Any, RequestFailed]:
        try:
            client = engine.client("tiny")
            retried = await client.complete(MESSAGES, cache="off", max_tokens=16)  # a 500, then an answer
            with pytest.raises(RequestFailed) as refused:
                await client.complete(MESSAGES, cache="off", max_tokens=100)
            return retried, refused.value
        finally:
            await engine.aclose()

    retried, refused = asyncio.run(main())
    assert (retried.text, retried.prompt_tokens, retried.completion_tokens, retried.attempts) == (
        "Hi.",
        9,
        2,
        2,
    )
    # A prompt longer than the context: the server's 400, recorded at once, never retried.
    assert refused.status == 400 and refused.attempts == 1
    assert "maximum context length is 512 tokens" in str(refused) and "900 in the messages" in str(refused)
    assert len(llama.calls) == 3 and llama.calls[0]["model"] == "tiny"
    assert llama.closed and not local.loaded  # the engine's close freed the model


def test_one_load_per_alias_shared_by_sibling_engines(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp.server.types")
    from jurist.engine.local.llama_cpp import LoadedLlama

    loads: list[str] = []

    def loader(spec: ModelSpec) -> LoadedLlama:
        loads.append(spec.alias)
        return LoadedLlama(ScriptedLlama([]), tmp_path / "w.gguf")

    notes: list[str] = []
    local = LocalModels(notify=notes.append, loader=loader)
    first = Engine({"tiny": served_spec(tmp_path / "w.gguf")}, max_concurrency=4, local=local)
    second = first.sibling({"tiny": served_spec(tmp_path / "w.gguf")})

    async def main() -> None:
        try:
            await asyncio.gather(
                *(engine.client("tiny").complete(MESSAGES, cache="off") for engine in (first, second, first))
            )
        finally:
            await second.aclose()
            await first.aclose()

    asyncio.run(main())
    assert loads == ["tiny"] and notes == [
        "loading tiny in-process (llama.cpp: " + str(tmp_path / "w.gguf") + ")..."
    ]
    assert second.local is local


def test_a_model_that_cannot_load_fails_every_request_with_one_message(tmp_path: Path) -> None:
    local = LocalModels()
    spec = served_spec(tmp_path / "missing.gguf")

    async def main() -> list[str]:
        messages = []
        for _ in range(2):
            with pytest.raises(JuristError) as failed:
                await local.endpoint(spec)
            messages.append(str(failed.value))
        return messages

    first, again = asyncio.run(main())
    assert "missing.gguf does not exist" in first and again == first


# -- vLLM: SamplingParams and the reply, with a stand-in module (vLLM is not installed here) -------------


class Recorded:
    """A stand-in vLLM parameter class: keeps its keyword arguments."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


def fake_vllm(*, structured_outputs: bool = True) -> types.ModuleType:
    """A module with the names of vLLM that the translation uses (SamplingParams, the structured-output
    params of the installed generation, RequestOutputKind)."""
    vllm = types.ModuleType("vllm")
    params = types.ModuleType("vllm.sampling_params")
    params.RequestOutputKind = types.SimpleNamespace(FINAL_ONLY="final-only")  # type: ignore[attr-defined]
    if structured_outputs:
        params.StructuredOutputsParams = type("StructuredOutputsParams", (Recorded,), {})  # type: ignore[attr-defined]
    else:
        params.GuidedDecodingParams = type("GuidedDecodingParams", (Recorded,), {})  # type: ignore[attr-defined]
    vllm.SamplingParams = type("SamplingParams", (Recorded,), {})  # type: ignore[attr-defined]
    vllm.sampling_params = params  # type: ignore[attr-defined]
    return vllm


@pytest.fixture
def vllm_module(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = fake_vllm()
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", module.sampling_params)  # type: ignore[attr-defined]
    return module


def test_a_body_becomes_vllm_sampling_params(vllm_module: types.ModuleType) -> None:
    defaults = {"temperature": 0.6, "top_p": 0.9, "top_k": 20}  # the model's generation config
    body = {
        "model": "m",
        "messages": MESSAGES,
        "max_tokens": 4000,
        "temperature": 0.0,
        "seed": 3,
        "n": 4,
        "stop": "###",
        "logprobs": True,
        "top_logprobs": 5,
        "response_format": response_format("vllm"),
    }
    params = sampling_params(vllm_module, body, defaults, room=1000).kwargs
    assert params["temperature"] == 0.0 and params["top_p"] == 0.9 and params["top_k"] == 20
    assert (params["seed"], params["n"], params["stop"], params["logprobs"]) == (3, 4, ["###"], 5)
    assert params["max_tokens"] == 1000  # capped at what the context has left after the prompt
    assert params["structured_outputs"].kwargs == {"json": VERDICT_SCHEMA}
    assert params["output_kind"] == "final-only"
    bare = sampling_params(vllm_module, {"messages": MESSAGES}, {}, room=700).kwargs
    assert bare == {"max_tokens": 700, "output_kind": "final-only"}  # no max_tokens: the rest of the context
    configured = sampling_params(vllm_module, {"messages": MESSAGES}, {"max_tokens": 512}, room=700).kwargs
    assert configured["max_tokens"] == 512  # the generation config's limit, when the request sets none


def test_both_structured_output_dialects_and_older_vllm_releases() -> None:
    schema_by_llama_cpp = {"messages": MESSAGES, "response_format": response_format("llama_cpp")}
    newer = sampling_params(fake_vllm(), schema_by_llama_cpp, {}, room=10).kwargs
    assert newer["structured_outputs"].kwargs == {"json": VERDICT_SCHEMA}
    older = sampling_params(fake_vllm(structured_outputs=False), schema_by_llama_cpp, {}, room=10).kwargs
    assert older["guided_decoding"].kwargs == {"json": VERDICT_SCHEMA} and "structured_outputs" not in older
    any_json = {"messages": MESSAGES, "response_format": {"type": "json_object"}}
    assert sampling_params(fake_vllm(), any_json, {}, room=10).kwargs["structured_outputs"].kwargs == {
        "json_object": True
    }


def logprob(value: float, rank: int, token: str) -> types.SimpleNamespace:
    return types.SimpleNamespace(logprob=value, rank=rank, decoded_token=token)


def test_a_finished_vllm_output_is_an_openai_body_jurist_reads() -> None:
    first = types.SimpleNamespace(
        text="2",
        token_ids=[50],
        finish_reason="stop",
        logprobs=[{50: logprob(-0.2, 1, "2"), 51: logprob(-1.9, 2, "3"), 49: logprob(-3.0, 3, "1")}],
    )
    second = types.SimpleNamespace(
        text="3 because", token_ids=[51, 60], finish_reason="length", logprobs=None
    )
    final = types.SimpleNamespace(request_id="r1", prompt_token_ids=list(range(40)), outputs=[first, second])
    body = chat_body(final, "judge", tokenizer=None, top_logprobs=2)
    assert body["usage"] == {"prompt_tokens": 40, "completion_tokens": 3, "total_tokens": 43}
    parsed = _parse_completion(json.dumps(body).encode())
    assert (parsed.text, parsed.finish_reason, parsed.prompt_tokens, parsed.completion_tokens) == (
        "2",
        "stop",
        40,
        3,
    )
    assert [(c.text, c.finish_reason) for c in parsed.more] == [("3 because", "length")]
    top = parsed.logprobs["content"][0]["top_logprobs"]
    assert [(t["token"], t["logprob"]) for t in top] == [("2", -0.2), ("3", -1.9)]
    found = verdict_distribution(parsed.logprobs)  # the logprob judge reads it as it reads a server's
    assert found is not None and found[0]["A>B"] > found[0]["A=B"] > 0


def test_the_vllm_engine_gets_the_arguments_vllm_serve_would() -> None:
    spec = served_spec(Path("org/model"), kind="vllm", gpus=[2, 3], n_ctx=8192, args=["--max-num-seqs", "64"])
    assert engine_argv(spec) == [
        "--model",
        "org/model",
        "--tensor-parallel-size",
        "2",
        "--max-model-len",
        "8192",
        "--max-num-seqs",
        "64",
    ]
    assert engine_argv(served_spec(Path("m"), kind="vllm")) == ["--model", "m"]


def test_without_vllm_a_local_vllm_model_says_how_to_install_it() -> None:
    if "vllm" in sys.modules or __import__("importlib").util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here")
    with pytest.raises(JuristError, match=r"pip install 'jurist\[vllm\]'"):
        load_model(served_spec(Path("org/model"), kind="vllm"))


# -- the embedded model, for real (slow) ----------------------------------------------------------------


def jurist(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jurist", "run", "--no-progress", "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.slow
def test_jurist_run_local_limit_3_and_its_resume(tmp_path: Path) -> None:
    result = jurist(tmp_path, "--local", "--limit", "3")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "loading the embedded model in-process" in result.stderr and "starting" not in result.stderr
    run = tmp_path / "runs" / "starter"
    assert not (run / "logs" / f"{EMBEDDED_ALIAS}.log").exists()  # no server was started
    answers_path = run / "answers" / f"{EMBEDDED_ALIAS}.jsonl"
    answers = read_jsonl(answers_path)
    assert len(answers) == 3 and all(a["answer"].strip() for a in answers)
    assert all(a["usage"]["prompt_tokens"] > 0 and a["usage"]["completion_tokens"] > 0 for a in answers)
    judgments = read_jsonl(run / "judgments" / EMBEDDED_ALIAS / f"{EMBEDDED_ALIAS}.jsonl")
    assert len(judgments) == 3
    assert all(g["label"] in {"A>>B", "A>B", "A=B", "B>A", "B>>A"} for j in judgments for g in j["games"])
    board = json.loads((run / "leaderboard.json").read_text())
    assert {row["model"] for row in board} == {"reference", EMBEDDED_ALIAS}
    record = json.loads((run / "run.json").read_text())
    assert record["local"] is True and record["status"] == "finished"
    # Resume after losing one answer: only that answer is asked again (its judgment stands: the same text).
    rewrite_jsonl_atomic(answers_path, answers[:1] + answers[2:])
    again = jurist(tmp_path, "--local", "--limit", "3")
    assert again.returncode == 0, again.stderr[-3000:]
    rows = json.loads((run / "run.json").read_text())["ledger"]["rows"]
    assert [(row["phase"], row["requests"]) for row in rows if row["requests"]] == [("generate", 1)]
    again_answers = read_jsonl(answers_path)
    assert sorted(a["uid"] for a in again_answers) == sorted(a["uid"] for a in answers)
    assert {a["uid"]: a["answer"] for a in again_answers} == {a["uid"]: a["answer"] for a in answers}


@pytest.mark.slow
def test_local_answers_equal_a_server_runs_at_temperature_0(tmp_path: Path) -> None:
    texts: dict[str, dict[str, str]] = {}
    for how, extra in (("server", []), ("local", ["--local"])):
        out = tmp_path / how
        result = jurist(tmp_path, *extra, "--limit", "8", "--inference-only", "--out", str(out))
        assert result.returncode == 0, result.stderr[-3000:]
        texts[how] = {a["uid"]: a["answer"] for a in read_jsonl(out / "answers" / f"{EMBEDDED_ALIAS}.jsonl")}
    assert len(texts["local"]) == 8 and texts["local"] == texts["server"]


@pytest.mark.slow
def test_a_prompt_longer_than_the_context_is_reported_per_item_and_the_model_still_answers() -> None:
    spec = embedded_model_spec()
    assert spec.serve is not None and spec.serve.n_ctx == EMBEDDED_N_CTX
    small = spec.model_copy(update={"serve": spec.serve.model_copy(update={"n_ctx": 256})})
    engine = Engine({EMBEDDED_ALIAS: small}, max_concurrency=2, local=LocalModels())

    async def main() -> tuple[RequestFailed, str, int | None]:
        try:
            client = engine.client(EMBEDDED_ALIAS)
            with pytest.raises(RequestFailed) as too_long:
                await client.complete([{"role": "user", "content": "word " * 400}], cache="off")
            fine = await client.complete([{"role": "user", "content": "What is 2+2?"}], cache="off")
            return too_long.value, fine.text, client.context_length
        finally:
            await engine.aclose()

    refused, text, context = asyncio.run(main())
    assert refused.status == 400 and refused.attempts == 1 and "maximum context length is 256" in str(refused)
    assert text.strip() and context == 256
