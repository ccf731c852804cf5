"""``--local``: models with a ``serve:`` block run in this process instead of behind a server jurist starts.

:class:`LocalModels` is the in-process counterpart of :class:`~jurist.engine.ServerPool`: it loads a
served model on first use, once per alias (in a worker thread, so the event loop keeps going; sibling
engines of ``--tasks`` share it), and hands the client an endpoint that answers the same request bodies
with the same reply bodies as a server, so caching, retries, resume and run artifacts do not change. One
module per kind: ``llama_cpp.py`` (llama-cpp-python's ``Llama``, CPU) and ``vllm.py`` (vLLM's async
engine, GPU); each imports its library only when a model of its kind is loaded.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from jurist.config import ModelSpec
from jurist.engine.local.base import LoadedModel, LocalEndpoint
from jurist.errors import JuristError

__all__ = ["LocalEndpoint", "LocalModels", "load_model"]

log = logging.getLogger("jurist.local")


def load_model(spec: ModelSpec) -> LoadedModel:
    """Load a served spec's weights in this process (blocking), by its serve kind."""
    assert spec.serve is not None
    kind: str = spec.serve.kind
    if kind == "llama.cpp":
        from jurist.engine.local.llama_cpp import load_llama

        return load_llama(spec)
    if kind == "vllm":
        from jurist.engine.local.vllm import load_vllm

        return load_vllm(spec)
    raise JuristError(f"model {spec.alias!r}: serve kind {kind!r} cannot run in-process (--local)")


def loading_message(spec: ModelSpec) -> str:
    """What a runner shows while a model loads."""
    from jurist.engine.local.embedded import EMBEDDED_ALIAS

    assert spec.serve is not None
    if spec.alias == EMBEDDED_ALIAS:
        return f"loading the embedded model in-process ({spec.serve.kind}, SmolLM2-135M-Instruct)..."
    return f"loading {spec.alias} in-process ({spec.serve.kind}: {spec.serve.model})..."


class LocalModels:
    """The in-process models of one engine and its siblings, by alias."""

    def __init__(
        self,
        *,
        notify: Callable[[str], None] | None = None,
        loader: Callable[[ModelSpec], LoadedModel] = load_model,
    ) -> None:
        self.notify = notify
        self._loader = loader
        self._locks: dict[str, asyncio.Lock] = {}
        self._loaded: dict[str, LoadedModel] = {}
        self._failed: dict[str, str] = {}
        self._guard = threading.Lock()  # close() may run in another thread than endpoint()

    @property
    def loaded(self) -> dict[str, LoadedModel]:
        with self._guard:
            return dict(self._loaded)

    async def endpoint(self, spec: ModelSpec) -> LocalEndpoint:
        """An endpoint on the spec's model, loaded now if this is the alias's first request."""
        return (await self._model(spec)).endpoint(spec.model)

    async def _model(self, spec: ModelSpec) -> LoadedModel:
        alias = spec.alias
        lock = self._locks.setdefault(alias, asyncio.Lock())
        async with lock:  # many first requests: one loads, the others wait for it
            model = self._loaded.get(alias)
            if model is not None:
                return model
            if alias in self._failed:
                raise JuristError(self._failed[alias])
            if self.notify is not None:
                self.notify(loading_message(spec))
            try:
                model = await asyncio.to_thread(self._loader, spec)
            except JuristError as exc:
                self._failed[alias] = str(exc)
                raise
            except Exception as exc:
                problem = f"{type(exc).__name__}: {exc}"
                self._failed[alias] = f"model {alias!r} could not be loaded in-process: {problem}"
                raise JuristError(self._failed[alias]) from None
            with self._guard:
                self._loaded[alias] = model
            return model

    def close(self) -> None:
        """Free every loaded model; safe to call again, from any thread, with no loop."""
        with self._guard:
            models = list(self._loaded.values())
            self._loaded.clear()
        for model in models:
            try:
                model.close()
            except Exception:  # noqa: BLE001 - keep closing the others
                log.exception("could not close an in-process model")

    async def aclose(self) -> None:
        """:meth:`close` without blocking the event loop (a generation may be finishing)."""
        if self._loaded:
            await asyncio.to_thread(self.close)
