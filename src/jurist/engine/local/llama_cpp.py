"""A GGUF model in this process through llama-cpp-python's ``Llama``, set up exactly as its server would be.

Answers must not depend on whether the model ran in a server or in-process, so both halves come from
llama-cpp-python's own server code: the ``serve:`` block becomes the same command line the managed server
gets (:class:`~jurist.engine.servers.llama_cpp.LlamaCppServer`), parsed by the server's own argument
parser into its ``ModelSettings`` and loaded by its own loader (same chat template from the GGUF, n_ctx,
threads, batch sizes); and each request body is read by the server's request model, so a field jurist does
not send gets the server's default (temperature 0.8, top_k 40, repeat_penalty 1.1...), not ``Llama``'s.
``Llama`` is not thread-safe: one generation at a time, in a worker thread, so the event loop keeps going.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import threading
from pathlib import Path
from typing import Any

from jurist.config import ModelSpec
from jurist.engine.local.base import LocalEndpoint, LocalRequestError, context_exceeded
from jurist.engine.servers.llama_cpp import LLAMA_CPP_HINT, LlamaCppServer
from jurist.errors import JuristError

_CONTEXT_ERROR = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")
# Fields of the body the server does not pass on to Llama.create_chat_completion (it answers one choice).
_NOT_PASSED = {"n", "logit_bias_type", "user", "min_tokens"}


def _server_modules() -> tuple[Any, Any, Any]:
    """llama-cpp-python's server settings, argument parsing and request types, or the install hint."""
    try:
        from llama_cpp.server import cli, settings, types
    except ImportError:
        raise JuristError(f"--local needs llama-cpp-python with its server extra: {LLAMA_CPP_HINT}") from None
    return settings, cli, types


def model_settings(spec: ModelSpec) -> Any:
    """The server's ``ModelSettings`` for the spec: its own parser over the managed server's arguments."""
    settings, cli, _ = _server_modules()
    server = LlamaCppServer.from_spec(spec)
    server.check_installed()  # the same one-line errors as a server run: no package, no file
    argv = server.command()
    argv = argv[argv.index("--model") :]  # drop "python -m llama_cpp.server"; host and port are ignored
    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    cli.add_args_from_model(parser, settings.Settings)
    try:
        parsed, unknown = parser.parse_known_args(argv)
    except argparse.ArgumentError as exc:
        raise JuristError(f"model {spec.alias!r}: serve.args: {exc}") from None
    if unknown:
        options = " ".join(unknown)
        raise JuristError(f"model {spec.alias!r}: serve.args: not a llama.cpp server option: {options}")
    # verbose: llama.cpp's load log and per-request timings would print over the progress display.
    return cli.parse_model_from_args(settings.ModelSettings, parsed).model_copy(update={"verbose": False})


def llama_call(request: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of ``Llama.create_chat_completion`` for a request body, as the server builds them.

    A body the server would refuse is refused with its status: 422 for an invalid body, 400 for what an
    in-process call cannot do (streaming, token-string logit biases).
    """
    _, _, types = _server_modules()
    from pydantic import ValidationError

    try:
        body = types.CreateChatCompletionRequest.model_validate(request)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise LocalRequestError(422, f"invalid request body: {where}: {first.get('msg')}") from None
    if body.stream:
        raise LocalRequestError(400, "stream is not supported in-process")
    if body.logit_bias is not None and body.logit_bias_type == "tokens":
        raise LocalRequestError(400, "logit_bias_type 'tokens' is not supported in-process")
    kwargs: dict[str, Any] = body.model_dump(exclude=_NOT_PASSED)
    if body.grammar is not None:
        from llama_cpp.llama_grammar import LlamaGrammar

        kwargs["grammar"] = LlamaGrammar.from_string(body.grammar)
    if body.min_tokens > 0:
        kwargs["min_tokens"] = body.min_tokens  # made a logits processor by LoadedLlama, which knows EOS
    return kwargs


class LoadedLlama:
    """One ``Llama``, answering one request at a time: the async lock queues requests in the event loop
    (not in worker threads), the thread lock keeps a request whose caller gave up (a timeout, Ctrl-C) from
    overlapping the next one, or :meth:`close`."""

    def __init__(self, llama: Any, path: Path) -> None:
        self.llama = llama
        self.path = path
        self.context_length = int(llama.n_ctx())
        self._turn = asyncio.Lock()
        self._busy = threading.Lock()
        self._closed = False

    def endpoint(self, model_name: str) -> LocalEndpoint:
        return LlamaEndpoint(self, model_name)

    def _generate(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        with self._busy:
            if self._closed:
                raise RuntimeError("the model was closed")
            min_tokens = kwargs.pop("min_tokens", 0)
            if min_tokens:
                import llama_cpp

                kwargs["logits_processor"] = llama_cpp.LogitsProcessorList(
                    [llama_cpp.MinTokensLogitsProcessor(min_tokens, self.llama.token_eos())]
                )
            try:
                reply: dict[str, Any] = self.llama.create_chat_completion(**kwargs)
            except ValueError as exc:
                match = _CONTEXT_ERROR.search(str(exc))
                if match is None:
                    raise
                context, prompt = int(match.group(2)), int(match.group(1))
                raise context_exceeded(context, prompt, kwargs.get("max_tokens")) from None
            return reply

    async def generate(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        async with self._turn:
            return await asyncio.to_thread(self._generate, kwargs)

    def close(self) -> None:
        """Free the weights once the generation under way, if any, has ended."""
        with self._busy:
            if not self._closed:
                self._closed = True
                self.llama.close()


class LlamaEndpoint(LocalEndpoint):
    """The chat-completions "endpoint" of a :class:`LoadedLlama`."""

    kind = "llama.cpp"

    def __init__(self, model: LoadedLlama, model_name: str) -> None:
        super().__init__(model_name, str(model.path), model.context_length)
        self._model = model

    async def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        return await self._model.generate(llama_call(request))


def load_llama(spec: ModelSpec) -> LoadedLlama:
    """Load the spec's GGUF as the managed server would (blocking: call it in a worker thread)."""
    settings = model_settings(spec)
    from llama_cpp.server.model import LlamaProxy

    return LoadedLlama(LlamaProxy.load_llama_from_model_settings(settings), Path(settings.model))
