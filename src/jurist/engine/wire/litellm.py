"""Optional provider adapters behind the engine's one interface: LiteLLM, for APIs with no OpenAI dialect.

A LiteLLM "endpoint" takes the same request body as an HTTP endpoint and answers with the same
``(status, body, Retry-After)`` triple, so the client's limits, throttle, retries and usage accounting apply
unchanged: litellm's exceptions are mapped back onto what the wire would have said (429, 5xx and 4xx
statuses; timeouts and connection errors as such). litellm is heavy (hundreds of MB, ~2.7 s to import), so
it is imported only when a models-file entry says ``api_type: litellm``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from jurist.config import ModelSpec
from jurist.engine.wire.transport import EndpointClient, RequestFailed
from jurist.errors import JuristError

LITELLM_HINT = "pip install 'jurist[litellm]'"


LITELLM_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # use the bundled cost map: no GitHub fetch (and its timeout)
    "LITELLM_LOG": "ERROR",  # its own log level: jurist reports failures itself, once
}
"""Environment litellm reads at import time; set only where the user has not set it."""

LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
"""litellm's loggers: each gets its own stream handler *and* propagates to the root, so every warning
would print twice (once in its format, once in jurist's)."""


def import_litellm() -> Any:
    """The litellm module, quiet and offline-safe, or a one-line error saying how to install it.

    Offline, a bare ``import litellm`` spends seconds fetching its model-cost map from GitHub, and its
    warnings print twice; both are settled here, before and right after the import (the settings are
    litellm's own documented switches: ``LITELLM_LOCAL_MODEL_COST_MAP``, ``telemetry``,
    ``suppress_debug_info``).
    """
    import logging
    import os

    for key, value in LITELLM_ENV.items():
        os.environ.setdefault(key, value)
    try:
        import litellm
    except ImportError:
        raise JuristError(
            "api_type: litellm needs the litellm package (so do litellm/PROVIDER/NAME model strings), "
            f"which is not installed: {LITELLM_HINT}"
        ) from None
    litellm.suppress_debug_info = True  # its "Give Feedback / Get Help" banner on every exception
    litellm.telemetry = False  # no usage pings to litellm's servers
    for name in LITELLM_LOGGERS:  # one handler: jurist's (the root's); never litellm's as well
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            if type(handler) is logging.StreamHandler:
                logger.removeHandler(handler)
    return litellm


def _as_dict(response: Any) -> Any:
    """litellm's ModelResponse (pydantic) as plain JSON-able data."""
    if isinstance(response, dict):
        return response
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        return dump()
    return dict(response)


def _retry_after(exc: Exception) -> str | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        value = headers.get("retry-after") if headers is not None else None
    except Exception:  # noqa: BLE001 - a mocked or odd response object; the header is only a hint
        return None
    return str(value) if value is not None else None


def _is_instance(exc: Exception, litellm: Any, *names: str) -> bool:
    classes = tuple(cls for name in names if isinstance(cls := getattr(litellm, name, None), type))
    return bool(classes) and isinstance(exc, classes)


class LiteLLMEndpoint(EndpointClient):
    """One ``litellm.acompletion`` target (model string, optional api_base and key)."""

    def __init__(self, api_base: str | None, api_key: str | None, model_name: str, connections: int) -> None:
        self._litellm = import_litellm()
        super().__init__(api_base or "litellm:", api_key, model_name, connections)
        self._api_base = api_base
        self._api_key = api_key

    async def post(self, body: bytes, timeout: aiohttp.ClientTimeout) -> tuple[int, bytes, str | None]:
        kwargs: dict[str, Any] = json.loads(body)
        if self._api_base:
            kwargs["api_base"] = self._api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        kwargs["num_retries"] = 0  # retries are the engine's, with its backoff and accounting
        if timeout.total:
            kwargs["timeout"] = timeout.total
        try:
            response = await asyncio.wait_for(self._litellm.acompletion(**kwargs), timeout.total)
        except (asyncio.TimeoutError, TimeoutError):
            raise
        except Exception as exc:  # noqa: BLE001 - every provider error is mapped below
            return self._error_response(exc)
        return 200, json.dumps(_as_dict(response), default=str).encode(), None

    def _error_response(self, exc: Exception) -> tuple[int, bytes, str | None]:
        """What the wire would have said: a status for the client to classify, or a raised transport error."""
        litellm = self._litellm
        message = f"{type(exc).__name__}: {exc}"
        if _is_instance(exc, litellm, "Timeout"):
            raise asyncio.TimeoutError(message)
        if _is_instance(exc, litellm, "APIConnectionError"):
            raise ConnectionError(message)  # an OSError: retried as a connection error
        status = getattr(exc, "status_code", None)
        if _is_instance(exc, litellm, "RateLimitError"):
            status = 429
        if isinstance(status, int) and status >= 400:
            payload = json.dumps({"error": {"message": message}}).encode()
            return status, payload, _retry_after(exc)
        # No status at all (e.g. an unknown provider prefix): nothing a retry could fix.
        raise RequestFailed(f"litellm: {message}", kind="provider_error")

    async def aclose(self) -> None:
        """Nothing to close: litellm manages its own HTTP clients."""


def litellm_endpoints(spec: ModelSpec) -> list[EndpointClient]:
    """The spec's endpoints as LiteLLM targets; without an ``api_base`` litellm routes by model prefix."""
    return [
        LiteLLMEndpoint(ep.api_base, ep.api_key, ep.model_name or spec.model, spec.parallel)
        for ep in spec.resolved_endpoints()
    ]
