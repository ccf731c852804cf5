"""What every in-process model shares: the endpoint seam and the mapping of failures onto HTTP statuses.

An in-process model takes the chat-completions body the wire layer would send and answers with the
``(status, body, Retry-After)`` triple of :meth:`EndpointClient.post`, so the client's cache, limits,
retries, failure records and accounting are those of a server run. Failures become the statuses a server
would send: 400 with OpenAI's ``context_length_exceeded`` for a prompt that does not fit (recorded per
item, not retried), 4xx for a request the model cannot take, 500 for anything else (retried).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Protocol

import aiohttp

from jurist.engine.wire.transport import EndpointClient

Reply = tuple[int, bytes, str | None]


class LocalRequestError(Exception):
    """A request an in-process model refuses, with the status and error ``code`` a server would send."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def context_exceeded(context: int, prompt_tokens: int, max_tokens: int | None) -> LocalRequestError:
    """The 400 a server answers to a prompt longer than its context (OpenAI's wording and code)."""
    asked = prompt_tokens + (max_tokens or 0)
    return LocalRequestError(
        400,
        f"This model's maximum context length is {context} tokens. However, you requested {asked} tokens "
        f"({prompt_tokens} in the messages, {max_tokens or 0} in the completion). "
        "Please reduce the length of the messages or completion.",
        "context_length_exceeded",
    )


def error_reply(status: int, message: str, code: str | None = None) -> Reply:
    """An OpenAI-shaped error body with its status."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    error: dict[str, Any] = {"message": message, "type": kind}
    if code is not None:
        error["code"] = code
    return status, json.dumps({"error": error}).encode(), None


class LocalEndpoint(EndpointClient):
    """An endpoint whose "server" is a model in this process; subclasses say how to :meth:`answer`."""

    kind = "local"

    def __init__(self, model_name: str, where: str, context_length: int | None) -> None:
        super().__init__(f"local:{self.kind}:{where}", None, model_name, 1)
        self.context_length = context_length
        """Tokens the model can hold, prompt and completion together (llama.cpp ``n_ctx``, vLLM
        ``max_model_len``): what a server run reads from the server."""

    async def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The chat.completion body for one request body; :class:`LocalRequestError` when refused."""
        raise NotImplementedError

    async def post(self, body: bytes, timeout: aiohttp.ClientTimeout) -> Reply:
        try:
            request = json.loads(body)
        except ValueError as exc:
            return error_reply(400, f"the request body is not JSON: {exc}")
        if not isinstance(request, dict):
            return error_reply(400, "the request body is not a JSON object")
        try:
            reply = await asyncio.wait_for(self.answer(request), timeout.total)
        except LocalRequestError as exc:
            return error_reply(exc.status, str(exc), exc.code)
        except (asyncio.TimeoutError, TimeoutError):
            raise  # the client's timeout: retried as such
        except Exception as exc:  # noqa: BLE001 - a server would answer 500; the client retries it
            return error_reply(500, f"{type(exc).__name__}: {exc}")
        return 200, json.dumps(reply).encode(), None

    async def aclose(self) -> None:
        """Nothing to close: the model belongs to :class:`jurist.engine.local.LocalModels`."""


class LoadedModel(Protocol):
    """A model loaded in this process (one per alias), shared by the endpoints of the engines using it."""

    def endpoint(self, model_name: str) -> LocalEndpoint: ...

    def close(self) -> None: ...
